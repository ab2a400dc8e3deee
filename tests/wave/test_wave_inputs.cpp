// Everything a user can get wrong, refused with the words they need (invalid_argument, io or
// out_of_memory, as wave.hpp promises), and the small building blocks checked on their own: the
// domain's extents and z slabs, the Ricker wavelet, its highest significant frequency, and
// band-limited resampling.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "fdstencil/device_field.hpp"
#include "fdstencil/npy.hpp"
#include "fdstencil/wave.hpp"
#include "npy_as_numpy.hpp"
#include "test_util.hpp"
#include "wave/wave_test_util.hpp"

using namespace fdstencil;
using test::kPi;
using test::report;
using test::ricker_at;
using test::throws_error;
namespace fs = std::filesystem;

namespace {

// A run that is fine as it stands: each test breaks one thing.
struct Valid {
  wave::Model model = wave::Model::constant(2, 30, 1, 40, 10.0, 2000.f);
  wave::Options options;
  Valid() {
    options.backend = "cpu";
    options.nt = 8;
    options.boundary.cpml_width = 5;
    options.sources = {{{145.0, 0, 195.0}, std::vector<double>(8, 0.0)}};
    options.sources[0].wavelet[1] = 1.0;
    options.receivers = {{100.0, 0, 100.0}};
  }
};

}  // namespace

// --- the model -----------------------------------------------------------------------------------

TEST(WaveInputs, ValidateRefusesBadVelocitiesNamingWhere) {
  const float bad[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                       -std::numeric_limits<float>::infinity(), 0.f, -1500.f};
  for (int dim : {2, 3})
    for (float b : bad) {
      // (z, y, x) = (13, 2, 29) in 3D, (13, 29) in 2D: numbers that occur nowhere else in the message.
      const int64_t nz = 17, ny = dim == 3 ? 5 : 1, nx = 37, k = 13, j = dim == 3 ? 2 : 0, i = 29;
      wave::Model m = wave::Model::constant(dim, nz, ny, nx, 10.0, 2000.f);
      EXPECT_NO_THROW(m.validate());
      const int64_t flat = (k * ny + j) * nx + i;
      m.v[size_t(flat)] = b;
      std::string msg;
      EXPECT_TRUE(throws_error([&] { m.validate(); }, ErrorKind::invalid_argument, {"velocit"})) << b;
      try {
        m.validate();
      } catch (const Error& e) {
        msg = e.what();
      }
      const bool coordinates = msg.find("13") != std::string::npos && msg.find("29") != std::string::npos;
      EXPECT_TRUE(coordinates || msg.find(std::to_string(flat)) != std::string::npos)
          << "the message does not say where: " << msg;
    }
}

// summarise(): validate(), extremes() and checksum() in one pass over runs of values on the
// threads, the runs' checksums combined; the same figures, on a model of several runs with a last
// run cut short, and on values the model borrows instead of holding.
TEST(WaveInputs, SummariseGivesTheSeparatePassesFiguresAndNamesABadValue) {
  const int64_t nz = 23, ny = 301, nx = 407;  // 2.8 M values: runs of 2^20, the last partial
  wave::Model held = wave::Model::constant(3, nz, ny, nx, 10.0, 2000.f);
  for (size_t p = 0; p < held.v.size(); ++p) held.v[p] = 1500.f + float((p * 7919) % 3001);
  held.v[2'500'123] = 1499.5f;  // the least, in the third run
  held.v[17] = 4600.25f;        // the largest, in the first
  const uint32_t crc = held.checksum();
  wave::Model borrowed = held;
  borrowed.v.clear();
  borrowed.borrowed = std::span<const float>(held.v);
  for (wave::Model* m : {&held, &borrowed}) {
    m->summarise();
    ASSERT_TRUE(m->whole.has_value());
    EXPECT_EQ(m->whole->vmin, 1499.5f);
    EXPECT_EQ(m->whole->vmax, 4600.25f);
    EXPECT_EQ(m->whole->crc, crc);
    EXPECT_EQ(m->plane(nz - 1)[ny * nx - 1], held.v.back());
  }
  std::vector<float> spoilt = held.v;
  spoilt[size_t((19 * ny + 211) * nx + 389)] = std::numeric_limits<float>::quiet_NaN();
  wave::Model bad = held;
  bad.borrowed = std::span<const float>(spoilt);
  EXPECT_TRUE(throws_error([&] { bad.summarise(); }, ErrorKind::invalid_argument, {"19", "211", "389"}));
  EXPECT_FALSE(bad.whole.has_value());
}

