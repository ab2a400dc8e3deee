// The acoustic step on the cpu backend (OpenMP over planes): the oracle for the GPU step and the
// solver of machines without one. The per-point physics is physics/acoustic.hpp's.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "core/unwritten_allocator.hpp"
#include "physics/acoustic.hpp"

namespace fdstencil::cpu {

template <class T>
class AcousticCpu {
 public:
  explicit AcousticCpu(acoustic::Setup<T> setup);
  // Records the receivers at step n (u^n), advances u^n to u^{n+1} and injects the sources' f^n.
  void step(int64_t n);
  const T* current() const { return u_.data(); }  // u^n after n steps, on the setup's storage
  T* current() { return u_.data(); }              // the same, writable: a slab's halo planes are filled here
  // (nrec, nt): receiver r at step n.
  const std::vector<T>& traces() const { return traces_; }
  int64_t bytes() const;
  // The state's arrays (physics/acoustic.hpp kStateArrays) one by one, and back: restore() takes
  // arrays of those sizes.
  int64_t state_array_bytes(int i) const { return int64_t(array(i).second * sizeof(T)); }
  void copy_state_array(int i, void* host) const;
  void restore(const acoustic::State<T>& st);
  // The state without its traces (u, u_prev, the CPML memory) to and from `st`, whose traces stay
  // as they are: a checkpoint of the backward pass (wave/imaging.cpp).
  void snapshot(acoustic::State<T>& st) const;
  void resume(const acoustic::State<T>& st);
  const T* previous() const { return u_prev_.data(); }  // u^{n-1} after n steps

 private:
  acoustic::Setup<T> s_;
  // Zeroed plane by plane by the stepping threads: on a machine of several memory nodes a thread's
  // planes sit on its own (first touch).
  std::vector<T, UnwrittenAllocator<T>> u_, u_prev_;
  std::vector<T> pml_[3][3];  // axis x, y, z; psi, chi, phi
  std::vector<T> traces_;
  // The state's array i: its first element and its length.
  std::pair<const T*, size_t> array(int i) const {
    if (i == 0) return {u_.data(), u_.size()};
    if (i == 1) return {u_prev_.data(), u_prev_.size()};
    const std::vector<T>& v = i < acoustic::kStateArrays - 1 ? pml_[(i - 2) / 3][(i - 2) % 3] : traces_;
    return {v.data(), v.size()};
  }
};

extern template class AcousticCpu<float>;
extern template class AcousticCpu<double>;

}  // namespace fdstencil::cpu
