// Register vectors of V consecutive elements (V * sizeof(T) <= 16 bytes) loaded and stored as one
// 1-, 2-, 4-, 8- or 16-byte access. The elements live in a plain array indexed by constants, so
// they stay in registers; the native vector type (float4, double2, ...) appears only at the
// access itself.
#pragma once

#include <cuda_runtime.h>

namespace fdstencil::cuda {

template <class T, int V>
struct NativeVec;
// One line each: a table of the native types, which the formatter would spread over 20 lines.
// clang-format off
template <> struct NativeVec<float, 1> { using type = float; };
template <> struct NativeVec<float, 2> { using type = float2; };
template <> struct NativeVec<float, 4> { using type = float4; };
template <> struct NativeVec<double, 1> { using type = double; };
template <> struct NativeVec<double, 2> { using type = double2; };
// clang-format on

// The widest vector of T that one access moves: 16 bytes.
template <class T>
inline constexpr int kVec16 = 16 / int(sizeof(T));

template <class T, int V>
struct Vec {
  T v[V];
};

// `p` must be aligned to V * sizeof(T) bytes.
template <class T, int V>
__device__ __forceinline__ Vec<T, V> load_vec(const T* p) {
  using N = typename NativeVec<T, V>::type;
  static_assert(sizeof(N) == sizeof(Vec<T, V>));
  const N n = *reinterpret_cast<const N*>(p);
  Vec<T, V> r;
  __builtin_memcpy(&r, &n, sizeof n);
  return r;
}

template <class T, int V>
__device__ __forceinline__ void store_vec(T* p, const Vec<T, V>& r) {
  using N = typename NativeVec<T, V>::type;
  N n;
  __builtin_memcpy(&n, &r, sizeof n);
  *reinterpret_cast<N*>(p) = n;
}

// o += the vector at p (the multi-pass pipelines add each axis into the output of the last).
template <class T, int V>
__device__ __forceinline__ void add_loaded(Vec<T, V>& o, const T* p) {
  const Vec<T, V> old = load_vec<T, V>(p);
#pragma unroll
  for (int e = 0; e < V; ++e) o.v[e] += old.v[e];
}

// A streaming store (st.global.cs, evict-first: the output is not read again by this kernel) of
// the first `valid` elements: the whole vector when all V lie inside the interior, else one by
// one, so the halo beyond the last point is never written.
template <class T, int V>
__device__ __forceinline__ void store_streaming(T* p, const Vec<T, V>& r, int valid) {
  using N = typename NativeVec<T, V>::type;
  if (valid >= V) {
    N n;
    __builtin_memcpy(&n, &r, sizeof n);
    __stcs(reinterpret_cast<N*>(p), n);
  } else {
#pragma unroll
    for (int e = 0; e < V; ++e)
      if (e < valid) __stcs(p + e, r.v[e]);
  }
}

}  // namespace fdstencil::cuda
