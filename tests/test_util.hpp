// Shared helpers of the analytic test tier: poisoning fields (NaN interior, sentinel halo and
// padding), filling them from a function or from a seeded generator whose seed is printed,
// comparing fields with a report of the first mismatches and their coordinates, checking that
// nothing outside the interior was written, and asserting on thrown fdstencil::Error values.
//
// The helpers deliberately avoid the library's own tables (op_axes, op_name, stencil_weights)
// where a test derives its expectations, so a wrong table cannot make its own test pass.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iostream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "fdstencil/backend.hpp"
#include "fdstencil/coefficients.hpp"
#include "fdstencil/error.hpp"
#include "fdstencil/field.hpp"
#include "fdstencil/layout.hpp"
#include "fdstencil/stencil.hpp"

namespace fdstencil {
// Lets GoogleTest print extents in failure messages.
inline void PrintTo(const Extents& e, std::ostream* os) {
  *os << "{" << e.nx << ", " << e.ny << ", " << e.nz << "}";
}
}  // namespace fdstencil

namespace fdstencil::test {

// ---------------------------------------------------------------------------------------------
// Operators and cases, written out independently of the library's tables.

inline std::array<bool, 3> axes_of(Op op) {
  switch (op) {
    case Op::laplacian7: return {true, true, true};
    case Op::d2x: return {true, false, false};
    case Op::d2y: return {false, true, false};
    case Op::d2z: return {false, false, true};
    case Op::d2xy: return {true, true, false};
    case Op::d2xyz: return {true, true, true};
  }
  return {false, false, false};
}

inline const char* name_of(Op op) {
  switch (op) {
    case Op::laplacian7: return "laplacian7";
    case Op::d2x: return "d2x";
    case Op::d2y: return "d2y";
    case Op::d2z: return "d2z";
    case Op::d2xy: return "d2xy";
    case Op::d2xyz: return "d2xyz";
  }
  return "?";
}

struct OpCase {
  Op op;
  int radius;
};

// Every operator at every radius it accepts: laplacian7 only at R = 1, the seismic ops at 1..8.
inline std::vector<OpCase> all_op_cases() {
  std::vector<OpCase> cases{{Op::laplacian7, 1}};
  for (Op op : {Op::d2x, Op::d2y, Op::d2z, Op::d2xy, Op::d2xyz})
    for (int r = 1; r <= kMaxRadius; ++r) cases.push_back({op, r});
  return cases;
}

inline std::string describe(const Stencil& s) {
  std::ostringstream os;
  os << name_of(s.op) << " R=" << s.radius << " h=(" << s.h.hx << ", " << s.h.hy << ", " << s.h.hz << ")";
  return os.str();
}

template <class T>
const char* type_name() {
  return std::is_same_v<T, float> ? "float" : "double";
}

// The backends this tier covers: the oracle and the OpenMP backend, called in the same loops.
inline std::vector<const Backend*> backends_under_test() { return {&reference_backend(), &cpu_backend()}; }

// ---------------------------------------------------------------------------------------------
// Round-off scale of an operator: sum over the differentiated axes of sum_r |w_r| / h_a^2.
// Every output is a sum of those weights times input values, so (this) * max|u| bounds the sum
// of the magnitudes of its terms, and a few eps of that bounds the round-off of any summation
// order, with or without FMA (recursive summation of n terms errs by at most (n-1) eps times the
// sum of magnitudes). The weights come from central_weights, which test_coefficients pins.
inline double weight_norm(const Stencil& s) {
  const auto axes = axes_of(s.op);
  const double h[3] = {s.h.hx, s.h.hy, s.h.hz};
  double norm = 0.0;
  for (int a = 0; a < 3; ++a) {
    if (!axes[a]) continue;
    double sum_abs = 0.0;
    for (double w : central_weights(2, s.radius, 1.0)) sum_abs += std::abs(w);
    norm += sum_abs / (h[a] * h[a]);
  }
  return norm;
}

// ---------------------------------------------------------------------------------------------
// Bit patterns.

template <class T>
using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;

template <class T>
Bits<T> bits_of(T v) {
  return std::bit_cast<Bits<T>>(v);
}

// A quiet NaN with a payload that no arithmetic produces (arithmetic yields the default NaN or
// propagates an input's payload, and the inputs never carry this one): a halo or padding element
// of an output that still holds these exact bits after apply was not written.
template <class T>
T sentinel_nan() {
  if constexpr (std::is_same_v<T, float>)
    return std::bit_cast<float>(uint32_t{0x7fc0a5a5u});
  else
    return std::bit_cast<double>(uint64_t{0x7ff80000a5a5a5a5ull});
}

template <class T>
constexpr T kEps = std::numeric_limits<T>::epsilon();

// ---------------------------------------------------------------------------------------------
// Regions of an allocation.

enum class Region : uint8_t { padding, halo, interior };

inline const char* region_name(Region r) {
  return r == Region::interior ? "interior" : r == Region::halo ? "halo" : "padding";
}

// Visits (i, j, k) for every point of the box widened by `pad` on every side: pad = 0 is the
// interior, pad = R the interior plus its halo.
template <class F>
void for_each_point(const Layout& l, int64_t pad, F&& f) {
  const Extents n = l.interior();
  for (int64_t k = -pad; k < n.nz + pad; ++k)
    for (int64_t j = -pad; j < n.ny + pad; ++j)
      for (int64_t i = -pad; i < n.nx + pad; ++i) f(i, j, k);
}

// The region of every element of the allocation; elements neither interior nor halo are padding
// (line padding, the alignment offset and the tail slack).
inline std::vector<Region> regions_of(const Layout& l) {
  std::vector<Region> region(static_cast<size_t>(l.alloc_elems()), Region::padding);
  const int64_t r = l.radius();
  const Extents n = l.interior();
  for_each_point(l, r, [&](int64_t i, int64_t j, int64_t k) {
    const bool inside = i >= 0 && i < n.nx && j >= 0 && j < n.ny && k >= 0 && k < n.nz;
    region[static_cast<size_t>(l.index(i, j, k))] = inside ? Region::interior : Region::halo;
  });
  return region;
}

// The coordinates an element index would have (meaningful for interior and halo elements).
inline std::string coords_of(const Layout& l, int64_t n) {
  const int64_t rel = n - l.offset();
  const int64_t r = l.radius();
  std::ostringstream os;
  if (rel < 0) {
    os << "(before the halo, element " << n << ")";
    return os.str();
  }
  const int64_t k = rel / l.slice(), rem = rel % l.slice();
  os << "(" << rem % l.line() - r << ", " << rem / l.line() - r << ", " << k - r << ")";
  return os.str();
}

// ---------------------------------------------------------------------------------------------
// Filling fields.

// Prints the seed once per call, so a failing run can be reproduced from the log alone.
inline uint64_t announce_seed(uint64_t seed, const std::string& what) {
  std::cout << "[   seed   ] " << what << ": seed " << seed << "\n";
  return seed;
}

// An output before apply: NaN in the interior (a skipped point stays NaN and fails the
// finiteness check), the sentinel NaN in the halo and the padding (a stray write changes bits).
template <class T>
void poison_output(HostField<T>& f) {
  f.fill(sentinel_nan<T>());
  for_each_point(f.layout(), 0, [&](int64_t i, int64_t j, int64_t k) {
    f.at(i, j, k) = std::numeric_limits<T>::quiet_NaN();
  });
}

// An input from a function of the coordinates over the interior and the halo (the points the
// stencil may read); the padding holds NaN so that a read of it poisons the result.
template <class T, class Fn>
void fill_input(HostField<T>& f, Fn&& u) {
  f.fill(std::numeric_limits<T>::quiet_NaN());
  for_each_point(f.layout(), f.radius(),
                 [&](int64_t i, int64_t j, int64_t k) { f.at(i, j, k) = static_cast<T>(u(i, j, k)); });
}

// An input of uniform random values in [lo, hi) over the interior and halo, padding NaN.
template <class T>
void fill_random(HostField<T>& f, uint64_t seed, double lo = -1.0, double hi = 1.0) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  fill_input(f, [&](int64_t, int64_t, int64_t) { return dist(gen); });
}

