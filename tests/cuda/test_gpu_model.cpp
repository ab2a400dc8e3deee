// A model left on the GPU (wave::Model::gpu, the Python module's CUDA arrays): its summary, its
// refusals and its runs are the host model's, to the bit. Skipped, never passed, without a GPU.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda/wave/device_array.hpp"
#include "fdstencil/device.hpp"
#include "fdstencil/device_field.hpp"
#include "fdstencil/error.hpp"
#include "fdstencil/imaging.hpp"
#include "fdstencil/wave.hpp"
#include "wave/checkpoint_test_util.hpp"

using namespace fdstencil;

namespace {

#define REQUIRE_GPU() \
  if (gpu_count() == 0) GTEST_SKIP() << "no GPU: " << gpu_unavailable_reason()

// Velocities drawn at random in [1500, 4500) m/s (seed printed): every value's bits matter to the
// checksum, and the extremes lie anywhere.
wave::Model random_model(int dim, int64_t nz, int64_t ny, int64_t nx, uint64_t seed) {
  std::printf("[   seed   ] gpu model: seed %llu\n", static_cast<unsigned long long>(seed));
  wave::Model m = wave::Model::constant(dim, nz, ny, nx, 10.0, 2000.f);
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<float> v(1500.f, 4500.f);
  for (float& x : m.v) x = v(gen);
  return m;
}

// The same model with its values on the current GPU, in `keep` (which must outlive it).
wave::Model on_gpu(const wave::Model& host, cuda::wave::DeviceArray<float>& keep) {
  keep = cuda::wave::DeviceArray<float>(host.v.data(), int64_t(host.v.size()));
  wave::Model m;
  m.dim = host.dim;
  m.nz = host.nz;
  m.ny = host.ny;
  m.nx = host.nx;
  m.h = host.h;
  m.gpu = {keep.p, cuda::current_device()};
  return m;
}

std::string refusal(const wave::Model& m) {
  wave::Model copy = m;
  try {
    copy.summarise();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

// Shapes whose value counts are below, at and past the GPU's 4096-value pieces, and not multiples
// of them (the short last piece).
TEST(GpuModel, SummaryIsTheHostsOne) {
  REQUIRE_GPU();
  const std::vector<std::array<int64_t, 4>> shapes = {
      {2, 5, 1, 7}, {2, 64, 1, 64}, {3, 37, 41, 53}, {3, 16, 16, 16}, {2, 1, 1, 1}};
  uint64_t seed = 31;
  for (const auto& [dim, nz, ny, nx] : shapes) {
    SCOPED_TRACE(std::to_string(nz) + "x" + std::to_string(ny) + "x" + std::to_string(nx));
    wave::Model host = random_model(int(dim), nz, ny, nx, seed++);
    cuda::wave::DeviceArray<float> keep;
    wave::Model gpu = on_gpu(host, keep);
    host.summarise();
    gpu.summarise();
    ASSERT_TRUE(host.whole && gpu.whole);
    EXPECT_EQ(gpu.whole->vmin, host.whole->vmin);
    EXPECT_EQ(gpu.whole->vmax, host.whole->vmax);
    EXPECT_EQ(gpu.whole->crc, host.whole->crc);
    if (host.points() > 1) {
      EXPECT_NE(host.whole->vmin, host.whole->vmax);  // the extremes were tested
    }
  }
}

// NaN, infinities, zero and negatives, first in each place a piece can hold them, and a second bad
// value after the first: the GPU names the first, as the host does, in the host's words.
TEST(GpuModel, ABadValueIsNamedAsOnTheHost) {
  REQUIRE_GPU();
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const wave::Model clean = random_model(3, 19, 23, 29, 77);
  for (const float bad : {nan, inf, -inf, 0.f, -1500.f})
    for (const size_t at : {size_t(0), size_t(4095), size_t(4096), size_t(9000), clean.v.size() - 1}) {
      SCOPED_TRACE(std::to_string(bad) + " at " + std::to_string(at));
      wave::Model host = clean;
      host.v[at] = bad;
      if (at + 700 < host.v.size()) host.v[at + 700] = -3.f;  // a later one, in another piece
      cuda::wave::DeviceArray<float> keep;
      const wave::Model gpu = on_gpu(host, keep);
      const std::string said = refusal(host);
      ASSERT_NE(said.find("must be finite and positive"), std::string::npos) << said;
      EXPECT_EQ(refusal(gpu), said);
    }
}

// The same shots through the host model and the GPU one, on the GPU: the same dt, traces and final
// field to the bit, in 3D and 2D, with a free surface, and on a kept state (whose m the second
// shot takes).
TEST(GpuModel, RunsGiveTheHostModelsBits) {
  REQUIRE_GPU();
  for (const auto& [dim, free_surface] : {std::pair{3, false}, std::pair{3, true}, std::pair{2, false}}) {
    SCOPED_TRACE(std::to_string(dim) + "D" + (free_surface ? " free surface" : ""));
    test::CheckpointCase c = test::checkpoint_case(dim, free_surface, "cuda");
    std::mt19937_64 gen(dim * 10 + free_surface);
    std::uniform_real_distribution<float> wobble(0.9f, 1.1f);
    for (float& v : c.model.v) v *= wobble(gen);  // every point's m its own
    c.options.dt = 0;                             // each takes its default step from its vmax
    c.options.final_field = true;
    cuda::wave::DeviceArray<float> keep;
    wave::Model gpu = on_gpu(c.model, keep);
    gpu.summarise();
    const wave::Result host_run = wave::run(c.model, c.options);
    const wave::Result gpu_run = wave::run(gpu, c.options);
    EXPECT_EQ(gpu_run.dt, host_run.dt);
    EXPECT_TRUE(test::same_bits(gpu_run.traces, host_run.traces))
        << "traces differ first at " << test::first_difference(gpu_run.traces, host_run.traces);
    EXPECT_TRUE(test::same_bits(gpu_run.final_field, host_run.final_field))
        << "final fields differ first at "
        << test::first_difference(gpu_run.final_field, host_run.final_field);
    ASSERT_FALSE(host_run.traces.empty());

    wave::Options kept = c.options;
    kept.kept_state = wave::make_kept_state();
    kept.sources.front().at.x += 7.3;  // a second shot
    wave::Options fresh = kept;
    fresh.kept_state.reset();
    const wave::Result first = wave::run(gpu, kept), second = wave::run(gpu, kept);
    EXPECT_TRUE(second.timing.state_kept);
    const wave::Result expected = wave::run(c.model, fresh);
    EXPECT_TRUE(test::same_bits(second.traces, expected.traces));
    EXPECT_TRUE(test::same_bits(first.traces, expected.traces));
  }
}

// A model on a GPU runs on that GPU's cuda backend alone, and the host never reads it.
TEST(GpuModel, IsRefusedWhereTheHostWouldReadIt) {
  REQUIRE_GPU();
  test::CheckpointCase c = test::checkpoint_case(2, false, "cpu");
  cuda::wave::DeviceArray<float> keep;
  wave::Model gpu = on_gpu(c.model, keep);
  gpu.summarise();
  try {
    wave::run(gpu, c.options);
    ADD_FAILURE() << "the cpu backend ran a model on a GPU";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("on GPU " + std::to_string(cuda::current_device())),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(gpu.plane(0), std::logic_error);
  for (const char* backend : {"cpu", "cuda"}) {  // the linearised solvers build m on the host
    wave::Options o = c.options;
    o.backend = backend;
    EXPECT_THROW(wave::modelled(gpu, o), Error) << backend;
  }
  wave::Model both = gpu;
  both.v = c.model.v;  // values in both places: which would the run read?
  EXPECT_THROW(both.summarise(), Error);
}
