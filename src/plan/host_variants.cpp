// The host backends as variants: "reference" and "cpu" for every operator, so a plan on a host
// backend is chosen, applied and timed like any other.
#include "fdstencil/backend.hpp"
#include "plan/registry.hpp"

namespace fdstencil {

namespace {

class HostLauncher final : public Launcher {
 public:
  HostLauncher(const Backend& b, const Problem& p) : backend_(b), problem_(p) {}
  void run(const void* in, void* out, Stream) const override {
    const Layout& l = problem_.layout;
    if (problem_.dtype() == DType::f32)
      backend_.apply(problem_.stencil, FieldView<const float>(static_cast<const float*>(in), l, Memory::host),
                     FieldView<float>(static_cast<float*>(out), l, Memory::host));
    else
      backend_.apply(problem_.stencil, FieldView<const double>(static_cast<const double*>(in), l, Memory::host),
                     FieldView<double>(static_cast<double*>(out), l, Memory::host));
  }

 private:
  const Backend& backend_;
  Problem problem_;
};

Variant host_variant(Op op, const Backend& b) {
  Variant v;
  v.op = op;
  v.name = std::string(b.name());
  v.backend = std::string(b.name());
  v.summary = std::string(b.description());
  v.cannot_run = [](const Problem&, const Params&) { return std::string(); };
  v.prepare = [&b](const Problem& p, const Params&) -> std::unique_ptr<Launcher> {
    return std::make_unique<HostLauncher>(b, p);
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

}  // namespace fdstencil
