// Born modelling, its adjoint and the FWI gradient on the cpu (fdstencil/imaging.hpp): the forward
// step is cpu::AcousticCpu's, its transpose cpu::AcousticAdjointCpu's.
//
// Everything that depends on m in u^{n+1} = 2 u^n - u^{n-1} + m L(u^n) + m w f^n / h^dim is
// proportional to it, so du^{n+1}/dm = (u^{n+1} - 2 u^n + u^{n-1}) / m pointwise, the sources'
// scaling included; on a free surface, where the step sets u^{n+1} to zero before the sources
// are added, it is u^{n+1} / m (the sources' part alone). Born's source term and the gradient's
// correlation both read this dudm, so the pair is exact whatever its round-off.
#include "fdstencil/imaging.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include <unistd.h>

#include "cpu/acoustic.hpp"
#include "cpu/acoustic_adjoint.hpp"
#include "fdstencil/error.hpp"
#include "wave/setup.hpp"

namespace fdstencil::wave {

namespace {

[[noreturn]] void bad(const std::string& what) { throw Error(ErrorKind::invalid_argument, what); }

int64_t model_points(const Model& model) { return model.nz * model.ny * model.nx; }

void check_size(std::span<const double> a, int64_t want, const std::string& name, const std::string& shape) {
  if (int64_t(a.size()) != want)
    bad(name + ": expected " + std::to_string(want) + " values " + shape + ", got " +
        std::to_string(a.size()));
  for (size_t i = 0; i < a.size(); ++i)
    if (!std::isfinite(a[i])) bad(name + ": value " + std::to_string(i) + " is not finite");
}

std::string traces_shape(const Options& o) {
  return "(" + std::to_string(o.receivers.size()) + " receivers x " + std::to_string(o.nt) + " steps)";
}

// f(p, point) for every computational point p and the model point it takes its velocity from
// (the layers take their edge's: the medium's extension, solver.cpp's m_at).
template <class F>
void for_each_point(const Domain& d, F&& f) {
  for (int64_t k = 0; k < d.nz; ++k) {
    const int64_t mk = std::clamp<int64_t>(k - d.lo[2], 0, d.model_nz - 1);
    for (int64_t j = 0; j < d.ny; ++j) {
      const int64_t mj = std::clamp<int64_t>(j - d.lo[1], 0, d.model_ny - 1);
      for (int64_t i = 0; i < d.nx; ++i) {
        const int64_t mi = std::clamp<int64_t>(i - d.lo[0], 0, d.model_nx - 1);
        f(d.index(i, j, k), (mk * d.model_ny + mj) * d.model_nx + mi);
      }
    }
  }
}

// dm/dv = 2 v dt^2 at model point `point`.
double dm_dv(const Model& model, int64_t point, double dt) {
  const int64_t plane = model.ny * model.nx;
  return 2.0 * double(model.plane(point / plane)[point % plane]) * dt * dt;
}

// dudm for step n: (u^{n+1} - 2 u^n + u^{n-1}) / m, and u^{n+1} / m on a free surface.
template <class T>
void dudm(const acoustic::Setup<T>& s, const T* next, const T* cur, const T* prev, T* out) {
#pragma omp parallel for schedule(static)
  for (int64_t k = 0; k < s.nz; ++k)
    for (int64_t j = 0; j < s.ny; ++j) {
      const int64_t row = s.origin + j * s.line + k * s.slice;
      const bool surface = s.free_surface && k == 0;
      for (int64_t i = row; i < row + s.nx; ++i)
        out[i] = (surface ? next[i] : next[i] - T(2) * cur[i] + prev[i]) / s.m[size_t(i)];
    }
}

// The forward run, handing `each(n, dudm)` the time derivative of every step n.
template <class T, class Each>
std::vector<T> forward(const acoustic::Setup<T>& s, Each&& each) {
  cpu::AcousticCpu<T> run{acoustic::Setup<T>(s)};
  const size_t n = size_t(s.alloc);
  std::vector<T> prev(n, T(0)), cur(n, T(0)), d(n, T(0));
  for (int64_t step = 0; step < s.nt; ++step) {
    std::copy_n(run.current(), n, cur.data());
    run.step(step);
    dudm(s, run.current(), cur.data(), prev.data(), d.data());
    each(step, d.data());
    std::swap(prev, cur);
  }
  return run.traces();
}

// The velocity-space result of a gradient over m (the computational points): dm/dv of each
// point's velocity, summed over the points that take it.
std::vector<double> to_velocity(const Model& model, const Domain& d, double dt,
                                const std::vector<double>& grad_m) {
  std::vector<double> g(size_t(model_points(model)), 0.0);
  for_each_point(d, [&](int64_t p, int64_t point) { g[size_t(point)] += grad_m[size_t(p)]; });
  for (int64_t point = 0; point < int64_t(g.size()); ++point) g[size_t(point)] *= dm_dv(model, point, dt);
  return g;
}

template <class T>
void check_storage(const acoustic::Setup<T>& s) {
  const double bytes = double(s.nt) * double(s.alloc) * double(sizeof(T));
  const double host = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGESIZE));
  if (bytes > 0.8 * host)
    throw Error(ErrorKind::out_of_memory,
                "the backward pass keeps the forward field's time derivative at every step: " +
                    std::to_string(int64_t(bytes / (1 << 20))) + " MiB, more than 80 % of this host's " +
                    std::to_string(int64_t(host / (1 << 20))) + " MiB (fewer steps or a smaller model)");
}