TEST(WaveInputs, ValidateRefusesSizeMismatchBadSpacingAndBadShape) {
  wave::Model m = wave::Model::constant(3, 6, 7, 8, 10.0, 2000.f);
  m.v.pop_back();
  EXPECT_TRUE(throws_error([&] { m.validate(); }, ErrorKind::invalid_argument, {"335", "336"}));
  for (double h :
       {0.0, -10.0, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
    wave::Model s = wave::Model::constant(2, 6, 1, 8, 10.0, 2000.f);
    s.h = h;
    EXPECT_TRUE(throws_error([&] { s.validate(); }, ErrorKind::invalid_argument, {"spacing"})) << h;
    EXPECT_TRUE(throws_error([&] { wave::Model::constant(2, 6, 1, 8, h, 2000.f); },
                             ErrorKind::invalid_argument, {"spacing"}))
        << h;
  }
  wave::Model d = wave::Model::constant(2, 6, 1, 8, 10.0, 2000.f);
  d.dim = 4;
  EXPECT_TRUE(throws_error([&] { d.validate(); }, ErrorKind::invalid_argument, {"2D", "3D", "dim"}));
  wave::Model y = wave::Model::constant(2, 6, 1, 8, 10.0, 2000.f);
  y.ny = 2;
  y.v.resize(size_t(y.points()), 2000.f);
  EXPECT_TRUE(throws_error([&] { y.validate(); }, ErrorKind::invalid_argument, {"ny"}));
  EXPECT_TRUE(throws_error([] { wave::Model::constant(3, 0, 4, 4, 10.0, 2000.f); },
                           ErrorKind::invalid_argument, {"extent"}));
  EXPECT_TRUE(throws_error([] { wave::Model::constant(3, 4, 4, 4, 10.0, -1.f); }, ErrorKind::invalid_argument,
                           {"velocity"}));
}

TEST(WaveInputs, LayeredPlacesLayersByDepthAndRefusesBadLayers) {
  const wave::Model m =
      wave::Model::layered(2, 10, 1, 3, 10.0, {{0.0, 1500.f}, {35.0, 2000.f}, {60.0, 3000.f}});
  // z = 10 k: k <= 3 is above 35 m, 4..5 above 60 m, 6.. below.
  for (int64_t k = 0; k < 10; ++k) {
    const float want = k * 10 < 35 ? 1500.f : k * 10 < 60 ? 2000.f : 3000.f;
    for (int64_t i = 0; i < 3; ++i) EXPECT_EQ(m.v[size_t(k * 3 + i)], want) << "k " << k;
  }
  EXPECT_EQ(m.vmin(), 1500.f);
  EXPECT_EQ(m.vmax(), 3000.f);
  const auto layered = [](std::vector<std::pair<double, float>> l) {
    return [l] { wave::Model::layered(2, 10, 1, 3, 10.0, l); };
  };
  EXPECT_TRUE(throws_error(layered({{0.0, 1500.f}, {40.0, 2000.f}, {40.0, 2500.f}}),
                           ErrorKind::invalid_argument, {"increase"}));
  EXPECT_TRUE(throws_error(layered({{0.0, 1500.f}, {40.0, 2000.f}, {30.0, 2500.f}}),
                           ErrorKind::invalid_argument, {"increase"}));
  EXPECT_TRUE(
      throws_error(layered({{10.0, 1500.f}, {40.0, 2000.f}}), ErrorKind::invalid_argument, {"depth 0"}));
  EXPECT_TRUE(throws_error(layered({}), ErrorKind::invalid_argument, {"layer"}));
  EXPECT_TRUE(throws_error(layered({{0.0, 1500.f}, {40.0, 0.f}}), ErrorKind::invalid_argument, {"velocit"}));
}

namespace {

class WaveNpy : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("fds-wave-npy-" + std::to_string(::getpid()) + "-" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  template <class T>
  fs::path write(const std::string& name, const std::vector<int64_t>& shape, const std::vector<T>& data) {
    const fs::path p = dir_ / name;
    write_npy(p, dtype_of<T>(), shape, data.data(), int64_t(data.size() * sizeof(T)));
    return p;
  }
  fs::path dir_;
};

}  // namespace

TEST_F(WaveNpy, LoadsTwoAndThreeDimensionalFloat32) {
  std::vector<float> v2(5 * 7), v3(4 * 3 * 6);
  for (size_t i = 0; i < v2.size(); ++i) v2[i] = 1500.f + float(i);
  for (size_t i = 0; i < v3.size(); ++i) v3[i] = 2000.f + float(i);
  const wave::Model m2 = wave::Model::from_npy(write("v2.npy", {5, 7}, v2), 12.5);
  EXPECT_EQ(m2.dim, 2);
  EXPECT_EQ(m2.nz, 5);
  EXPECT_EQ(m2.ny, 1);
  EXPECT_EQ(m2.nx, 7);
  EXPECT_EQ(m2.h, 12.5);
  EXPECT_EQ(m2.v, v2);
  const wave::Model m3 = wave::Model::from_npy(write("v3.npy", {4, 3, 6}, v3), 5.0);
  EXPECT_EQ(m3.dim, 3);
  EXPECT_EQ(m3.nz, 4);
  EXPECT_EQ(m3.ny, 3);
  EXPECT_EQ(m3.nx, 6);
  EXPECT_EQ(m3.v, v3);
}

// A model as NumPy writes it from an array it did not make itself (issue 33: refused before):
// float64, big-endian, Fortran order (np.save of a transposed array), each read as the float32
// C-order file of the same values, whole and as a split run's window of planes.
TEST_F(WaveNpy, Float64BigEndianAndFortranOrderModelsReadAsFloat32) {
  const int64_t nz = 4, ny = 3, nx = 5;
  std::vector<float> c(size_t(nz * ny * nx));
  for (size_t i = 0; i < c.size(); ++i) c[i] = 1500.f + 7.f * float(i);
  const wave::Model want = wave::Model::from_npy(write("c.npy", {nz, ny, nx}, c), 10.0);
  const std::vector<double> f64(c.begin(), c.end());
  fs::path files[4];
  for (int i = 0; i < 4; ++i) {
    files[i] = dir_ / ("numpy" + std::to_string(i) + ".npy");
    test::write_numpy_style(files[i], {nz, ny, nx}, f64, i & 1, i & 2);
  }
  const wave::Model::Window keep{1, 3};
  const wave::Model part = wave::Model::from_npy(dir_ / "c.npy", 10.0, &keep);
  for (const fs::path& p : files) {
    SCOPED_TRACE(p.filename().string());
    const wave::Model m = wave::Model::from_npy(p, 10.0);
    EXPECT_EQ(m.v, want.v);
    EXPECT_EQ(m.checksum(), want.checksum());
    const wave::Model w = wave::Model::from_npy(p, 10.0, &keep);
    EXPECT_EQ(w.v, part.v);
    EXPECT_EQ(w.z0, part.z0);
  }
}

TEST_F(WaveNpy, RefusesWrongDtypeShapeMissingFileAndBadValues) {
  const std::vector<float> flat(35, 2000.f);
  EXPECT_TRUE(throws_error([&] { wave::Model::from_npy(write("1d.npy", {35}, flat), 10.0); }, ErrorKind::io,
                           {"shape"}));
  EXPECT_TRUE(throws_error(
      [&] {
        wave::Model::from_npy(write("4d.npy", {5, 7, 1, 1}, flat), 10.0);
      },
      ErrorKind::io, {"shape"}));
  EXPECT_TRUE(throws_error([&] { wave::Model::from_npy(dir_ / "missing.npy", 10.0); }, ErrorKind::io,
                           {"missing.npy"}));
  std::vector<float> with_nan(35, 2000.f);
  with_nan[17] = std::numeric_limits<float>::quiet_NaN();
  const fs::path p = write("nan.npy", {5, 7}, with_nan);
  // The file is well formed but a value is not: the model's refusal, naming the file.
  EXPECT_TRUE(
      throws_error([&] { wave::Model::from_npy(p, 10.0); }, ErrorKind::invalid_argument, {"nan.npy"}));
  EXPECT_TRUE(throws_error(
      [&] {
        wave::Model::from_npy(write("ok.npy", {5, 7}, flat), 0.0);
      },
      ErrorKind::invalid_argument, {"spacing"}));
}

// A model held in part (a split run's rank, Model::Window): its planes are the whole's, and the
// whole's extremes, checksum and first bad value are found on the way, for every builder.
TEST_F(WaveNpy, ModelPlanesKeepTheWholesFigures) {
  std::vector<float> v(9 * 3 * 4);
  for (size_t i = 0; i < v.size(); ++i) v[i] = 1500.f + float((i * 37) % 101);
  const fs::path p = write("v.npy", {9, 3, 4}, v);
  const wave::Model whole = wave::Model::from_npy(p, 10.0);
  const wave::Model::Window w{3, 6};
  const wave::Model part = wave::Model::from_npy(p, 10.0, &w);
  EXPECT_EQ(part.z0, 3);
  EXPECT_EQ(part.planes(), 3);
  EXPECT_EQ(part.v.size(), size_t(3 * 12));
  EXPECT_EQ(std::vector<float>(part.plane(3), part.plane(3) + 36),
            std::vector<float>(whole.plane(3), whole.plane(3) + 36));
  EXPECT_EQ(part.vmin(), whole.vmin());
  EXPECT_EQ(part.vmax(), whole.vmax());
  EXPECT_EQ(part.checksum(), whole.checksum());
  EXPECT_NO_THROW(part.validate());
  EXPECT_THROW(part.plane(2), std::logic_error);
  EXPECT_THROW(part.plane(6), std::logic_error);
  // A bad value outside the planes kept is refused as the whole model refuses it.
  v[size_t(7 * 12 + 5)] = -1.f;
  const fs::path q = write("bad.npy", {9, 3, 4}, v);
  EXPECT_TRUE(throws_error([&] { wave::Model::from_npy(q, 10.0, &w); }, ErrorKind::invalid_argument,
                           {"bad.npy", "(z, y, x) = (7, 1, 1)"}));
  const wave::Model::Window outside{5, 10};
  EXPECT_TRUE(throws_error([&] { wave::Model::from_npy(p, 10.0, &outside); }, ErrorKind::invalid_argument,
                           {"not inside"}));
  // The generated models: the same checksum as their whole selves.
  const wave::Model::Window w2{0, 1};
  EXPECT_EQ(wave::Model::constant(3, 9, 3, 4, 10.0, 2000.f, &w2).checksum(),
            wave::Model::constant(3, 9, 3, 4, 10.0, 2000.f).checksum());
  const std::vector<std::pair<double, float>> layers{{0.0, 1800.f}, {45.0, 2600.f}};
  const wave::Model lw = wave::Model::layered(2, 9, 1, 4, 10.0, layers, &w);
  const wave::Model lwhole = wave::Model::layered(2, 9, 1, 4, 10.0, layers);
  EXPECT_EQ(lw.checksum(), lwhole.checksum());
  EXPECT_EQ(lw.vmin(), 1800.f);
  EXPECT_EQ(lw.vmax(), 2600.f);
  EXPECT_EQ(*lw.plane(5), 2600.f);
}

// A rank's model that lacks planes its slab reads is refused before anything is allocated.
TEST(WaveInputs, RunRefusesAModelMissingPlanesItsSlabReads) {
  const wave::Model::Window w{2, 8};
  const wave::Model m = wave::Model::constant(3, 8, 8, 8, 10.0, 2000.f, &w);
  wave::Options o;
  o.backend = "cpu";
  o.nt = 10;
  o.boundary.cpml_width = 2;
  o.sources = {{{35.0, 35.0, 35.0}, std::vector<double>(10, 0.0)}};
  EXPECT_TRUE(throws_error([&] { wave::run(m, o); }, ErrorKind::invalid_argument,
                           {"holds planes 2..7", "reads 0..7"}));
}

// --- a run ---------------------------------------------------------------------------------------

TEST(WaveInputs, TheValidRunRuns) {
  const Valid ok;
  const wave::Result r = wave::run(ok.model, ok.options);
  EXPECT_EQ(r.backend, "cpu");
  EXPECT_EQ(r.traces.size(), size_t(ok.options.nt));
  EXPECT_EQ(r.final_field.size(), size_t(ok.model.points()));
}

TEST(WaveInputs, RunRefusesPositionsOutsideTheModel) {
  // The 2D model spans 0..290 m in z and 0..390 m in x.
  const wave::Point outside[] = {{291.0, 0, 100.0},
                                 {-0.5, 0, 100.0},
                                 {100.0, 0, 390.5},
                                 {100.0, 0, -10.0},
                                 {std::numeric_limits<double>::quiet_NaN(), 0, 100.0}};
  for (const wave::Point& p : outside) {
    Valid s;
    s.options.sources[0].at = p;
    EXPECT_TRUE(throws_error([&] { wave::run(s.model, s.options); }, ErrorKind::invalid_argument, {"source"}))
        << p.z << ", " << p.x;
    Valid r;
    r.options.receivers[0] = p;
    EXPECT_TRUE(
        throws_error([&] { wave::run(r.model, r.options); }, ErrorKind::invalid_argument, {"receiver"}))
        << p.z << ", " << p.x;
  }
  // The model's own edges are inside.
  Valid edge;
  edge.options.receivers = {{0.0, 0, 0.0}, {290.0, 0, 390.0}};
  edge.options.interpolation = wave::Interpolation::trilinear;
  EXPECT_NO_THROW(wave::run(edge.model, edge.options));
  // In 3D, y counts too.
  wave::Model m3 = wave::Model::constant(3, 10, 10, 10, 10.0, 2000.f);
  Valid y;
  y.options.sources[0].at = {45.0, 95.0, 45.0};
  y.options.receivers = {{45.0, 45.0, 45.0}};
  EXPECT_TRUE(throws_error([&] { wave::run(m3, y.options); }, ErrorKind::invalid_argument, {"source"}));
}

TEST(WaveInputs, RunRefusesBadStepCountsSnapshotsBackendsAndPrecision) {
  for (int64_t nt : {0, -3}) {
    Valid s;
    s.options.nt = nt;
    EXPECT_TRUE(throws_error([&] { wave::run(s.model, s.options); }, ErrorKind::invalid_argument, {"step"}))
        << nt;
  }
  for (int64_t step : {int64_t(-1), int64_t(9)}) {  // nt = 8: 0..8 are valid
    Valid s;
    s.options.snapshot_steps = {0, step};
    EXPECT_TRUE(
        throws_error([&] { wave::run(s.model, s.options); }, ErrorKind::invalid_argument, {"snapshot"}))
        << step;
  }
  {
    Valid s;
    s.options.snapshot_steps = {0, 8};  // both ends are allowed
    int64_t taken = 0;
    s.options.on_snapshot = [&](const wave::Snapshot&) { ++taken; };
    EXPECT_NO_THROW(wave::run(s.model, s.options));
    EXPECT_EQ(taken, 2);
  }
  // A split run's layer cost: 0 (the radius's default) or a finite cost of at least 1.
  for (double cost : {0.5, -1.0, std::numeric_limits<double>::infinity(), std::nan("")}) {
    Valid s;
    s.options.layer_plane_cost = cost;
    EXPECT_TRUE(throws_error([&] { wave::run(s.model, s.options); }, ErrorKind::invalid_argument,
                             {"layer_plane_cost"}))
        << cost;
  }
  for (double cost : {0.0, 1.0, 2.5}) {
    Valid s;
    s.options.layer_plane_cost = cost;
    EXPECT_NO_THROW(wave::run(s.model, s.options)) << cost;
  }
  {
    Valid s;
    s.options.backend = "tpu";
    EXPECT_TRUE(throws_error([&] { wave::run(s.model, s.options); }, ErrorKind::invalid_argument, {"tpu"}));
  }
  {
    // The cuda backend runs in float. Without a GPU the refusal is the missing device instead.
    Valid s;
    s.options.backend = "cuda";
    s.options.double_precision = true;
    if (gpu_count() > 0)
      EXPECT_TRUE(throws_error([&] { wave::run(s.model, s.options); }, ErrorKind::unsupported, {"double"}));
    else
      EXPECT_TRUE(throws_error([&] { wave::run(s.model, s.options); }, ErrorKind::unsupported, {"GPU"}));
  }
  {
    // Launch parameters belong to the GPU step: given to the cpu backend they are a mistake.
    Valid s;
    s.options.kernel_params = R"({"block": "32x4", "vec": 2, "nw": 8})";
    EXPECT_TRUE(throws_error([&] { wave::run(s.model, s.options); }, ErrorKind::invalid_argument, {"cuda"}));
  }
  {
    Valid s;
    s.options.sources.clear();
    EXPECT_TRUE(
        throws_error([&] { wave::run(s.model, s.options); }, ErrorKind::invalid_argument, {"source"}));
  }
  {
    Valid s;
    s.options.radius = 9;
    EXPECT_TRUE(
        throws_error([&] { wave::run(s.model, s.options); }, ErrorKind::invalid_argument, {"radius"}));
  }
  {
    Valid s;
    s.model.v[3] = -1.f;  // run validates the model itself
    EXPECT_TRUE(
        throws_error([&] { wave::run(s.model, s.options); }, ErrorKind::invalid_argument, {"velocit"}));
  }
}

// A domain far beyond the host's memory is refused from the sizes alone: no allocation is tried,
// so the refusal is immediate. An 8^3 model inside a 1000-point CPML is 2008^3 = 8.1e9 points.
TEST(WaveInputs, RunRefusesAStateTooLargeForTheHostBeforeAllocating) {
  // 2008 x 2008 x 102008 computational points, some 5 TB of state: beyond any host's memory (an
  // 8^3 model in the same layers, ~100 GB, fitted a 512 GiB host, which then ran it).
  const wave::Model m = wave::Model::constant(3, 8, 8, 100000, 10.0, 2000.f);
  wave::Options o;
  o.backend = "cpu";
  o.nt = 10;
  o.boundary.cpml_width = 1000;
  o.sources = {{{35.0, 35.0, 35.0}, std::vector<double>(10, 0.0)}};
  o.receivers = {{35.0, 35.0, 35.0}};
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_TRUE(
      throws_error([&] { wave::run(m, o); }, ErrorKind::out_of_memory, {"memory", "bytes", "GB", "GiB"}));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  report("oom_refusal_seconds", seconds);
  EXPECT_LT(seconds, 2.0) << "the refusal took long enough to have tried allocating";
  const wave::Domain d = wave::Domain::make(3, 4, 8, 8, 8, o.boundary);
  EXPECT_GT(wave::state_bytes(d, o, false), 3 * int64_t(4) * d.points()) << "u, u_prev and m at least";
  // Extents whose size does not even fit 64 bits.
  EXPECT_TRUE(
      throws_error([] { wave::Domain::make(3, 4, int64_t(1) << 29, int64_t(1) << 29, int64_t(1) << 29, {}); },
                   ErrorKind::out_of_memory, {"64 bits", "overflow"}));
  // An extent past the kernels' 32-bit indexing, whatever the memory.
  EXPECT_TRUE(throws_error([] { wave::Domain::make(3, 4, 8, 8, int64_t(1) << 30, {}); },
                           ErrorKind::invalid_argument, {"2^30"}));
}

// --- the domain ----------------------------------------------------------------------------------

TEST(WaveInputs, DomainExtentsHaloAndStrides) {
  for (int dim : {2, 3})
    for (int R : {1, 4, 8})
      for (bool fs : {false, true}) {
        wave::Boundary b;
        b.cpml_width = 7;
        b.free_surface = fs;
        const int64_t nz = 11, ny = dim == 3 ? 13 : 1, nx = 17;
        const wave::Domain d = wave::Domain::make(dim, R, nz, ny, nx, b);
        const std::string t = std::to_string(dim) + "D R" + std::to_string(R) + (fs ? " fs" : "");
        EXPECT_EQ(d.dim, dim) << t;
        EXPECT_EQ(d.radius, R) << t;
        EXPECT_EQ(d.lo[0], 7) << t;
        EXPECT_EQ(d.hi[0], 7) << t;
        EXPECT_EQ(d.lo[1], dim == 3 ? 7 : 0) << t;
        EXPECT_EQ(d.hi[1], dim == 3 ? 7 : 0) << t;
        EXPECT_EQ(d.lo[2], fs ? 0 : 7) << t;
        EXPECT_EQ(d.hi[2], 7) << t;
        EXPECT_EQ(d.nx, nx + 14) << t;
        EXPECT_EQ(d.ny, dim == 3 ? ny + 14 : 1) << t;
        EXPECT_EQ(d.nz, nz + (fs ? 7 : 14)) << t;
        EXPECT_EQ(d.points(), d.nx * d.ny * d.nz) << t;
        // The halo of R around the computational points fits the storage without overlap.
        const int64_t hy = dim == 3 ? R : 0;
        EXPECT_GE(d.line, d.nx + 2 * R) << t;
        EXPECT_GE(d.slice, d.line * (d.ny + 2 * hy)) << t;
        EXPECT_GE(d.index(-R, -hy, -R), 0) << t;
        EXPECT_LT(d.index(d.nx - 1 + R, d.ny - 1 + hy, d.nz - 1 + R), d.alloc) << t;
        EXPECT_EQ(d.index(1, 0, 0) - d.index(0, 0, 0), 1) << t;
        EXPECT_EQ(d.index(0, 0, 1) - d.index(0, 0, 0), d.slice) << t;
      }
  EXPECT_TRUE(throws_error([] { wave::Domain::make(3, 9, 10, 10, 10, {}); }, ErrorKind::invalid_argument,
                           {"radius"}));
  wave::Boundary negative;
  negative.cpml_width = -1;
  EXPECT_TRUE(throws_error([&] { wave::Domain::make(2, 4, 10, 1, 10, negative); },
                           ErrorKind::invalid_argument, {"CPML"}));
}

TEST(WaveInputs, SplitZCoversThePlanesAndRefusesSlabsThinnerThanR) {
  wave::Boundary b;
  b.cpml_width = 5;
  const wave::Domain d = wave::Domain::make(3, 4, 21, 9, 9, b);  // nz = 31
  ASSERT_EQ(d.nz, 31);
  for (int parts = 1; parts <= 7; ++parts) {  // 31 / 7 = 4 planes: the thinnest allowed at R = 4
    const auto slabs = d.split_z(parts, 1);
    ASSERT_EQ(slabs.size(), size_t(parts));
    int64_t next = 0, thinnest = d.nz, thickest = 0;
    for (const auto& s : slabs) {
      EXPECT_EQ(s.k0, next) << parts << " slabs";
      EXPECT_GT(s.k1, s.k0) << parts << " slabs";
      thinnest = std::min(thinnest, s.k1 - s.k0);
      thickest = std::max(thickest, s.k1 - s.k0);
      next = s.k1;
    }
    EXPECT_EQ(next, d.nz) << parts << " slabs";
    EXPECT_LE(thickest - thinnest, 1) << parts << " slabs are not near-equal";
    EXPECT_GE(thinnest, d.radius) << parts << " slabs";
  }
  EXPECT_TRUE(throws_error([&] { d.split_z(8, 1); }, ErrorKind::invalid_argument, {"radius"}));  // 3.9 planes
  EXPECT_TRUE(throws_error([&] { d.split_z(31, 1); }, ErrorKind::invalid_argument, {"radius"}));
  EXPECT_TRUE(throws_error([&] { d.split_z(0, 1); }, ErrorKind::invalid_argument, {}));
}

// Slabs balanced by cost, a z-layer plane costing `c` inner planes: each slab's cost is within one
// layer plane's of the whole's share, the slabs at the layers are the thinner ones, and a balance
// that would leave a slab thinner than R falls back to near-equal slabs.
TEST(WaveInputs, SplitZBalancesTheLayersPlanes) {
  wave::Boundary b;
  b.cpml_width = 20;
  const wave::Domain d = wave::Domain::make(3, 4, 984, 8, 8, b);  // nz = 1024, 20 layer planes each end
  ASSERT_EQ(d.nz, 1024);
  const auto cost_of = [&](const wave::Domain::Slab& s, double c) {
    double sum = 0;
    for (int64_t k = s.k0; k < s.k1; ++k) sum += k < 20 || k >= d.nz - 20 ? c : 1.0;
    return sum;
  };
  for (double c : {1.0, 2.5, 4.0, 6.0})
    for (int parts : {2, 3, 4, 8}) {
      const auto slabs = d.split_z(parts, c);
      ASSERT_EQ(slabs.size(), size_t(parts));
      const double share = (984 + 40 * c) / parts;
      int64_t next = 0;
      for (const auto& s : slabs) {
        EXPECT_EQ(s.k0, next) << c << " x " << parts;
        EXPECT_NEAR(cost_of(s, c), share, c) << c << " x " << parts << " at plane " << s.k0;
        next = s.k1;
      }
      EXPECT_EQ(next, d.nz);
      if (c > 1 && parts > 2) {  // two slabs hold a layer each
        EXPECT_LT(slabs.front().k1 - slabs.front().k0, slabs[1].k1 - slabs[1].k0) << c << " x " << parts;
      }
      if (c == 1) {
        EXPECT_EQ(slabs[0].k1, d.nz / parts) << "cost 1 cuts the near-equal slabs";
      }
    }
  // 31 planes, 5 of them layers at each end, in 7 slabs of 4-5: balanced, the end slabs would hold
  // fewer than R = 4 planes.
  b.cpml_width = 5;
  const wave::Domain thin = wave::Domain::make(3, 4, 21, 9, 9, b);
  const auto even = thin.split_z(7, 1), balanced = thin.split_z(7, 6);
  for (size_t p = 0; p < 7; ++p) EXPECT_EQ(balanced[p].k1, even[p].k1) << p;
  EXPECT_TRUE(throws_error([&] { d.split_z(2, 0.5); }, ErrorKind::invalid_argument, {"at least"}));
  // The default's two measured ends and the line between them.
  EXPECT_EQ(wave::default_layer_plane_cost(1), 3.0);
  EXPECT_EQ(wave::default_layer_plane_cost(4), 3.0);
  EXPECT_EQ(wave::default_layer_plane_cost(6), 2.5);
  EXPECT_EQ(wave::default_layer_plane_cost(8), 2.0);
  EXPECT_EQ(wave::default_layer_plane_cost(12), 2.0);
}

// --- wavelets ------------------------------------------------------------------------------------

TEST(WaveInputs, RickerPeaksAtTheDelayAndHasZeroMean) {
  // The delay is sample 200 and 1.7 / f0: the wavelet starts and ends at 1e-11 of its peak, so
  // truncation leaves its zero mean intact.
  const double f0 = 17, dt = 5e-4, delay = 0.1;
  const int64_t nt = 400;
  const auto w = wave::ricker(f0, delay, dt, nt);
  ASSERT_EQ(w.size(), size_t(nt));
  const auto peak = std::max_element(w.begin(), w.end());
  EXPECT_EQ(peak - w.begin(), 200);
  EXPECT_NEAR(*peak, 1.0, 1e-12);
  double sum = 0, sum_abs = 0;
  for (int64_t n = 0; n < nt; ++n) {
    EXPECT_NEAR(w[size_t(n)], ricker_at(f0, delay, double(n) * dt), 1e-12) << "sample " << n;
    sum += w[size_t(n)];
    sum_abs += std::abs(w[size_t(n)]);
  }
  report("ricker_mean_over_mean_abs", std::abs(sum) / sum_abs);
  EXPECT_LT(std::abs(sum), 1e-9 * sum_abs);
}

// The Ricker's amplitude spectrum is proportional to x^2 exp(-x^2), x = f / f0, peaking at x = 1;
// it falls to 1 % of the peak where x^2 exp(1 - x^2) = 0.01, solved here by bisection.
TEST(WaveInputs, HighestSignificantFrequencyOfARickerIsAbout2p76F0) {
  double lo = 1, hi = 5;
  for (int it = 0; it < 100; ++it) {
    const double x = 0.5 * (lo + hi);
    (x * x * std::exp(1 - x * x) > 0.01 ? lo : hi) = x;
  }
  report("ricker_one_percent_point_over_f0_analytic", lo);
  EXPECT_NEAR(lo, 2.76, 0.01);
  for (double f0 : {5.0, 12.0, 25.0}) {
    const double dt = 1e-3;
    const double f = wave::highest_significant_frequency(wave::ricker(f0, 1.5 / f0, dt, 1000), dt);
    report("ricker_fmax_over_f0_at_" + std::to_string(int(f0)) + "hz", f / f0);
    EXPECT_NEAR(f / (lo * f0), 1.0, 0.03) << "f0 " << f0;
  }
}

namespace {

// A 30 Hz sine under a wide Gaussian envelope centred in a 1 s record: zero at the ends (so the
// zero padding beyond them is exact) and band-limited to 30 +- ~5 Hz.
double tone(double f, double t) {
  return std::sin(2 * kPi * f * t) * std::exp(-std::pow((t - 0.5) / 0.12, 2));
}

std::vector<double> sampled(double f, double dt, int64_t n) {
  std::vector<double> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) x[size_t(i)] = tone(f, double(i) * dt);
  return x;
}

double max_abs(const std::vector<double>& x) {
  double m = 0;
  for (double v : x) m = std::max(m, std::abs(v));
  return m;
}

}  // namespace

