// fdstencil apply: run an operator on a user's .npy field through a plan and write the result as
// .npy. On the GPU (--backend cuda, or auto with a GPU present) the field is uploaded, the plan
// applied, the result downloaded; the plan reads the tuning cache as every plan does. An existing
// --output is the user's file: replaced only with --overwrite, and refused before the input is read.
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "commands.hpp"
#include "fdstencil/device_field.hpp"
#include "fdstencil/error.hpp"
#include "fdstencil/npy.hpp"
#include "fdstencil/plan.hpp"

namespace fdstencil::cli {

namespace {

struct ApplyOpts {
  std::string op, input, output, spacing = "1", backend = "auto", cache;
  int radius = 0;
  bool no_cache = false, verbose = false, overwrite = false;
};

template <class T>
void apply_typed(const Stencil& s, const NpyArray& a, const ApplyOpts& o) {
  const int R = s.radius;
  const Extents total{a.shape[2], a.shape[1], a.shape[0]};
  const Extents interior{total.nx - 2 * R, total.ny - 2 * R, total.nz - 2 * R};
  HostField<T> in(interior, R), out(interior, R);
  const T* src = reinterpret_cast<const T*>(a.bytes.data());
  // The file is compact (nz, ny, nx) including the halo; the field is padded and aligned.
  for (int64_t k = -R; k < interior.nz + R; ++k)
    for (int64_t j = -R; j < interior.ny + R; ++j) {
      const T* row = src + ((k + R) * total.ny + (j + R)) * total.nx;
      std::memcpy(&in.at(-R, j, k), row, sizeof(T) * size_t(total.nx));
      std::memcpy(&out.at(-R, j, k), row, sizeof(T) * size_t(total.nx));  // halo copied from input
    }
  PlanOptions po;
  po.backend = o.backend;
  po.use_cache = !o.no_cache;
  po.cache_file = o.cache;
  const Plan plan(s, in.layout(), po);
  if (plan.backend() == "cuda") {
    DeviceField<T> d_in(in.layout()), d_out(in.layout());
    d_in.upload(in);
    d_out.upload(out);  // the halo of the result is the input's
    plan.apply(d_in, d_out);
    d_out.download(out);  // synchronous: waits for the plan's work on the default stream
  } else {
    plan.apply(in, out);
  }
  if (o.verbose) std::fprintf(stderr, "fdstencil: plan %s\n", plan.describe().dump().c_str());
  std::fprintf(stderr, "fdstencil: %s R=%d on %s: %s %s (%s)\n", std::string(op_name(s.op)).c_str(), R,
               plan.backend().c_str(), plan.variant().c_str(), plan.params().dump().c_str(),
               plan.source().c_str());
  ensure_host_memory(total.points() * int64_t(sizeof(T)), "the output array");
  std::vector<T> result(size_t(total.points()));
  for (int64_t k = -R; k < interior.nz + R; ++k)
    for (int64_t j = -R; j < interior.ny + R; ++j)
      std::memcpy(result.data() + ((k + R) * total.ny + (j + R)) * total.nx, &out.at(-R, j, k),
                  sizeof(T) * size_t(total.nx));
  write_npy(o.output, dtype_of<T>(), a.shape, result.data(), int64_t(result.size() * sizeof(T)));
}

}  // namespace

Action add_apply(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "apply",
      "Apply an operator to a .npy field (float32/float64, either byte order, C or Fortran order, shape (nz, "
      "ny, nx) including the halo) "
      "and write a .npy of the same shape, halo copied from the input");
  auto o = std::make_shared<ApplyOpts>();
  cmd->add_option("--op", o->op, "laplacian7, d2x, d2y, d2z, d2xy or d2xyz")->required();
  cmd->add_option("--radius,-r", o->radius,
                  "Stencil radius R (1..8; laplacian7: 1, the default for it); the halo is R wide");
  cmd->add_option("--input,-i", o->input, "Input .npy file")->required();
  cmd->add_option("--output,-o", o->output, "Output .npy file (written atomically)")->required();
  cmd->add_flag("--overwrite", o->overwrite, "Replace --output if it exists (refused otherwise)");
  cmd->add_option("--spacing,-s", o->spacing, "Grid spacing: H or HX,HY,HZ")->capture_default_str();
  cmd->add_option("--backend,-b", o->backend,
                  "auto (the GPU when one is present, else cpu), cuda, cpu or reference")
      ->capture_default_str();
  cmd->add_option("--cache", o->cache,
                  "The tuning cache file (default: $FDSTENCIL_TUNING_CACHE, else "
                  "$XDG_CACHE_HOME/fdstencil/tuning.json, else ~/.cache/fdstencil/tuning.json)");
  cmd->add_flag("--no-cache", o->no_cache, "Ignore the tuning cache: the plan takes the built-in defaults");
  cmd->add_flag("--verbose,-v", o->verbose, "Print the plan (variant, parameters, kernel resources) as JSON");
  return [o] {
    Stencil s;
    s.op = parse_op(o->op);
    if (o->radius == 0) {
      if (s.op != Op::laplacian7)
        throw Error(ErrorKind::invalid_argument, "--radius is required for " + o->op);
      o->radius = 1;
    }
    s.radius = o->radius;
    s.h = parse_spacing(o->spacing);
    validate(s);
    check_backend_name(o->backend);
    std::error_code ec;
    if (!o->overwrite && std::filesystem::exists(o->output, ec))
      throw Error(ErrorKind::invalid_argument,
                  "--output " + o->output + " exists: give --overwrite to replace it, or another --output");
    const NpyArray a = read_npy(o->input);
    if (a.shape.size() != 3)
      throw Error(ErrorKind::invalid_argument, o->input +
                                                   ": a field must be 3-D (nz, ny, nx), this array has " +
                                                   std::to_string(a.shape.size()) + " dimensions");
    const char* names[3] = {"nz", "ny", "nx"};
    for (int d = 0; d < 3; ++d)
      if (a.shape[d] < 2 * s.radius + 1)
        throw Error(ErrorKind::invalid_argument,
                    o->input + ": " + names[d] + " = " + std::to_string(a.shape[d]) +
                        " is smaller than 2R+1 = " + std::to_string(2 * s.radius + 1) +
                        " points needed for radius " + std::to_string(s.radius));
    if (a.dtype == DType::f32)
      apply_typed<float>(s, a, *o);
    else
      apply_typed<double>(s, a, *o);
    std::fprintf(stderr, "fdstencil: wrote %s\n", o->output.c_str());
    return 0;
  };
}

}  // namespace fdstencil::cli
