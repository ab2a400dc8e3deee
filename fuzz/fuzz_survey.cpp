// libFuzzer harness of the survey file reader (fdstencil wave --survey FILE): the JSON, its
// defaults and shots applied to the command line's flags. The shots' flags are then prepare()'s,
// fuzzed through the other harnesses' files.
#include <cstddef>
#include <cstdint>

#include "fuzz_input.hpp"
#include "wave_cli.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fdstencil;
  cli::wave_cli::Flags f;
  f.survey = fuzz::input_file(data, size, "survey.json").string();
  f.output = (fuzz::input_dir() / "out").string();
  f.sources = {std::string("50,50")};  // a shot's own sources replace the command line's
  fuzz::refusals_only([&] { cli::wave_cli::read_survey(f); });
  return 0;
}