TEST(WaveInputs, ResampleMatchesABandLimitedSignalAndSuppressesAliases) {
  const double dt_in = 2e-3;
  const int64_t n_in = 501;  // 1 s
  const auto x = sampled(30, dt_in, n_in);
  // Finer (not a divisor of dt_in) and coarser (Nyquist 100 Hz, still above 30 Hz).
  for (double dt_out : {0.7e-3, 5e-3}) {
    const int64_t n_out = int64_t(1.0 / dt_out) + 1;
    const auto y = wave::resample(x, dt_in, dt_out, n_out);
    ASSERT_EQ(y.size(), size_t(n_out));
    double worst = 0;
    for (int64_t i = 0; i < n_out; ++i)
      worst = std::max(worst, std::abs(y[size_t(i)] - tone(30, double(i) * dt_out)));
    report("resample_30hz_max_error_to_" + std::to_string(int(std::lround(dt_out * 1e4))) + "e-4s", worst);
    // Measured 1.6e-5 (0.7 ms) and 8.1e-6 (5 ms) of the unit amplitude.
    EXPECT_LT(worst, 5e-5) << "dt_out " << dt_out;
  }
  // 160 Hz lies between the output's Nyquist (100 Hz) and the input's (250 Hz): resampled to
  // 5 ms it would alias to 40 Hz at full amplitude; the low-pass must remove it. 40 Hz itself
  // passes (compared with the tone at the output's times: its samples miss the crests).
  const auto high = wave::resample(sampled(160, dt_in, n_in), dt_in, 5e-3, 201);
  const auto low = wave::resample(sampled(40, dt_in, n_in), dt_in, 5e-3, 201);
  double low_error = 0;
  for (size_t i = 0; i < low.size(); ++i)
    low_error = std::max(low_error, std::abs(low[i] - tone(40, double(i) * 5e-3)));
  report("resample_160hz_to_5ms_peak", max_abs(high));
  report("resample_40hz_to_5ms_max_error", low_error);
  EXPECT_LT(max_abs(high), 3e-5);  // measured 8.2e-6
  EXPECT_LT(low_error, 3e-5);      // measured 8.8e-6
  EXPECT_GT(max_abs(low), 0.9);
}

