// The CUDA variants of every operator, joined into the one registry (src/bench/registry.cpp).
#include "bench/registry.hpp"
#include "cuda/laplacian/variants.hpp"
#include "cuda/seismic/variants.hpp"

namespace fdstencil::bench {

std::vector<Variant> cuda_variants() {
  std::vector<Variant> vs;
  for (Variant& v : cuda::laplacian_variants()) vs.push_back(std::move(v));
  for (Variant& v : cuda::seismic_variants()) vs.push_back(std::move(v));
  return vs;
}

}  // namespace fdstencil::bench
