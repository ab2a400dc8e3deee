// cuTensorMapEncodeTiled through cudaGetDriverEntryPointByVersion: the driver's own encoder, found
// once, at the first map.
#include "cuda/common/tensor_map.hpp"

#include <cuda_runtime.h>

#include <mutex>
#include <string>

#include "fdstencil/error.hpp"

namespace fdstencil::cuda {

namespace {

using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                 const cuuint64_t*, const cuuint32_t*, const cuuint32_t*,
                                 CUtensorMapInterleave, CUtensorMapSwizzle, CUtensorMapL2promotion,
                                 CUtensorMapFloatOOBfill);

// The ABI version the function pointer is asked for: cuTensorMapEncodeTiled as CUDA 12.0 shipped it.
constexpr unsigned kEncodeAbi = 12000;

EncodeTiled encoder() {
  static EncodeTiled fn = nullptr;
  static std::string why;
  static std::once_flag once;
  std::call_once(once, [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult found{};
    const cudaError_t err =
        cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, kEncodeAbi, cudaEnableDefault, &found);
    if (err != cudaSuccess || found != cudaDriverEntryPointSuccess || p == nullptr) {
      cudaGetLastError();
      why = std::string("the driver offers no cuTensorMapEncodeTiled (") + cudaGetErrorString(err) + ")";
      return;
    }
    fn = reinterpret_cast<EncodeTiled>(p);
  });
  if (fn == nullptr) throw Error(ErrorKind::unsupported, why);
  return fn;
}

}  // namespace

CUtensorMap encode_tiled_map(const TiledMap3d& m) {
  const CUtensorMapDataType type =
      m.elem_bytes == 8 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT64 : CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  const cuuint64_t dims[3] = {m.extent[0], m.extent[1], m.extent[2]};
  const cuuint64_t strides[2] = {m.stride[0], m.stride[1]};
  const cuuint32_t box[3] = {m.box[0], m.box[1], m.box[2]};
  const cuuint32_t unit[3] = {1, 1, 1};
  CUtensorMap map{};
  // No swizzle: the kernels read the box as the plain row-major tile it lands as. L2 promotion
  // of 128 bytes: a box row is 48 bytes (a 1 x 1 block of floats at R = 1) to 1 KB (256 floats),
  // mostly several lines, and the neighbouring boxes' rows share the lines.
  const CUresult r = encoder()(&map, type, 3, const_cast<void*>(m.origin), dims, strides, box, unit,
                               CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                               CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw Error(ErrorKind::unsupported,
                "cuTensorMapEncodeTiled refused the map (CUresult " + std::to_string(int(r)) + "): extents " +
                    std::to_string(m.extent[0]) + " x " + std::to_string(m.extent[1]) + " x " +
                    std::to_string(m.extent[2]) + ", strides " + std::to_string(m.stride[0]) + " and " +
                    std::to_string(m.stride[1]) + " bytes, box " + std::to_string(m.box[0]) + " x " +
                    std::to_string(m.box[1]) + " x " + std::to_string(m.box[2]));
  return map;
}

}  // namespace fdstencil::cuda