// --- small helpers -------------------------------------------------------------------------------

TEST(WaveInputs, InterpolationNamesAndTheSamplingWarning) {
  EXPECT_EQ(wave::parse_interpolation("hicks"), wave::Interpolation::hicks);
  EXPECT_EQ(wave::parse_interpolation("trilinear"), wave::Interpolation::trilinear);
  EXPECT_TRUE(
      throws_error([] { wave::parse_interpolation("cubic"); }, ErrorKind::invalid_argument, {"cubic"}));
  // 2000 m/s at h = 10 m: a 30 Hz Ricker reaches 83 Hz, 2.4 points per wavelength, under any
  // order's need; a 5 Hz one reaches 14 Hz, 14.5 points, enough for any.
  const wave::Model m = wave::Model::constant(2, 20, 1, 20, 10.0, 2000.f);
  for (double f0 : {30.0, 5.0}) {
    wave::Options o;
    o.backend = "cpu";
    o.radius = 1;
    const double dt = 1e-3;
    o.nt = 600;
    o.sources = {{{95.0, 0, 95.0}, wave::ricker(f0, 1.5 / f0, dt, o.nt)}};
    const std::string w = wave::sampling_warning(m, o, dt);
    if (f0 > 10)
      EXPECT_NE(w.find("under-sampled"), std::string::npos) << "'" << w << "'";
    else
      EXPECT_EQ(w, "");
  }
}

// The step run() takes is the one run_dt() tells a caller beforehand.
TEST(WaveInputs, RunDtIsTheStepTheRunTakes) {
  const wave::Model m = wave::Model::constant(2, 30, 1, 30, 10.0, 2500.f);
  wave::Options o;
  o.backend = "cpu";
  o.nt = 3;
  o.radius = 2;
  o.cfl_safety = 0.5;
  o.boundary.cpml_width = 5;
  o.sources = {{{150.0, 0.0, 150.0}, std::vector<double>(3, 1.0)}};
  EXPECT_DOUBLE_EQ(wave::run_dt(m, o), 0.5 * wave::max_stable_dt(2, 2, 10.0, 2500.0));
  EXPECT_DOUBLE_EQ(wave::run(m, o).dt, wave::run_dt(m, o));
  o.dt = 1e-4;
  EXPECT_DOUBLE_EQ(wave::run_dt(m, o), 1e-4);
  EXPECT_DOUBLE_EQ(wave::run(m, o).dt, 1e-4);
}
