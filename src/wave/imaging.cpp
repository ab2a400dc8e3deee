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
  // Appended piece by piece: GCC 12 warns (-Wrestrict, a false positive) on the one-expression form.
  std::string s = "(";
  s += std::to_string(o.receivers.size());
  s += " receivers x ";
  s += std::to_string(o.nt);
  s += " steps)";
  return s;
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

// The forward run, handing `each(n, dudm)` du^{n+1}/dm of every step n.
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
  const double bytes = double(s.nt + 1) * double(s.alloc) * double(sizeof(T));
  const double host = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGESIZE));
  if (bytes > 0.8 * host)
    throw Error(ErrorKind::out_of_memory,
                "the backward pass keeps the forward field of every step: " +
                    std::to_string(int64_t(bytes / (1 << 20))) + " MiB, more than 80 % of this host's " +
                    std::to_string(int64_t(host / (1 << 20))) + " MiB (fewer steps or a smaller model)");
}

// The forward run with every step's field kept, u^0 .. u^nt at fields[n alloc] (u^0 = 0, the run
// starting at rest): its traces.
template <class T>
std::vector<T> forward_kept(const acoustic::Setup<T>& s, std::vector<T>& fields) {
  check_storage(s);
  const size_t n = size_t(s.alloc);
  fields.assign((size_t(s.nt) + 1) * n, T(0));
  cpu::AcousticCpu<T> run{acoustic::Setup<T>(s)};
  for (int64_t step = 0; step < s.nt; ++step) {
    run.step(step);
    std::copy_n(run.current(), n, fields.data() + (size_t(step) + 1) * n);
  }
  return run.traces();
}

// What the backward pass accumulates over the computational points: sum over steps of
// ubar^{n+1} du^{n+1}/dm (the adjoint's correlation, d misfit / dm), and when asked sum of
// u^n ubar^n (the zero-lag cross-correlation) and of (u^n)^2 (the source's illumination).
struct Correlations {
  std::vector<double> adjoint, cross, illumination;
};

template <class T>
Correlations backward(const acoustic::Setup<T>& s, const std::vector<T>& fields, const std::vector<T>& dd,
                      bool cross) {
  const size_t n = size_t(s.alloc);
  Correlations c;
  c.adjoint.assign(n, 0.0);
  if (cross) {
    c.cross.assign(n, 0.0);
    c.illumination.assign(n, 0.0);
  }
  const std::vector<T> rest(n, T(0));  // u^{-1}
  std::vector<T> du(n, T(0));
  cpu::AcousticAdjointCpu<T> adj(s);
  for (int64_t step = s.nt - 1; step >= 0; --step) {
    const T* cur = fields.data() + size_t(step) * n;
    dudm(s, cur + n, cur, step > 0 ? cur - n : rest.data(), du.data());
    adj.step(step, dd.data(), du.data(), c.adjoint.data(), nullptr);
    if (!cross) continue;
    const T* ubar = adj.current();
    for (size_t i = 0; i < n; ++i) {  // zero outside the computational points in both fields
      c.cross[i] += double(cur[i]) * double(ubar[i]);
      c.illumination[i] += double(cur[i]) * double(cur[i]);
    }
  }
  return c;
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
  std::vector<T> fields;
  std::vector<T> traces = forward_kept(s, fields);
  std::vector<T> dd = as_t<T>(observed);
  if (residual)
    for (size_t i = 0; i < dd.size(); ++i) dd[i] = traces[i] - dd[i];
  return {to_velocity(model, f.d, f.dt, backward(s, fields, dd, false).adjoint), std::move(traces)};
}
// The model's points of a computational-point array.
std::vector<double> on_model(const Domain& d, const std::vector<double>& a) {
  std::vector<double> out(size_t(d.model_nz * d.model_ny * d.model_nx));
  for (int64_t k = 0; k < d.model_nz; ++k)
    for (int64_t j = 0; j < d.model_ny; ++j)
      for (int64_t i = 0; i < d.model_nx; ++i)
        out[size_t((k * d.model_ny + j) * d.model_nx + i)] =
            a[size_t(d.index(i + d.lo[0], j + d.lo[1], k + d.lo[2]))];
  return out;
}

// -(sum over axes of the 3-point second difference), zero outside the model's points.
std::vector<double> minus_laplacian(const Domain& d, const std::vector<double>& a) {
  const int64_t n[3] = {d.model_nx, d.model_ny, d.model_nz},
                stride[3] = {1, d.model_nx, d.model_nx * d.model_ny};
  std::vector<double> out(a.size(), 0.0);
  for (int64_t k = 0; k < n[2]; ++k)
    for (int64_t j = 0; j < n[1]; ++j)
      for (int64_t i = 0; i < n[0]; ++i) {
        const int64_t c[3] = {i, j, k}, p = k * stride[2] + j * stride[1] + i;
        double sum = 0;
        for (int ax = 0; ax < 3; ++ax) {
          if (n[ax] == 1) continue;
          const double lo = c[ax] > 0 ? a[size_t(p - stride[ax])] : 0.0;
          const double hi = c[ax] < n[ax] - 1 ? a[size_t(p + stride[ax])] : 0.0;
          sum += lo - 2 * a[size_t(p)] + hi;
        }
        out[size_t(p)] = -sum;
      }
  return out;
}

template <class T>
std::vector<double> rtm_typed(const Model& model, const Options& o, std::span<const double> recorded,
                              const RtmOptions& r) {
  detail::CpuSetupFrame f;
  const acoustic::Setup<T> s = detail::cpu_setup<T>(model, o, f);
  std::vector<T> fields;
  forward_kept(s, fields);
  const bool cross = r.condition == ImagingCondition::crosscorrelation;
  const Correlations c = backward(s, fields, as_t<T>(recorded), cross || r.illumination);
  std::vector<double> image = on_model(f.d, cross ? c.cross : c.adjoint);
  if (r.illumination) {
    const std::vector<double> light = on_model(f.d, c.illumination);
    const double most = *std::max_element(light.begin(), light.end());
    if (!(most > 0))
      bad("illumination: the source's field is zero at every point and step (no wavelet energy in the run)");
    const double floor = 1e-6 * most;
    for (size_t i = 0; i < image.size(); ++i) image[i] /= light[i] + floor;
  }
  return r.laplacian ? minus_laplacian(f.d, image) : image;
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

std::vector<double> rtm(const Model& model, const Options& o, std::span<const double> recorded,
                        const RtmOptions& r) {
  check_size(recorded, int64_t(o.receivers.size()) * o.nt, "recorded", traces_shape(o));
  return o.double_precision ? rtm_typed<double>(model, o, recorded, r)
                            : rtm_typed<float>(model, o, recorded, r);
}

Gradient gradient(const Model& model, const Options& o, std::span<const double> observed) {
  check_size(observed, int64_t(o.receivers.size()) * o.nt, "observed", traces_shape(o));
  detail::CpuSetupFrame f;
  Gradient g;
  const auto run = [&]<class T>() {
    auto [velocity, traces] = backward_typed<T>(model, o, observed, true, f);
    g.velocity = std::move(velocity);
    g.traces.assign(traces.begin(), traces.end());
    g.stored_bytes = int64_t(o.nt + 1) * f.d.alloc * int64_t(sizeof(T));
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
