// The ring marches without the register floor (xyz_ring's Floor = false): `floor=0` of the
// registry's ring variants. Their own translation unit, built beside variants_ring.cu.
#include "cuda/seismic/ring_instances.cuh"

namespace fdstencil::cuda::seismic {

template <class T, bool XY>
const void* ring_unbounded_instance(int radius, int vec, int my) {
  return ring_instance<T, XY, false>(radius, vec, my);
}

template const void* ring_unbounded_instance<float, true>(int, int, int);
template const void* ring_unbounded_instance<float, false>(int, int, int);
template const void* ring_unbounded_instance<double, true>(int, int, int);
template const void* ring_unbounded_instance<double, false>(int, int, int);

}  // namespace fdstencil::cuda::seismic
