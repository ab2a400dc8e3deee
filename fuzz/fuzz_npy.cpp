// libFuzzer harness of the .npy readers: the array itself (read_npy), a velocity model as the wave
// command reads it whole and by planes (a split run's rank), and a wavelet and receivers as
// prepare() reads them (a 1-D array of samples, an (n, 2) array of positions).
#include <cstddef>
#include <cstdint>
#include <string>

#include "fdstencil/npy.hpp"
#include "fdstencil/wave.hpp"
#include "fuzz_input.hpp"
#include "wave_cli.hpp"

namespace {

using namespace fdstencil;
namespace wc = fdstencil::cli::wave_cli;

// A small 2D run whose wavelet or receivers are the fuzzed .npy.
wc::Flags run_flags(const std::string& wavelet, const std::string& receivers) {
  using namespace std::string_literals;
  wc::Flags f;
  f.constant = "2000"s;
  f.shape = "12,12"s;
  f.spacing = "10"s;
  f.steps = "4"s;
  f.sources = {"50,50"s};
  f.wavelet = wavelet;
  f.wavelet_dt = wavelet.empty() ? ""s : "0.001"s;
  f.receivers_file = receivers;
  f.output = (fuzz::input_dir() / "out").string();
  return f;
}

// The model flags of a run reading the fuzzed .npy as its model.
wc::Flags model_flags(const std::filesystem::path& path) {
  wc::Flags f;
  f.model = path.string();
  f.spacing = std::string("10");
  return f;
}

void read_all(const std::filesystem::path& path) {
  fuzz::refusals_only([&] { read_npy(path); });
  fuzz::refusals_only([&] { wc::read_model(model_flags(path)); });
  fuzz::refusals_only([&] {
    const wave::Model::Window first_plane{0, 1};
    wave::Model::from_npy(path, 10.0, &first_plane);
  });
  fuzz::refusals_only([&] { wc::prepare(run_flags(path.string(), "")); });
  fuzz::refusals_only([&] { wc::prepare(run_flags("", path.string())); });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  read_all(fuzz::input_file(data, size, "input.npy"));
  return 0;
}
