// Source wavelets: the Ricker wavelet, the frequency band a wavelet occupies, and band-limited
// resampling between sample intervals (user wavelets in, shot records out).
#include <algorithm>
#include <cmath>
#include <complex>
#include <string>

#include "fdstencil/error.hpp"
#include "fdstencil/wave.hpp"

namespace fdstencil::wave {

std::vector<double> ricker(double f0, double delay, double dt, int64_t nt) {
  if (!(f0 > 0) || !std::isfinite(f0))
    throw Error(ErrorKind::invalid_argument,
                "the Ricker peak frequency must be positive, got " + std::to_string(f0));
  if (!(dt > 0) || nt < 0) throw Error(ErrorKind::invalid_argument, "a wavelet needs dt > 0 and nt >= 0");
  std::vector<double> w(static_cast<size_t>(nt));
  for (int64_t n = 0; n < nt; ++n) {
    const double a = std::pow(M_PI * f0 * (double(n) * dt - delay), 2);
    w[size_t(n)] = (1 - 2 * a) * std::exp(-a);
  }
  return w;
}

double highest_significant_frequency(const std::vector<double>& w, double dt) {
  if (w.empty() || !(dt > 0)) return 0;
  // Only the wavelet's support matters; trimming it keeps the direct transform cheap.
  double peak = 0;
  for (double x : w) peak = std::max(peak, std::abs(x));
  if (peak == 0) return 0;
  size_t b = 0, e = w.size();
  while (b < e && std::abs(w[b]) < 1e-7 * peak) ++b;
  while (e > b && std::abs(w[e - 1]) < 1e-7 * peak) --e;
  // The amplitude spectrum on 4000 frequencies from 0 to Nyquist (fine enough to place the 1 %
  // point within 0.03 % of Nyquist).
  constexpr int kFreqs = 4000;
  const double nyquist = 0.5 / dt;
  // Over the threads, each term's phase by one complex product rather than a sine and a cosine
  // (its rounding grows by ~1e-16 a term, nothing beside the 1 % threshold): a run asks twice (its
  // sampling warning, its CPML's profile), and the transform was most of a small model's setup.
  std::vector<double> amp(kFreqs + 1);
#pragma omp parallel for schedule(static)
  for (int f = 0; f <= kFreqs; ++f) {
    const double omega = 2 * M_PI * nyquist * f / kFreqs * dt;
    const std::complex<double> turn = std::polar(1.0, -omega);
    std::complex<double> s = 0, phase = std::polar(1.0, -omega * double(b));
    for (size_t n = b; n < e; ++n, phase *= turn) s += w[n] * phase;
    amp[size_t(f)] = std::abs(s);
  }
  const double amax = *std::max_element(amp.begin(), amp.end());
  for (int f = kFreqs; f >= 0; --f)
    if (amp[size_t(f)] >= 0.01 * amax) return nyquist * f / kFreqs;
  return 0;
}

std::vector<double> resample(const std::vector<double>& x, double dt_in, double dt_out, int64_t n_out) {
  if (!(dt_in > 0) || !(dt_out > 0) || n_out < 0)
    throw Error(ErrorKind::invalid_argument, "resampling needs positive sample intervals and n_out >= 0");
  std::vector<double> y(size_t(n_out), 0.0);
  if (dt_in == dt_out) {
    std::copy_n(x.begin(), std::min<size_t>(x.size(), y.size()), y.begin());
    return y;
  }
  // A windowed sinc low-passed at the lower Nyquist frequency: exact at the input's own samples
  // when upsampling, an anti-alias filter when downsampling. Blackman window (sidelobes ~-58 dB)
  // over 16 zero crossings of the filter on each side.
  const double fc = 0.5 / std::max(dt_in, dt_out);
  constexpr double kCrossings = 16;
  const double half = kCrossings / (2 * fc);
  for (int64_t n = 0; n < n_out; ++n) {
    const double t = double(n) * dt_out;
    const int64_t m0 = std::max<int64_t>(0, int64_t(std::ceil((t - half) / dt_in)));
    const int64_t m1 = std::min<int64_t>(int64_t(x.size()) - 1, int64_t(std::floor((t + half) / dt_in)));
    double s = 0;
    for (int64_t m = m0; m <= m1; ++m) {
      const double tau = t - double(m) * dt_in;
      const double arg = 2 * fc * tau;
      const double sinc = arg == 0 ? 1.0 : std::sin(M_PI * arg) / (M_PI * arg);
      const double wpos = tau / half;  // -1..1
      const double win = 0.42 + 0.5 * std::cos(M_PI * wpos) + 0.08 * std::cos(2 * M_PI * wpos);
      s += x[size_t(m)] * 2 * fc * dt_in * sinc * win;
    }
    y[size_t(n)] = s;
  }
  return y;
}

}  // namespace fdstencil::wave
