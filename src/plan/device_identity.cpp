// The current GPU's identity for the tuning cache (see device_identity.hpp).
#include "plan/device_identity.hpp"

#include "fdstencil/error.hpp"
#ifdef FDSTENCIL_HAVE_CUDA
#include "fdstencil/device.hpp"
#endif

namespace fdstencil {

TuningKey current_key(Op op, int radius, DType dtype, Extents interior) {
  TuningKey k;
#ifdef FDSTENCIL_HAVE_CUDA
  const std::string why = cuda::no_device_reason();
  if (!why.empty()) throw Error(ErrorKind::unsupported, why);
  const nlohmann::json d = cuda::device_info(cuda::current_device());
  k.device = d["name"].get<std::string>();
  k.compute_capability = d["compute_capability"].get<std::string>();
  k.driver = cuda::driver_version();
  k.runtime = cuda::runtime_version();
#else
  throw Error(ErrorKind::unsupported, "this build has no CUDA backend");
#endif
  k.op = op;
  k.radius = radius;
  k.dtype = dtype;
  k.interior = interior;
  return k;
}

std::string current_device_name() {
#ifdef FDSTENCIL_HAVE_CUDA
  const std::string why = cuda::no_device_reason();
  if (!why.empty()) throw Error(ErrorKind::unsupported, why);
  return cuda::device_info(cuda::current_device())["name"].get<std::string>();
#else
  throw Error(ErrorKind::unsupported, "this build has no CUDA backend");
#endif
}

}  // namespace fdstencil
