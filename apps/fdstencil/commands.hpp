// The subcommands of the fdstencil tool; each lives in its own cmd_*.cpp.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <functional>
#include <string>
#include <vector>

#include "fdstencil/layout.hpp"
#include "fdstencil/segy.hpp"
#include "fdstencil/stencil.hpp"

namespace fdstencil::cli {

// Each registers its subcommand on `app` and returns the action to run when it was chosen.
using Action = std::function<int()>;
Action add_info(CLI::App& app);
Action add_coeffs(CLI::App& app);
Action add_apply(CLI::App& app);
Action add_bench(CLI::App& app);
Action add_tune(CLI::App& app);
// `argv` is the whole command line, which the wave summary records.
Action add_wave(CLI::App& app, const std::vector<std::string>& argv);
Action add_segy(CLI::App& app);
// The FWI gradient and the RTM image of a recorded shot or a survey, and Born modelling
// (cmd_imaging.cpp).
Action add_gradient(CLI::App& app, const std::vector<std::string>& argv);
Action add_rtm(CLI::App& app, const std::vector<std::string>& argv);
Action add_born(CLI::App& app, const std::vector<std::string>& argv);

// SEG-Y, shared by `segy` and `wave` (cmd_segy.cpp). The reading flags as typed (--spacing,
// --segy-z-unit, --segy-inline-byte, --segy-crossline-byte; empty: the default) turned into
// segy::ReadOptions, or Error(invalid_argument) naming the flag.
segy::ReadOptions segy_read_options(const std::string& spacing, const std::string& z_unit,
                                    const std::string& iline_byte, const std::string& xline_byte);
// A grid's geometry as `segy info --json` prints it and a wave run's model entry records it.
nlohmann::json segy_geometry_json(const segy::Grid& grid, const segy::ReadOptions& options);
// Whether a path names a SEG-Y file: .sgy or .segy, any case.
bool is_segy_path(const std::string& path);

// "a,b,c" -> three numbers; throws Error(invalid_argument) naming `what`.
Extents parse_extents(const std::string& text, const char* what);
Spacing parse_spacing(const std::string& text);
std::vector<std::string> split(const std::string& text, char sep);
int parse_int(const std::string& text, const char* what);
// Throws Error(invalid_argument) unless `name` is auto, cuda, cpu or reference.
void check_backend_name(const std::string& name);

// JSON files: written to a temporary name and renamed, so a failure never leaves a partial file;
// check_writable fails (Error(io)) before the work that would fill one. json_file.cpp.
void check_writable(const std::string& path);
void write_json_file(const std::string& path, const nlohmann::json& doc);

// Whether this binary has the CUDA backend and the machine a usable GPU.
bool gpu_available();

}  // namespace fdstencil::cli
