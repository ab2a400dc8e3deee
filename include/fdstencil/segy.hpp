// SEG-Y files through libsegyio: velocity models in and out, shot records out. Optional at build
// time: without libsegyio (Debian libsegyio-dev) available() is false and every function that
// reads or writes a file throws Error(unsupported) saying how to get it; the conversions and
// checks below work either way.
//
// Conventions (docs/wave.md, "SEG-Y"): a model's samples run down z, its inlines along y and its
// crosslines along x; a 2D model is one line, its traces along x. The z spacing is the sample
// interval times z_unit (metres per unit of the "microseconds" field: depth models written by
// segyio.tools.from_array or Madagascar store millimetres there), the horizontal spacings the
// distances between neighbouring traces' CDP coordinates (bytes 181-188, scaled by byte 71).
// Files are big-endian, fixed-length SEG-Y rev 0 or 1; writing is IEEE float (format 5), to a
// temporary name that is renamed into place.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "fdstencil/wave.hpp"

namespace fdstencil::segy {

// Whether this build has libsegyio.
bool available();

// The z unit of depth models: the sample interval field read as millimetres.
inline constexpr double kDefaultZUnit = 1e-3;

// A regular grid of samples as a SEG-Y file holds it.
struct Grid {
  int dim = 3;                     // 2: one line of traces; 3: inlines x crosslines
  int64_t nz = 0, ny = 1, nx = 0;  // samples per trace; inlines (1 in 2D); traces per line
  double dz = 0, dy = 0, dx = 0;   // metres; 0 where read_model could not tell (ReadOptions::need_spacing)
  std::vector<float> v;  // C order (nz, ny, nx): sample k of the trace at (j, i) is v[(k ny + j) nx + i]

  // What read_model found, for a person to check (write_model ignores these).
  int format = 5;  // the sample format code: 1 IBM float, 2 int32, 3 int16, 5 IEEE float, 8 int8
  int64_t traces = 0;
  // The trace order: 3D "inline-sorted", "crossline-sorted" or "unsorted"; 2D "line order",
  // "unsorted", or "file order" when the traces carry no line numbers.
  std::string order;
  int il_first = 0, il_last = 0, il_step = 0;  // inline numbers (y); 0 when the headers have none
  int xl_first = 0, xl_last = 0, xl_step = 0;  // crossline numbers (x)
  int sample_interval = 0;                     // the raw field, in units of z_unit
  bool coordinates = false;  // the CDP coordinates were set (the horizontal spacing came from them)
  double x0 = 0, y0 = 0;     // CDP coordinates of the first grid point (j, i) = (0, 0), metres
};

struct ReadOptions {
  // The user's grid spacing in metres (--spacing): 0 takes every spacing from the headers; given,
  // it fills in what the headers lack, and a spacing they do state must agree within 1e-3
  // (relative) or read_model throws naming both.
  double spacing = 0;
  double z_unit = kDefaultZUnit;           // metres per unit of the sample interval field
  int iline_byte = 189, xline_byte = 193;  // the SEG-Y rev 1 positions of the line numbers
  // false: a spacing neither the headers nor `spacing` give is left 0 rather than refused (to
  // show a file's geometry, or convert it to .npy, without knowing it).
  bool need_spacing = true;
};

// Reads a 2D or 3D velocity model. A file is 2D when it holds one line (one inline number, or one
// crossline number), or when its inline and crossline numbers are all zero (its traces then run
// along x in file order); else it is a regular inline x crossline grid in any trace order, the
// line numbers evenly stepped. Throws Error(io) for a file that cannot be read or is truncated,
// Error(invalid_argument) for contents that are not a regular model, naming the trace and the
// header bytes concerned.
Grid read_model(const std::filesystem::path& path, const ReadOptions& options = {});

// The solver's model: one spacing h on every axis (dz, dy and dx must agree within 1e-3
// relative; a 2D grid's dy does not count), validated. Throws Error(invalid_argument).
wave::Model to_model(Grid grid);
// A model's grid: spacing h on every axis, lines numbered from 1, the first point at (0, 0).
Grid from_model(const wave::Model& model);

// Writes a velocity model in IEEE float: 2D as one inline (1) of crosslines 1..nx, 3D inline-sorted
// with inlines 1..ny and crosslines 1..nx, the CDP coordinates (i dx, j dy) from the first point,
// the sample interval dz / z_unit (a whole number, 1..65535). Throws Error(invalid_argument) for
// a grid SEG-Y cannot hold, Error(io) when writing fails (nothing is left behind).
void write_model(const std::filesystem::path& path, const Grid& grid, double z_unit = kDefaultZUnit);

// One shot's traces at the receivers. Positions are metres from the model's first grid point
// (z depth, y, x; y = 0 in 2D).
struct ShotRecord {
  int field_record = 1;       // the shot's number (FieldRecord, bytes 9-12)
  double dt = 0;              // s: a whole number of microseconds, at most 65535
  int64_t ns = 0;             // samples per trace, at most 65535
  std::vector<float> traces;  // (receivers, ns), row-major
  wave::Point source;
  std::vector<wave::Point> receivers;
  int dim = 3;
};

// Writes the record in IEEE float, one trace per receiver, with the source and receiver positions
// at centimetre precision (docs/wave.md lists the header bytes). Throws Error(invalid_argument)
// for a record SEG-Y cannot hold (dt, ns, coordinates beyond 32 bits), Error(io) when writing fails.
void write_shot(const std::filesystem::path& path, const ShotRecord& record);

// The checks write_shot makes on dt and ns, for a caller that wants them before a long run:
// throws Error(invalid_argument) naming `what` (the flag that set the value).
void check_record_timing(double dt, int64_t ns, const std::string& what);

}  // namespace fdstencil::segy
