// fdstencil: the command-line tool. Exit codes: 0 success, 1 a failure of the machine or of a
// verification, 2 bad input or a request this machine cannot serve (usage, sizes, files, no GPU),
// so scripts can tell them apart.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "commands.hpp"
#include "fdstencil/error.hpp"
#include "fdstencil/version.hpp"

int main(int argc, char** argv) {
  CLI::App app{"fdstencil: high-order finite-difference stencils for seismic wave propagation"};
  app.require_subcommand(1);
  app.set_version_flag("--version", FDSTENCIL_VERSION);
  using namespace fdstencil::cli;
  const std::vector<std::string> command_line(argv, argv + argc);
  const Action actions[] = {add_info(app),
                            add_coeffs(app),
                            add_apply(app),
                            add_bench(app),
                            add_tune(app),
                            add_wave(app, command_line),
                            add_segy(app),
                            add_gradient(app, command_line),
                            add_rtm(app, command_line),
                            add_born(app, command_line)};
  const char* names[] = {"info", "coeffs", "apply",    "bench", "tune",
                         "wave", "segy",   "gradient", "rtm",   "born"};
  // CLI11 reports an unknown command only as "a subcommand is required": name it instead.
  if (argc > 1 && argv[1][0] != '-') {
    const std::string first = argv[1];
    if (std::find(std::begin(names), std::end(names), first) == std::end(names)) {
      std::fprintf(stderr,
                   "fdstencil: error: unknown command '%s' (valid: info, coeffs, apply, bench, tune, wave, "
                   "segy, gradient, rtm, born)\n",
                   first.c_str());
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "fdstencil: error: %s\n", e.what());
    std::fprintf(stderr, "run 'fdstencil --help' or 'fdstencil <command> --help' for usage\n");
    return 2;
  }
  try {
    for (size_t i = 0; i < std::size(actions); ++i)
      if (app.got_subcommand(names[i])) return actions[i]();
    return 2;
  } catch (const fdstencil::Error& e) {
    std::fprintf(stderr, "fdstencil: error: %s\n", e.what());
    return fdstencil::is_input_error(e.kind()) ? 2 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fdstencil: internal error: %s\n", e.what());
    return 1;
  }
}
