// A thread's own rings of N vector slots in shared memory (one ring a lane, L lanes): the oldest
// planes of a z march's queue (the `zq` parameter of d2xyz `pipelined` and of the wave step's tile
// design). Slot i of lane l of thread `rank` sits at area + ((i * L + l) * threads + rank) * V, so
// a warp's accesses to one slot are consecutive (conflict-free), and every thread reads only the
// slots it wrote: no barrier guards the ring. Entries are numbered from the oldest (0) to the
// newest (N - 1); retiring the oldest overwrites its slot with the newest, so nothing moves.
#pragma once

#include "cuda/common/vec.cuh"

namespace fdstencil::cuda {

template <class T, int V, int N, int L = 1>
class ThreadRing {
 public:
  static_assert(N >= 0);  // N = 0: the queue is all in registers and the ring is never touched

  // L lanes: a thread that marches L columns (register blocking along y) keeps one ring per
  // column, sharing the head; slot i of lane l is slot i * L + l of a one-lane ring.
  __device__ __forceinline__ ThreadRing(T* area, int rank, int threads)
      : mine_(area + V * rank), stride_(V * threads) {}

  // Entry r of lane l: after unrolling r and l are constants, so the slot costs an add and a compare.
  __device__ __forceinline__ Vec<T, V> get(int r, int l = 0) const {
    return load_vec<T, V>(slot(head_ + r < N ? head_ + r : head_ + r - N, l));
  }
  __device__ __forceinline__ Vec<T, V> operator[](int r) const { return get(r); }

  // Entry r of lane l before the first advance() (the ring starts with its head at slot 0).
  __device__ __forceinline__ void fill(int r, const Vec<T, V>& v, int l = 0) { store_vec(slot(r, l), v); }

  // Lane l's oldest entry is done with: `v` takes its slot, to become the newest at advance().
  __device__ __forceinline__ void replace_oldest(const Vec<T, V>& v, int l = 0) {
    store_vec(slot(head_, l), v);
  }
  __device__ __forceinline__ void advance() { head_ = head_ + 1 < N ? head_ + 1 : 0; }

  // One lane: retire the oldest entry and append `v` as the newest.
  __device__ __forceinline__ void push(const Vec<T, V>& v) {
    static_assert(L == 1, "with several lanes, replace_oldest() each, then advance()");
    replace_oldest(v);
    advance();
  }

 private:
  __device__ __forceinline__ T* slot(int i, int l = 0) const { return mine_ + (i * L + l) * stride_; }

  T* mine_;       // this thread's slot 0 of lane 0
  int stride_;    // elements from one slot of a thread to its next
  int head_ = 0;  // the slot of entry 0
};

}  // namespace fdstencil::cuda
