// libFuzzer harness of the SEG-Y readers, as the tool reads a file: a wave run's --model
// (headers, placement, spacing, samples, then the solver's model), `segy info` (any spacing the
// headers lack left unknown, the geometry summarized) and any file's traces (read_traces).
#include <cstddef>
#include <cstdint>

#include "commands.hpp"
#include "fdstencil/segy.hpp"
#include "fuzz_input.hpp"
#include "wave_cli.hpp"

namespace {

using namespace fdstencil;
namespace wc = fdstencil::cli::wave_cli;

void read_all(const std::filesystem::path& path) {
  fuzz::refusals_only([&] {
    wc::Flags f;
    f.model = path.string();
    wc::read_model(f);
  });
  fuzz::refusals_only([&] {
    segy::ReadOptions ro;
    ro.need_spacing = false;
    const segy::Grid g = segy::read_model(path, ro);
    cli::segy_geometry_json(g, ro);
  });
  // Any file's traces, as `segy info` and `segy to-npy --traces` read them: headers alone, then whole.
  fuzz::refusals_only([&] { segy::read_traces(path, {}, true); });
  fuzz::refusals_only([&] { segy::read_traces(path); });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  read_all(fuzz::input_file(data, size, "input.sgy"));
  return 0;
}
