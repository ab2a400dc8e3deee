// fdstencil coeffs: print the central finite-difference weights of one radius.
#include <cstdio>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "fdstencil/coefficients.hpp"

namespace fdstencil::cli {

Action add_coeffs(CLI::App& app) {
  auto* cmd = app.add_subcommand("coeffs", "Print central finite-difference weights (Fornberg)");
  struct Opts {
    int radius = 0;
    int derivative = 2;
    double h = 1.0;
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("--radius,-r", o->radius, "Stencil radius R (1..8): 2R+1 weights")->required();
  cmd->add_option("--derivative,-d", o->derivative, "1 or 2");
  cmd->add_option("--spacing,-s", o->h, "Grid spacing h: weights are scaled by 1/h or 1/h^2");
  cmd->add_flag("--json", o->json, "Print JSON instead of a table");
  return [o] {
    const std::vector<double> w = central_weights(o->derivative, o->radius, o->h);
    if (o->json) {
      nlohmann::json j = {{"derivative", o->derivative}, {"radius", o->radius}, {"h", o->h}};
      for (int r = -o->radius; r <= o->radius; ++r) j["offsets"].push_back(r);
      j["weights"] = w;
      std::printf("%s\n", j.dump(2).c_str());
      return 0;
    }
    std::printf("# derivative %d, radius %d, h = %.17g\n# offset  weight\n", o->derivative, o->radius, o->h);
    for (int r = -o->radius; r <= o->radius; ++r) std::printf("%+3d  %+.17g\n", r, w[size_t(r + o->radius)]);
    return 0;
  };
}

}  // namespace fdstencil::cli
