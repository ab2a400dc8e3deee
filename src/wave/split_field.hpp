// A split run's field (a snapshot, the final field) written by every rank into one .npy of the
// model's points (issue 31): each rank writes its own model planes at their place, rank 0 the
// header, so no rank gathers the whole field. The file is the one write_npy makes of the gathered
// field, to the byte.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include "fdstencil/npy.hpp"
#include "fdstencil/wave.hpp"
#include "fdstencil/wave_comm.hpp"
#include "wave/shared_file.hpp"

namespace fdstencil::wave::detail {

// `mine`: this slab's model points (model_points of its part), whose first plane is the model's
// plane `first_plane`; `whole`: the whole domain, for the file's shape. Collective.
inline void write_field_file(Comm& comm, const std::filesystem::path& path, const Domain& whole,
                             int64_t first_plane, const std::vector<float>& mine, const char* kind) {
  const std::vector<int64_t> shape =
      whole.dim == 3 ? std::vector<int64_t>{whole.model_nz, whole.model_ny, whole.model_nx}
                     : std::vector<int64_t>{whole.model_nz, whole.model_nx};
  const std::string header = npy_header(DType::f32, shape);
  const int64_t plane = whole.model_ny * whole.model_nx * int64_t(sizeof(float));
  SharedFile f(comm, path, int64_t(header.size()) + whole.model_nz * plane, kind);
  if (comm.rank() == 0) f.write(header.data(), int64_t(header.size()), 0);
  f.write(mine.data(), int64_t(mine.size() * sizeof(float)), int64_t(header.size()) + first_plane * plane);
  f.commit();
}

}  // namespace fdstencil::wave::detail
