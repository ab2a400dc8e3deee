// Building a plan (choosing and preparing a variant) and applying it (checking the views, then
// enqueueing). See include/fdstencil/plan.hpp.
#include <algorithm>
#include <cstdio>
#include <mutex>
#include <set>
#include <string>

#include "core/summary.hpp"
#include "fdstencil/error.hpp"
#include "fdstencil/plan.hpp"
#include "fdstencil/tuning_cache.hpp"
#include "plan/defaults.hpp"
#include "plan/device_identity.hpp"
#include "plan/plan_internal.hpp"
#include "plan/registry.hpp"

namespace fdstencil {

namespace {

// The caller's sink gets every warning; stderr gets each distinct one once per process (a wave
// solver builds several plans from one cache).
Warn warner(const Warn& sink) {
  if (sink) return sink;
  return [](const std::string& message) {
    static std::mutex m;
    static std::set<std::string> given;
    {
      const std::lock_guard<std::mutex> lock(m);
      if (!given.insert(message).second) return;
    }
    std::fprintf(stderr, "fdstencil: warning: %s\n", message.c_str());
  };
}

std::string resolve_backend(const std::string& asked) {
  if (asked == "auto") return gpu_count() > 0 ? "cuda" : "cpu";
  if (asked == "cpu" || asked == "reference") return asked;
  if (asked == "cuda") {
    if (find_variants(Op::d2x, "cuda").empty())
      throw Error(ErrorKind::unsupported, "backend cuda: this build has no CUDA backend");
    if (gpu_count() == 0) throw Error(ErrorKind::unsupported, "backend cuda: " + gpu_unavailable_reason());
    return asked;
  }
  throw Error(ErrorKind::invalid_argument,
              "unknown backend '" + asked + "' (valid: auto, cuda, cpu, reference)");
}

// The weakest layout of the problem's geometry that the variant still runs on: the alignment
// and the tail it relies on. Probed through cannot_run, the one place the variant states them.
void find_requirements(const Variant& v, const Problem& p, const Params& params, Plan::Impl& im) {
  const Layout& l = p.layout;
  const int64_t eb = l.elem_bytes();
  const auto runs_on = [&](int64_t align, int64_t tail_bytes, int64_t head_bytes) {
    try {
      const Layout weaker = Layout::strided(l.interior(), l.radius(), eb, l.line(), l.slice(), align,
                                            (tail_bytes + eb - 1) / eb, (head_bytes + eb - 1) / eb);
      return v.cannot_run({p.stencil, weaker}, params).empty();
    } catch (const std::exception&) {
      return false;
    }
  };
  im.required_align = std::min(l.align_bytes(), kAlignBytes);
  im.required_tail = l.tail_bytes();
  im.required_head = l.head_bytes();
  if (runs_on(im.required_align, 0, im.required_head))
    im.required_tail = 0;
  else if (im.required_tail > kTailSlackBytes &&
           runs_on(im.required_align, kTailSlackBytes, im.required_head))
    im.required_tail = kTailSlackBytes;  // the most any kernel reads past the end (layout.hpp)
  if (runs_on(im.required_align, im.required_tail, 0)) im.required_head = 0;
  for (int64_t a = eb; a < im.required_align; a *= 2)
    if (runs_on(a, im.required_tail, im.required_head)) {
      im.required_align = a;
      break;
    }
}

// A candidate from the cache or the defaults: the params merged and checked, or the reason not.
std::string try_candidate(const Variant* v, const Params& given, const Problem& p, Params& merged) {
  if (v == nullptr) return "this build has no such variant";
  try {
    merged = merge_params(*v, given);
    return v->cannot_run(p, merged);
  } catch (const Error& e) {
    return e.what();
  } catch (const nlohmann::json::exception& e) {
    return std::string("bad parameter: ") + e.what();
  }
}

}  // namespace

Plan plan_of_variant(const Variant& v, const Problem& p, const Params& params, const std::string& source) {
  auto im = std::make_unique<Plan::Impl>();
  im->problem = p;
  im->backend = v.backend;
  im->variant = v.name;
  im->source = source;
  im->memory = v.on_device() ? Memory::device : Memory::host;
  im->params = merge_params(v, params);
  std::string why;
  try {
    why = v.cannot_run(p, im->params);
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorKind::invalid_argument, "variant " + v.name + ": bad parameter: " + e.what());
  }
  if (!why.empty())
    throw Error(ErrorKind::unsupported, "variant " + v.name + " of " + std::string(op_name(p.stencil.op)) +
                                            " cannot run this problem: " + why);
  find_requirements(v, p, im->params, *im);
  im->launcher = v.prepare(p, im->params);
  return Plan(std::move(im));
}

