// SEG-Y files: velocity models in and out, shot records out, any file's traces in, all
// fdstencil's own code (both byte orders, every sample format of rev 2, extended textual
// headers). libsegyio is not needed; the tests use it, where installed, as a second reader.
//
// Conventions (docs/wave.md, "SEG-Y"): a model's samples run down z, its inlines along y and its
// crosslines along x; a 2D model is one line, its traces along x. The z spacing is the sample
// interval times z_unit (metres per unit of the "microseconds" field: depth models written by
// segyio.tools.from_array or Madagascar store millimetres there), the horizontal spacings the
// distances between neighbouring traces' CDP coordinates (bytes 181-188, scaled by byte 71).
// Files are fixed-length SEG-Y rev 0, 1 or 2; writing is IEEE float (format 5), big-endian rev 1
// or little-endian rev 2, the textual header in EBCDIC, to a temporary name renamed into place.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "fdstencil/wave.hpp"

namespace fdstencil::segy {

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
  std::string byte_order = "big-endian";  // or "little-endian"
  int revision = 0;                       // the SEG-Y revision's major number (byte 3501)
  // Headers that disagree and the choice made ("trace 0's header says 462 samples ...").
  std::vector<std::string> warnings;
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
// line numbers evenly stepped. A pre-stack file is refused, saying so. Read as read_traces reads.
// Throws Error(io) for a file that cannot be read or is truncated,
// Error(invalid_argument) for contents that are not a regular model, naming the trace and the
// header bytes concerned.
Grid read_model(const std::filesystem::path& path, const ReadOptions& options = {});

// What one trace's headers say about where it was recorded (rev 1 positions), metres and seconds.
struct TraceGeometry {
  int32_t field_record = 0, channel = 0, cdp = 0;  // bytes 9, 13, 21
  int32_t il = 0, xl = 0;                          // the line numbers at ReadOptions' bytes
  double offset = 0;                               // bytes 37-40, as written (no scalar applies)
  double sx = 0, sy = 0, gx = 0, gy = 0;           // source and receiver (bytes 73-88), scaled by byte 71
  double cdp_x = 0, cdp_y = 0;                     // bytes 181-188, scaled by byte 71
  double source_depth = 0, group_elevation = 0;    // bytes 49, 41, scaled by byte 69
  double delay = 0;                                // s: bytes 109-110 (ms) scaled by bytes 215-216
  double coordinate_unit = 1;                      // metres per unit of the coordinates (the scalar's)
};

// A file's traces in file order, whatever they are: a shot gather, a pre-stack or post-stack
// volume, a model.
struct Traces {
  int format = 0;
  std::string byte_order;
  int revision = 0;
  int64_t ns = 0;
  int64_t sample_interval = 0;  // the raw field: microseconds for time data, 0 when unknown
  int extended_text_headers = 0;
  // "pre-stack" (line numbers shared by several traces, or traces without line numbers whose
  // source and receiver positions differ) or "post-stack", and why.
  std::string kind, kind_reason;
  std::vector<TraceGeometry> geometry;
  std::vector<float> samples;  // (traces, ns), row-major; empty when read headers only
  std::vector<std::string> warnings;
};

// Reads every trace of a SEG-Y file as segyio reads it: either byte order (the constant at bytes
// 3297-3300, else the sample format code), every sample format of rev 2 but the obsolete 4,
// extended textual headers (a count or -1), rev 2's additional trace headers, and the samples per
// trace and sample interval where the headers disagree (warnings name the bytes and the choice).
// Throws Error(io) for a file that cannot be read or is cut short, Error(invalid_argument) for
// headers no reading of the standard makes sense of.
Traces read_traces(const std::filesystem::path& path, const ReadOptions& options = {},
                   bool headers_only = false);

// A sample format code's name ("IBM float", "int24", ...); "" for a code rev 2 does not define.
const char* sample_format_name(int code);

// The solver's model: one spacing h on every axis (dz, dy and dx must agree within 1e-3
// relative; a 2D grid's dy does not count), validated. Throws Error(invalid_argument).
wave::Model to_model(Grid grid);
// A model's grid: spacing h on every axis, lines numbered from 1, the first point at (0, 0).
Grid from_model(const wave::Model& model);

// Writes a velocity model in IEEE float: 2D as one inline (1) of crosslines 1..nx, 3D inline-sorted
// with inlines 1..ny and crosslines 1..nx, the CDP coordinates (i dx, j dy) from the first point,
// the sample interval dz / z_unit (a whole number, 1..65535). Throws Error(invalid_argument) for
// a grid SEG-Y cannot hold, Error(io) when writing fails (nothing is left behind).
// little_endian: a rev 2 file in that byte order (the constant 16909060 at bytes 3297-3300).
// title: what the values are, the textual header's first line (upper case: EBCDIC readers show it
// as written), followed by "WRITTEN BY FDSTENCIL <version>".
void write_model(const std::filesystem::path& path, const Grid& grid, double z_unit = kDefaultZUnit,
                 bool little_endian = false, const std::string& title = "VELOCITY MODEL (M/S)");
// The checks write_model makes on a grid's extents and spacings (not its values), for a caller that
// wants them before a long run: throws Error(invalid_argument) starting with `what`.
void check_model_layout(const Grid& grid, double z_unit, const std::string& what);

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
  bool little_endian = false;  // a rev 2 file in that byte order; else big-endian rev 1
};

// Writes the record in IEEE float, one trace per receiver, with the source and receiver positions
// at centimetre precision (docs/wave.md lists the header bytes). Throws Error(invalid_argument)
// for a record SEG-Y cannot hold (dt, ns, coordinates beyond 32 bits), Error(io) when writing fails.
void write_shot(const std::filesystem::path& path, const ShotRecord& record);

// The checks write_shot makes on dt and ns, for a caller that wants them before a long run:
// throws Error(invalid_argument) naming `what` (the flag that set the value).
void check_record_timing(double dt, int64_t ns, const std::string& what);

}  // namespace fdstencil::segy