// The backward pass over a stored forward: sum over steps of P dudm over m, for residual dd.
template <class T>
std::vector<double> adjoint_over_m(const acoustic::Setup<T>& s, const std::vector<T>& store,
                                   const std::vector<T>& dd) {
  std::vector<double> grad_m(size_t(s.alloc), 0.0);
  cpu::AcousticAdjointCpu<T> adj(s);
  for (int64_t n = s.nt - 1; n >= 0; --n)
    adj.step(n, dd.data(), store.data() + size_t(n) * size_t(s.alloc), grad_m.data(), nullptr);
  return grad_m;
}

template <class T>
std::vector<T> as_t(std::span<const double> a) {
  return std::vector<T>(a.begin(), a.end());
}

template <class T>
std::vector<double> born_typed(const Model& model, const Options& o, std::span<const double> dv) {
  detail::CpuSetupFrame f;
  const acoustic::Setup<T> s = detail::cpu_setup<T>(model, o, f);
  std::vector<T> dm(size_t(s.alloc), T(0));
  for_each_point(f.d, [&](int64_t p, int64_t point) {
    dm[size_t(p)] = T(dm_dv(model, point, f.dt) * dv[size_t(point)]);
  });
  acoustic::Setup<T> quiet(s);  // the scattered field: the same receivers, no sources of its own
  quiet.sources.clear();
  cpu::AcousticCpu<T> scattered(std::move(quiet));
  forward(s, [&](int64_t n, const T* du) {
    scattered.step(n);
    T* u = scattered.current();
    for (int64_t i = 0; i < s.alloc; ++i) u[i] += dm[size_t(i)] * du[i];
  });
  return {scattered.traces().begin(), scattered.traces().end()};
}

template <class T>
std::pair<std::vector<double>, std::vector<T>> backward_typed(const Model& model, const Options& o,
                                                              std::span<const double> observed, bool residual,
                                                              detail::CpuSetupFrame& f) {
  const acoustic::Setup<T> s = detail::cpu_setup<T>(model, o, f);
  check_storage(s);
  std::vector<T> store(size_t(s.nt) * size_t(s.alloc));
  std::vector<T> traces = forward(s, [&](int64_t n, const T* du) {
    std::copy_n(du, s.alloc, store.data() + size_t(n) * size_t(s.alloc));
  });
  std::vector<T> dd = as_t<T>(observed);
  if (residual)
    for (size_t i = 0; i < dd.size(); ++i) dd[i] = traces[i] - dd[i];
  std::vector<double> grad_m = adjoint_over_m(s, store, dd);
  return {to_velocity(model, f.d, f.dt, grad_m), std::move(traces)};
}

template <class T>
std::vector<double> source_adjoint_typed(const Model& model, const Options& o, std::span<const double> dd) {
  detail::CpuSetupFrame f;
  const acoustic::Setup<T> s = detail::cpu_setup<T>(model, o, f);
  const std::vector<T> r = as_t<T>(dd);
  std::vector<T> out(size_t(s.nsrc) * size_t(s.nt), T(0));
  cpu::AcousticAdjointCpu<T> adj(s);
  for (int64_t n = s.nt - 1; n >= 0; --n) adj.step(n, r.data(), nullptr, nullptr, out.data());
  return {out.begin(), out.end()};
}

}  // namespace

std::vector<double> modelled(const Model& model, const Options& o) {
  detail::CpuSetupFrame f;
  const auto run = [&]<class T>() -> std::vector<double> {
    const acoustic::Setup<T> s = detail::cpu_setup<T>(model, o, f);
    const std::vector<T> t = forward(s, [](int64_t, const T*) {});
    return {t.begin(), t.end()};
  };
  return o.double_precision ? run.template operator()<double>() : run.template operator()<float>();
}

std::vector<double> born(const Model& model, const Options& o, std::span<const double> dv) {
  check_size(dv, model_points(model), "dv", "(the model's points)");
  return o.double_precision ? born_typed<double>(model, o, dv) : born_typed<float>(model, o, dv);
}

std::vector<double> born_adjoint(const Model& model, const Options& o, std::span<const double> dd) {
  check_size(dd, int64_t(o.receivers.size()) * o.nt, "dd", traces_shape(o));
  detail::CpuSetupFrame f;
  return o.double_precision ? backward_typed<double>(model, o, dd, false, f).first
                            : backward_typed<float>(model, o, dd, false, f).first;
}

std::vector<double> source_adjoint(const Model& model, const Options& o, std::span<const double> dd) {
  check_size(dd, int64_t(o.receivers.size()) * o.nt, "dd", traces_shape(o));
  return o.double_precision ? source_adjoint_typed<double>(model, o, dd)
                            : source_adjoint_typed<float>(model, o, dd);
}

Gradient gradient(const Model& model, const Options& o, std::span<const double> observed) {
  check_size(observed, int64_t(o.receivers.size()) * o.nt, "observed", traces_shape(o));
  detail::CpuSetupFrame f;
  Gradient g;
  const auto run = [&]<class T>() {
    auto [velocity, traces] = backward_typed<T>(model, o, observed, true, f);
    g.velocity = std::move(velocity);
    g.traces.assign(traces.begin(), traces.end());
    g.stored_bytes = int64_t(o.nt) * f.d.alloc * int64_t(sizeof(T));
  };
  if (o.double_precision)
    run.template operator()<double>();
  else
    run.template operator()<float>();
  for (size_t i = 0; i < g.traces.size(); ++i) {
    const double r = g.traces[i] - observed[i];
    g.misfit += 0.5 * r * r;
  }
  return g;
}

}  // namespace fdstencil::wave
