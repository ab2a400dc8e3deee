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
    if (problem_.dtype() == DType::f32)
      apply<float>(in, out);
    else
      apply<double>(in, out);
  }

 private:
  // Views of the plan's layout whose origins are the given ones.
  template <class T>
  void apply(const void* in, void* out) const {
    const Layout& l = problem_.layout;
    backend_.apply(problem_.stencil,
                   FieldView<const T>(static_cast<const T*>(in) - l.origin(), l, Memory::host),
                   FieldView<T>(static_cast<T*>(out) - l.origin(), l, Memory::host));
  }

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