Plan::Plan(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Plan::~Plan() = default;
Plan::Plan(Plan&&) noexcept = default;
Plan& Plan::operator=(Plan&&) noexcept = default;

Plan::Plan(const Stencil& s, const Layout& layout, const PlanOptions& opt) {
  validate(s);
  if (layout.radius() != s.radius)
    throw Error(ErrorKind::invalid_argument, "the layout's halo is " + std::to_string(layout.radius()) +
                                                 " points wide but the stencil has radius " +
                                                 std::to_string(s.radius));
  validate_extents(s, layout.interior());
  const Problem p{s, layout};
  const std::string backend = resolve_backend(opt.backend);
  const Warn warn = warner(opt.warn);
  if (opt.variant.empty() && !(opt.params.is_object() && opt.params.empty()))
    throw Error(ErrorKind::invalid_argument,
                "plan options: parameters " + opt.params.dump() + " without a variant to give them to");

  if (!opt.variant.empty()) {
    const Variant* v = find_variant(s.op, backend, opt.variant);
    if (v == nullptr) {
      std::string names;
      for (const Variant* c : find_variants(s.op, backend)) names += (names.empty() ? "" : ", ") + c->name;
      throw Error(ErrorKind::invalid_argument, "no variant '" + opt.variant + "' of " +
                                                   std::string(op_name(s.op)) + " on backend " + backend +
                                                   " (valid: " + names + ")");
    }
    *this = plan_of_variant(*v, p, opt.params, "forced by the caller");
    return;
  }
  if (backend != "cuda") {  // a host backend is its own single variant
    *this = plan_of_variant(*find_variant(s.op, backend, backend), p, Params::object(),
                            "the " + backend + " backend");
    return;
  }

  Params merged;
  if (opt.use_cache) {
    const std::filesystem::path file =
        opt.cache_file.empty() ? default_cache_file() : std::filesystem::path(opt.cache_file);
    const TuningCache cache = TuningCache::load(file, warn);
    const TuningKey key = current_key(s.op, s.radius, p.dtype(), layout.interior());
    const TuningEntry* e = cache.find(key);
    const bool exact = e != nullptr;
    if (!exact) e = cache.nearest(key);
    if (e != nullptr) {
      const Variant* v = find_variant(s.op, "cuda", e->variant);
      const std::string why = try_candidate(v, e->params, p, merged);
      if (why.empty()) {
        *this =
            plan_of_variant(*v, p, merged,
                            "tuning cache " + file.string() +
                                (exact ? "" : " (nearest tuned size " + extents_text(e->key.interior) + ")"));
        return;
      }
      warn(file.string() + ": the tuned choice " + e->variant + " " + e->params.dump() + " for " +
           std::string(op_name(s.op)) + " R=" + std::to_string(s.radius) + " " +
           extents_text(e->key.interior) + " cannot be used (" + why + "); the built-in defaults are used");
    }
  }
  const std::string cls(size_class_name(size_class(layout.interior(), p.dtype())));
  const std::string card = current_device_name();
  if (!card_has_defaults(card, s.op)) warn(untuned_card_notice(card, s.op, s.radius, layout.interior()));
  std::string reasons;
  for (const auto& [name, params] : default_choices(p, card)) {
    const Variant* v = find_variant(s.op, "cuda", name);
    const std::string why = try_candidate(v, params, p, merged);
    if (why.empty()) {
      *this = plan_of_variant(*v, p, merged, "built-in defaults (size class " + cls + ")");
      return;
    }
    reasons += "; " + name + ": " + why;
  }
  // A layout none of the defaults can take (a view of odd alignment): the first variant at its
  // registry defaults that can, the plain baselines being first.
  for (const Variant* v : find_variants(s.op, "cuda")) {
    const std::string why = try_candidate(v, Params::object(), p, merged);
    if (why.empty()) {
      *this = plan_of_variant(*v, p, merged, "the first variant that can run this layout");
      return;
    }
    reasons += "; " + v->name + ": " + why;
  }
  throw Error(ErrorKind::unsupported,
              "no CUDA variant of " + std::string(op_name(s.op)) + " can run this problem" + reasons);
}

namespace {

template <class T>
void check_view(const Plan::Impl& im, const FieldView<T>& v, const char* which) {
  const Layout& want = im.problem.layout;
  const Layout& have = v.layout();
  const auto fail = [&](const std::string& what) {
    throw Error(ErrorKind::invalid_argument, std::string("plan apply: the ") + which + " " + what);
  };
  if (v.memory() != im.memory)
    fail(v.memory() == Memory::device
             ? "is in device memory but the plan runs on the " + im.backend + " backend"
             : "is in host memory but the plan runs on the GPU");
  if (!same_geometry(want, have)) {
    const Extents a = want.interior(), b = have.interior();
    fail("has extents " + extents_text(b) + ", halo " + std::to_string(have.radius()) + ", strides " +
         std::to_string(have.line()) + "/" + std::to_string(have.slice()) + " and " +
         std::to_string(have.elem_bytes()) + "-byte elements; the plan was built for " + extents_text(a) +
         ", halo " + std::to_string(want.radius()) + ", strides " + std::to_string(want.line()) + "/" +
         std::to_string(want.slice()) + " and " + std::to_string(want.elem_bytes()) + "-byte elements");
  }
  // The alignment the pointer and the strides actually keep, not only what the layout claims.
  const int64_t eb = have.elem_bytes();
  const int64_t kept = std::min(have.align_bytes(),
                                aligned_bytes_of({uint64_t(uintptr_t(v.origin())), uint64_t(have.line() * eb),
                                                  uint64_t(have.slice() * eb)}));
  if (kept < im.required_align)
    fail("x-lines are " + std::to_string(kept) + "-byte aligned; variant " + im.variant + " needs " +
         std::to_string(im.required_align));
  if (have.tail_bytes() < im.required_tail)
    fail("has " + std::to_string(have.tail_bytes()) + " readable bytes after its last point; variant " +
         im.variant + " reads up to " + std::to_string(im.required_tail));
  if (have.head_bytes() < im.required_head)
    fail("has " + std::to_string(have.head_bytes()) + " readable bytes before its halo corner; variant " +
         im.variant + " reads up to " + std::to_string(im.required_head));
}

// The bytes a field's points span, from its halo corner to its far halo corner.
template <class T>
std::pair<uintptr_t, uintptr_t> span_of(const FieldView<T>& v) {
  const Layout& l = v.layout();
  const Extents n = l.interior();
  const int64_t R = l.radius();
  const auto at = [&](int64_t i, int64_t j, int64_t k) {
    return uintptr_t(v.origin() + (i + j * l.line() + k * l.slice()));
  };
  return {at(-R, -R, -R), at(n.nx + R - 1, n.ny + R - 1, n.nz + R - 1) + uintptr_t(l.elem_bytes())};
}

template <class T>
void apply_typed(const Plan::Impl& im, FieldView<const T> in, FieldView<T> out, Stream stream) {
  if (im.problem.dtype() != dtype_of<T>())
    throw Error(ErrorKind::invalid_argument, std::string("plan apply: the plan is for ") +
                                                 std::string(dtype_name(im.problem.dtype())) +
                                                 " fields, not " + std::string(dtype_name(dtype_of<T>())));
  check_view(im, in, "input");
  check_view(im, out, "output");
  const auto a = span_of(in), b = span_of(out);
  if (a.first < b.second && b.first < a.second)
    throw Error(
        ErrorKind::invalid_argument,
        "plan apply: input and output overlap (in-place is not supported: the output must not be read)");
  im.launcher->run(in.origin(), out.origin(), stream);
}

}  // namespace

void Plan::apply(FieldView<const float> in, FieldView<float> out, Stream stream) const {
  apply_typed(*impl_, in, out, stream);
}
void Plan::apply(FieldView<const double> in, FieldView<double> out, Stream stream) const {
  apply_typed(*impl_, in, out, stream);
}

const Stencil& Plan::stencil() const { return impl_->problem.stencil; }
const Layout& Plan::layout() const { return impl_->problem.layout; }
DType Plan::dtype() const { return impl_->problem.dtype(); }
const std::string& Plan::backend() const { return impl_->backend; }
const std::string& Plan::variant() const { return impl_->variant; }
const nlohmann::json& Plan::params() const { return impl_->params; }
const std::string& Plan::source() const { return impl_->source; }

nlohmann::json Plan::describe() const {
  const Problem& p = impl_->problem;
  const Extents n = p.interior();
  return {{"op", std::string(op_name(p.stencil.op))},
          {"radius", p.stencil.radius},
          {"dtype", std::string(dtype_name(p.dtype()))},
          {"interior", {n.nx, n.ny, n.nz}},
          {"strides", {p.layout.line(), p.layout.slice()}},
          {"backend", impl_->backend},
          {"variant", impl_->variant},
          {"params", impl_->params},
          {"source", impl_->source},
          {"requires",
           {{"align_bytes", impl_->required_align},
            {"tail_bytes", impl_->required_tail},
            {"head_bytes", impl_->required_head}}},
          {"resources", impl_->launcher->resources()}};
}

}  // namespace fdstencil