// The largest |value| over the interior and halo: the magnitude the stencil reads.
template <class T>
double max_abs_read(const HostField<T>& f) {
  double m = 0.0;
  for_each_point(f.layout(), f.radius(), [&](int64_t i, int64_t j, int64_t k) {
    m = std::max(m, std::abs(static_cast<double>(f.at(i, j, k))));
  });
  return m;
}

template <class T>
std::vector<T> snapshot(const HostField<T>& f) {
  return std::vector<T>(f.data(), f.data() + f.layout().alloc_elems());
}

// ---------------------------------------------------------------------------------------------
// Comparisons. Each returns an AssertionResult whose message lists the first few offenders with
// their coordinates, the count, and the largest difference.

// Every interior value is finite and within `tol` (absolute) of expected(i, j, k).
template <class T, class Expected>
::testing::AssertionResult interior_matches(const HostField<T>& got, Expected&& expected, double tol,
                                            int max_report = 5) {
  int64_t bad = 0;
  double worst = 0.0;
  std::ostringstream report;
  for_each_point(got.layout(), 0, [&](int64_t i, int64_t j, int64_t k) {
    const double g = static_cast<double>(got.at(i, j, k));
    const double e = static_cast<double>(expected(i, j, k));
    const double diff = std::abs(g - e);
    const bool ok = std::isfinite(g) && diff <= tol;
    if (std::isfinite(g)) worst = std::max(worst, diff);
    if (ok) return;
    if (bad < max_report)
      report << "\n  at (" << i << ", " << j << ", " << k << "): got " << g << ", expected " << e
             << ", |diff| " << diff;
    ++bad;
  });
  if (bad == 0) return ::testing::AssertionSuccess() << "max |diff| " << worst;
  return ::testing::AssertionFailure()
         << bad << " of " << got.interior().points() << " interior points differ by more than " << tol
         << " or are not finite (max finite |diff| " << worst << ")" << report.str();
}

