// The CUDA side of the harness: a Runner that owns device fields, times launches with events
// after flushing the L2, and reads the kernel's resources (registers, local memory, shared
// memory, occupancy) at run time. A kernel family derives from it and implements launch().
#pragma once

#include <cuda_runtime.h>

#include <vector>

#include "bench/variant.hpp"
#include "cuda/common/check.hpp"
#include "cuda/common/device_field.hpp"

namespace fdstencil::cuda {

// Evicts the L2 by reading a buffer twice its size, so no timed launch finds its input cached
// from the previous repeat. Reads, not writes: a dirty flush buffer would be written back during
// the timed kernel and charged to it.
void flush_l2();

// Marks each timed application with the NVTX range bench::kTimedRange ("fdstencil-timed"), so a
// profiler can select exactly those launches (bench --profile runs its jobs under ncu with it).
void set_timed_range(bool on);
bool timed_range();
void push_timed_range();
void pop_timed_range();

// The resource report of one kernel at one block size.
nlohmann::json kernel_resources(const void* kernel, int block_threads, size_t dynamic_smem);

template <class T>
class CudaRunner : public bench::Runner<T> {
 public:
  explicit CudaRunner(const bench::Problem& p)
      : layout_(Layout::make(p.interior, p.stencil.radius, sizeof(T), p.align_bytes)),
        in_(layout_),
        out_(layout_) {}

  void set_input(const HostField<T>& h) override { in_.upload(h); }
  void poison_output() override { out_.poison(); }
  void run() override {
    launch();
    FDS_CUDA_CHECK(cudaDeviceSynchronize());
  }
  void get_output(HostField<T>& h) override { out_.download(h); }

  std::vector<double> time_ms(int warmup, int reps) override {
    for (int r = 0; r < warmup; ++r) launch();
    FDS_CUDA_CHECK(cudaDeviceSynchronize());
    cudaEvent_t e0, e1;
    FDS_CUDA_CHECK(cudaEventCreate(&e0));
    FDS_CUDA_CHECK(cudaEventCreate(&e1));
    std::vector<double> ms;
    for (int r = 0; r < reps; ++r) {
      flush_l2();
      FDS_CUDA_CHECK(cudaEventRecord(e0));
      if (timed_range()) push_timed_range();
      launch();
      if (timed_range()) pop_timed_range();
      FDS_CUDA_CHECK(cudaEventRecord(e1));
      FDS_CUDA_CHECK(cudaEventSynchronize(e1));
      float t = 0;
      FDS_CUDA_CHECK(cudaEventElapsedTime(&t, e0, e1));
      ms.push_back(t);
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    return ms;
  }

  nlohmann::json resources() const override {
    nlohmann::json j = kernel_resources(kernel_, block_threads_, dynamic_smem_);
    for (auto& [k, v] : extra_.items()) j[k] = v;
    return j;
  }

 protected:
  virtual void launch() = 0;  // enqueue the variant on the default stream and check the launch
  void describe_kernel(const void* kernel, int block_threads, size_t dynamic_smem) {
    kernel_ = kernel;
    block_threads_ = block_threads;
    dynamic_smem_ = dynamic_smem;
  }

  Layout layout_;
  DeviceField<T> in_, out_;
  nlohmann::json extra_ = nlohmann::json::object();  // resolved parameters, e.g. subdomains

 private:
  const void* kernel_ = nullptr;
  int block_threads_ = 0;
  size_t dynamic_smem_ = 0;
};

}  // namespace fdstencil::cuda
