// The CUDA variants of every operator: the Laplacian series, then the seismic families.
#include "cuda/laplacian/variants.hpp"
#include "cuda/seismic/variants.hpp"
#include "cuda/variants.hpp"

namespace fdstencil::cuda {

std::vector<Variant> variants() {
  std::vector<Variant> vs = laplacian_variants();
  for (Variant& v : seismic_variants()) vs.push_back(std::move(v));
  return vs;
}

}  // namespace fdstencil::cuda