template <class T>
::testing::AssertionResult fields_match(const HostField<T>& got, const HostField<T>& want, double tol) {
  if (!(got.layout() == want.layout()))
    return ::testing::AssertionFailure() << "the two fields have different layouts";
  return interior_matches(
      got, [&](int64_t i, int64_t j, int64_t k) { return want.at(i, j, k); }, tol);
}

// Every element outside the interior (halo and padding) holds the same bits as `before`.
template <class T>
::testing::AssertionResult outside_interior_unchanged(const HostField<T>& after, const std::vector<T>& before,
                                                      int max_report = 5) {
  const Layout& l = after.layout();
  if (static_cast<int64_t>(before.size()) != l.alloc_elems())
    return ::testing::AssertionFailure() << "snapshot size differs from the allocation";
  const std::vector<Region> region = regions_of(l);
  int64_t bad = 0;
  std::ostringstream report;
  for (int64_t n = 0; n < l.alloc_elems(); ++n) {
    if (region[static_cast<size_t>(n)] == Region::interior) continue;
    if (bits_of(after.data()[n]) == bits_of(before[static_cast<size_t>(n)])) continue;
    if (bad < max_report)
      report << "\n  " << region_name(region[static_cast<size_t>(n)]) << " element " << n << " at "
             << coords_of(l, n) << ": was " << before[static_cast<size_t>(n)] << " (bits 0x" << std::hex
             << bits_of(before[static_cast<size_t>(n)]) << "), now " << std::dec << after.data()[n]
             << " (bits 0x" << std::hex << bits_of(after.data()[n]) << std::dec << ")";
    ++bad;
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " halo/padding elements were modified" << report.str();
}

// Every interior value is finite (a NaN left from poisoning means a point was skipped).
template <class T>
::testing::AssertionResult interior_all_finite(const HostField<T>& f, int max_report = 5) {
  int64_t bad = 0;
  std::ostringstream report;
  for_each_point(f.layout(), 0, [&](int64_t i, int64_t j, int64_t k) {
    if (std::isfinite(f.at(i, j, k))) return;
    if (bad < max_report) report << "\n  at (" << i << ", " << j << ", " << k << "): " << f.at(i, j, k);
    ++bad;
  });
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " interior values are not finite" << report.str();
}

template <class T>
::testing::AssertionResult interior_not_all_zero(const HostField<T>& f) {
  bool any = false;
  for_each_point(f.layout(), 0, [&](int64_t i, int64_t j, int64_t k) {
    if (f.at(i, j, k) != T(0)) any = true;
  });
  if (any) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "every interior value is zero";
}

// ---------------------------------------------------------------------------------------------
// Errors.

inline const char* kind_name(ErrorKind k) {
  switch (k) {
    case ErrorKind::invalid_argument: return "invalid_argument";
    case ErrorKind::out_of_memory: return "out_of_memory";
    case ErrorKind::io: return "io";
    case ErrorKind::unsupported: return "unsupported";
    case ErrorKind::device: return "device";
    case ErrorKind::verification: return "verification";
    case ErrorKind::interrupted: return "interrupted";
  }
  return "?";
}

inline std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// f() throws fdstencil::Error of `kind` whose message contains (case-insensitively) at least one
// of `any_of` — the words a user would need to see to recognise the problem.
template <class F>
::testing::AssertionResult throws_error(F&& f, ErrorKind kind,
                                        std::initializer_list<std::string_view> any_of) {
  try {
    f();
  } catch (const Error& e) {
    if (e.kind() != kind)
      return ::testing::AssertionFailure() << "threw Error(" << kind_name(e.kind()) << ") instead of Error("
                                           << kind_name(kind) << "): \"" << e.what() << "\"";
    const std::string msg = lower(e.what());
    bool named = any_of.size() == 0;
    for (std::string_view s : any_of)
      if (msg.find(lower(s)) != std::string::npos) named = true;
    if (!named) {
      auto fail = ::testing::AssertionFailure();
      fail << "message \"" << e.what() << "\" contains none of:";
      for (std::string_view s : any_of) fail << " \"" << s << "\"";
      return fail;
    }
    return ::testing::AssertionSuccess() << "threw \"" << e.what() << "\"";
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw a non-fdstencil exception: " << e.what();
  } catch (...) {
    return ::testing::AssertionFailure() << "threw something that is not a std::exception";
  }
  return ::testing::AssertionFailure() << "did not throw (expected Error(" << kind_name(kind) << "))";
}

}  // namespace fdstencil::test
