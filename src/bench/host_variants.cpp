// The host backends as variants: "reference" and "cpu" for every operator.
#include <chrono>
#include <cmath>
#include <limits>

#include "bench/registry.hpp"
#include "fdstencil/backend.hpp"
#include "fdstencil/error.hpp"

namespace fdstencil::bench {

namespace {

template <class T>
class HostRunner final : public Runner<T> {
 public:
  HostRunner(const Backend& backend, const Problem& p)
      : backend_(backend),
        stencil_(p.stencil),
        in_(p.interior, p.stencil.radius, p.align_bytes),
        out_(p.interior, p.stencil.radius, p.align_bytes) {}

  void set_input(const HostField<T>& in) override { copy(in, in_); }
  void poison_output() override { out_.fill(std::numeric_limits<T>::quiet_NaN()); }
  void run() override { backend_.apply(stencil_, in_, out_); }
  void get_output(HostField<T>& out) override { copy(out_, out); }

  std::vector<double> time_ms(int warmup, int reps) override {
    for (int r = 0; r < warmup; ++r) run();
    std::vector<double> ms;
    for (int r = 0; r < reps; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      run();
      const auto t1 = std::chrono::steady_clock::now();
      ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
    return ms;
  }

 private:
  static void copy(const HostField<T>& from, HostField<T>& to) {
    if (!(from.layout() == to.layout()))
      throw Error(ErrorKind::invalid_argument, "host runner: field layouts differ");
    const T* s = from.data();
    T* d = to.data();
    for (int64_t n = 0; n < from.layout().alloc_elems(); ++n) d[n] = s[n];
  }

  const Backend& backend_;
  Stencil stencil_;
  HostField<T> in_, out_;
};

Variant host_variant(Op op, const Backend& b) {
  Variant v;
  v.op = op;
  v.name = std::string(b.name());
  v.backend = std::string(b.name());
  v.summary = std::string(b.description());
  v.cannot_run = [](const Problem&, const Params&) { return std::string(); };
  v.make_float = [&b](const Problem& p, const Params&) -> std::unique_ptr<Runner<float>> {
    return std::make_unique<HostRunner<float>>(b, p);
  };
  v.make_double = [&b](const Problem& p, const Params&) -> std::unique_ptr<Runner<double>> {
    return std::make_unique<HostRunner<double>>(b, p);
  };
  return v;
}

}  // namespace

std::vector<Variant> host_variants() {
  std::vector<Variant> vs;
  for (Op op : kAllOps)
    for (const Backend* b : host_backends()) vs.push_back(host_variant(op, *b));
  return vs;
}

}  // namespace fdstencil::bench
