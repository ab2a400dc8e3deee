// fdstencil gradient, rtm and born (fdstencil/imaging.hpp, issue 37): the FWI gradient of a
// recorded shot's misfit, its reverse-time migration image, and Born modelling of a velocity
// perturbation. The run is described by `fdstencil wave`'s own flags (model, time, numerics,
// sources, receivers), so each belongs to the very run `wave` makes. A recorded shot is a folder
// `wave` wrote, checked against the run before any work (imaging_inputs.cpp); a survey's shots
// are stacked by imaging_survey.cpp. Outputs never replace an earlier run's without --overwrite.
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "fdstencil/error.hpp"
#include "fdstencil/npy.hpp"
#include "fdstencil/segy.hpp"
#include "imaging_cli.hpp"
#include "progress.hpp"

namespace fdstencil::cli {

namespace {

using nlohmann::json;
using namespace wave_cli;
using namespace imaging_cli;

[[noreturn]] void bad(const std::string& what) { throw Error(ErrorKind::invalid_argument, what); }

void check_flags(const Flags& f, const ImagingFlags& g) {
  if (!f.record_dt.empty()) bad("--record-dt: the traces are taken at the run's own step");
  if (!f.kernel_params.empty()) bad("--kernel-params: the linearised solvers take the default launch");
  if (g.condition != "adjoint" && g.condition != "crosscorrelation")
    bad("--condition: expected adjoint or crosscorrelation, got '" + g.condition + "'");
}

// Ends a bar's line however its run ends, so that an error's message starts a line of its own.
struct EndOfBar {
  ProgressBar& bar;
  ~EndOfBar() { bar.finish(); }
};

json base_summary(const Setup& s, const char* format, const std::string& command) {
  return {{"format", format},           {"command", command},
          {"steps", s.options.nt},      {"dt", s.options.dt},
          {"radius", s.options.radius}, {"double_precision", s.options.double_precision},
          {"model", s.model_json}};
}

int run_one_shot(const Flags& f, const ImagingFlags& g, Kind kind, const std::string& command) {
  Setup s = prepare(f);
  if (g.observed.empty())
    bad("--observed DIR is required: the folder of the recorded shot (shot.npy, shot.json)");
  const std::vector<double> observed = read_observed(g.observed, s, "--observed");
  budget_bytes(g.memory_budget);  // refused before the folder is made
  check_result_files(s, f, g);
  std::vector<std::string> outputs = result_files(kind, g);
  outputs.push_back("summary.json");
  OutputClaim claim(s.out_dir, {result_name(kind), result_segy_name(kind), "summary.json"}, s.overwrite);
  ProgressBar bar(std::string("fdstencil ") + command_name(kind), !f.quiet);  // both sweeps' steps
  s.options.progress = [&bar](int64_t done, int64_t total) { bar.update(done, total); };
  const ShotImage img = [&] {
    const EndOfBar end{bar};
    return image_shot(s, g, kind, observed);
  }();
  json doc = base_summary(s, kind == Kind::rtm ? "fdstencil-rtm-summary-1" : "fdstencil-gradient-summary-1",
                          command);
  doc["observed"] = g.observed;
  doc.update(settings_json(g, kind));
  if (kind == Kind::gradient) doc["misfit"] = img.misfit;
  doc["storage"] = storage_json(img.report);
  write_result(s.out_dir, s, f, g, kind, img.values, claim);
  doc["outputs"] = outputs;
  claim.wrote("summary.json");
  write_json_file((s.out_dir / "summary.json").string(), doc);
  claim.keep();
  if (!f.quiet)
    std::fprintf(stderr, "fdstencil %s: %s written to %s (%s, %.2f s)\n", command_name(kind),
                 result_name(kind), s.out_dir.string().c_str(), img.report.backend.c_str(),
                 img.report.total_s);
  return 0;
}

int run_imaging(const Flags& f, const ImagingFlags& g, Kind kind, const std::string& command) {
  check_flags(f, g);
  if (!g.devices.empty() && f.survey.empty())
    bad("--devices spreads a --survey's shots over GPUs; one shot runs on one GPU");
  if (f.resume && f.survey.empty())
    bad("--resume continues a --survey's stack; one shot has nothing to resume");
  return f.survey.empty() ? run_one_shot(f, g, kind, command) : run_survey_stack(f, g, kind, command);
}

// Born: shot.npy and shot.json as `wave` writes them (shot.sgy with --segy), so that `rtm
// --observed` and `gradient --observed` take them, and summary.json; a survey's shots each into
// their own folder (born_survey.cpp).
int run_born(const Flags& f, const ImagingFlags& g, const std::string& command) {
  check_flags(f, g);
  if (!f.survey.empty()) return run_born_survey(f, g, command);
  if (!g.devices.empty()) bad("--devices spreads a --survey's shots over GPUs; one shot runs on one GPU");
  Setup s = prepare(f);
  const std::vector<double> dv = read_perturbation(g.perturbation, s);
  OutputClaim claim(s.out_dir, {"shot.npy", "shot.json", "shot.sgy", "summary.json"}, s.overwrite);
  ProgressBar bar("fdstencil born", !f.quiet);
  s.options.progress = [&bar](int64_t done, int64_t total) { bar.update(done, total); };
  const BornShot r = [&] {
    const EndOfBar end{bar};
    return born_shot(s, dv, g, command, [&](const std::vector<std::string>& names) {
      for (const std::string& n : names) claim.wrote(n);
    });
  }();
  claim.keep();
  if (!f.quiet)
    std::fprintf(stderr, "fdstencil born: shot.npy written to %s (%s, %.2f s)\n", s.out_dir.string().c_str(),
                 r.backend.c_str(), r.seconds);
  return 0;
}

void add_output_options(CLI::App* cmd, Flags* f, const std::string& group, const std::string& results) {
  cmd->add_option("--output,-o", f->output,
                  "Directory for " + results + " and summary.json, created if missing (required)")
      ->type_name("DIR")
      ->group(group);
  cmd->add_flag("--overwrite", f->overwrite, "Replace an earlier run's results and summary in --output")
      ->group(group);
  cmd->add_option("--backend,-b", f->backend,
                  "auto (the GPU when present, else cpu), cuda or cpu (default auto)")
      ->type_name("NAME")
      ->group(group);
  cmd->add_flag("--double", f->double_precision,
                "In double precision (the cpu backend, which auto then picks)")
      ->group(group);
  cmd->add_flag("--quiet,-q", f->quiet, "No lines on stderr")->group(group);
}

void add_imaging_options(CLI::App* cmd, Flags* f, ImagingFlags* g, Kind kind) {
  const std::string group = kind == Kind::rtm ? "RTM" : "Gradient";
  cmd->add_option(
         "--observed", g->observed,
         "The recorded shot: a folder `fdstencil wave` wrote (shot.npy, shot.json) at this run's dt, "
         "one trace per receiver of this run; with --survey, the folder `fdstencil wave --survey` "
         "wrote, whose shot_<id> folders hold the shots' records (required)")
      ->type_name("DIR")
      ->group(group);
  cmd->add_option("--survey", f->survey,
                  "A survey file (`fdstencil wave --survey`'s): every shot's result added into one stack, "
                  "kept in --output after each shot, so that the same command with --resume continues")
      ->type_name("FILE")
      ->group(group);
  cmd->add_flag("--resume", f->resume,
                "With --survey: continue the stack an interrupted run left in --output")
      ->group(group);
  cmd->add_option("--devices", g->devices,
                  "With --survey on the GPU: the GPUs its shots spread over, one worker each taking the "
                  "next shot (\"all\": every visible one; default: the current one). The stack adds the "
                  "shots in the survey's order, so it holds the same bits on any GPUs")
      ->type_name("LIST")
      ->group(group);
  add_output_options(cmd, f, group, std::string(result_name(kind)) + " (the model's shape, float32)");
  cmd->add_flag(
         "--segy", g->segy,
         std::string("Also ") + (kind == Kind::rtm ? "image.sgy" : "gradient.sgy") +
             ": the same values as a SEG-Y model file (IEEE float, the model's grid; z in the "
             "--segy-z-unit of a SEG-Y --model, else the finest of mm, cm, dm and m that holds the spacing)")
      ->group(group);
  cmd->add_option("--memory-budget", g->memory_budget,
                  "MiB the kept forward run may take (default: what is free); below every step's field, "
                  "binomial checkpoints with steps run again (docs/imaging.md)")
      ->type_name("MIB")
      ->group(group);
  cmd->add_flag("--boundary-saving", g->boundary_saving,
                "Keep only the strips of R points around the points clear of the absorbing layers, and "
                "step the field there back in time instead of keeping every field: far less memory; "
                "the layers' points beyond the strips are left out, which changes the gradient on the "
                "model's outer faces beside a layer wider than R (docs/imaging.md)")
      ->group(group);
  if (kind != Kind::rtm) return;
  cmd->add_option(
         "--condition", g->condition,
         "adjoint (J^T d: the gradient's correlation over m) or crosscorrelation (the zero-lag sum of "
         "u ubar) (default adjoint)")
      ->type_name("NAME")
      ->group(group);
  cmd->add_flag("--illumination", g->illumination, "Divide by the source's illumination, the sum of u^2")
      ->group(group);
  cmd->add_flag("--laplacian", g->laplacian, "Then filter by -Laplacian against low-wavenumber noise")
      ->group(group);
}

void add_run_description(CLI::App* cmd, Flags* f) {
  add_model_options(cmd, f);
  add_time_options(cmd, f);
  add_numerics_options(cmd, f);
  add_sources_options(cmd, f);
  add_receivers_options(cmd, f);
}

Action add_imaging(CLI::App& app, const std::vector<std::string>& argv, Kind kind) {
  const bool rtm = kind == Kind::rtm;
  auto* cmd = app.add_subcommand(
      command_name(kind),
      rtm ? "Reverse-time migration: the image of a recorded shot (or a survey's stack) over the model's "
            "points, by the exact adjoint of `fdstencil wave`'s own run (the same flags describe it). Bad "
            "input exits 2 before any work and writes nothing."
          : "The FWI gradient: d/dv of 1/2 sum (modelled - observed)^2 over the model's points for a "
            "recorded "
            "shot (or a survey's sum), the exact adjoint of `fdstencil wave`'s own run (the same flags "
            "describe it). Bad input exits 2 before any work and writes nothing.");
  auto f = std::make_shared<Flags>();
  f->label = std::string("fdstencil ") + command_name(kind);
  auto g = std::make_shared<ImagingFlags>();
  add_run_description(cmd, f.get());
  add_imaging_options(cmd, f.get(), g.get(), kind);
  const std::string command = command_text(argv);
  return [f, g, kind, command] { return run_imaging(*f, *g, kind, command); };
}

}  // namespace

namespace imaging_cli {

ShotImage image_shot(const Setup& s, const ImagingFlags& g, Kind kind, std::span<const double> observed,
                     const std::shared_ptr<wave::KeptState>& kept,
                     const std::function<void(int64_t, int64_t)>& progress) {
  const wave::Storage storage{budget_bytes(g.memory_budget), g.boundary_saving};
  wave::Options o = s.options;
  o.kept_state = kept;
  if (progress) o.progress = progress;
  ShotImage out;
  if (kind == Kind::rtm) {
    wave::RtmOptions r;
    r.condition =
        g.condition == "adjoint" ? wave::ImagingCondition::adjoint : wave::ImagingCondition::crosscorrelation;
    r.illumination = g.illumination;
    r.laplacian = g.laplacian;
    r.storage = storage;
    r.report = &out.report;
    out.values = wave::rtm(s.model(), o, observed, r);
    return out;
  }
  wave::Gradient gr = wave::gradient(s.model(), o, observed, storage);
  out.values = std::move(gr.velocity);
  out.misfit = gr.misfit;
  out.report = gr.storage;
  return out;
}

BornShot born_shot(const Setup& s, const std::vector<double>& dv, const ImagingFlags& g,
                   const std::string& command,
                   const std::function<void(const std::vector<std::string>&)>& writing,
                   const std::function<void(int64_t, int64_t)>& progress) {
  wave::Options o = s.options;
  if (progress) o.progress = progress;
  BornShot r;
  r.backend = wave::linearised_backend(s.options);
  r.outputs = {"shot.npy", "shot.json", "summary.json"};
  if (s.write_segy) r.outputs.insert(r.outputs.begin() + 2, "shot.sgy");
  const auto start = std::chrono::steady_clock::now();
  const std::vector<double> dd = wave::born(s.model(), o, dv);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (writing) writing(r.outputs);
  write_shot(s, std::vector<float>(dd.begin(), dd.end()));
  json doc = base_summary(s, "fdstencil-born-summary-1", command);
  doc["perturbation"] = g.perturbation;
  doc["record_of"] = "J dv: the traces' first-order change for the velocity change dv (m/s), Born modelling";
  doc["backend"] = r.backend;
  doc["seconds"] = r.seconds;
  doc["outputs"] = r.outputs;
  write_json_file((s.out_dir / "summary.json").string(), doc);
  return r;
}

json settings_json(const ImagingFlags& g, Kind kind) {
  json s =
      kind == Kind::gradient
          ? json{{"gradient_of",
                  "1/2 sum over receivers and steps of (modelled - observed)^2, by the velocity (m/s)"}}
          : json{{"condition", g.condition}, {"illumination", g.illumination}, {"laplacian", g.laplacian}};
  // Boundary saving changes the gradient on the model's outer faces, so a survey's stack names it
  // (its identity) and is not resumed without it. Named only where asked for: a stack of a run
  // without it keeps the identity it had before the option existed.
  if (g.boundary_saving) s["boundary_saving"] = true;
  return s;
}

}  // namespace imaging_cli

Action add_gradient(CLI::App& app, const std::vector<std::string>& argv) {
  return add_imaging(app, argv, Kind::gradient);
}
Action add_rtm(CLI::App& app, const std::vector<std::string>& argv) {
  return add_imaging(app, argv, Kind::rtm);
}

Action add_born(CLI::App& app, const std::vector<std::string>& argv) {
  auto* cmd = app.add_subcommand(
      "born",
      "Born modelling: the record J dv of a velocity perturbation dv, the first-order change of the traces "
      "of `fdstencil wave`'s own run (the same flags describe it), written as wave writes a shot (shot.npy, "
      "shot.json, shot.sgy with --segy), so that rtm and gradient take it; with --survey every shot's, into "
      "--output's shot_<id> folders beside survey.json (no --overwrite: the same command again keeps the "
      "finished shots). Bad input exits 2 before any work and writes nothing.");
  auto f = std::make_shared<Flags>();
  f->label = "fdstencil born";
  auto g = std::make_shared<ImagingFlags>();
  add_run_description(cmd, f.get());
  const std::string group = "Born";
  cmd->add_option("--perturbation", g->perturbation,
                  "dv: the velocity's change in m/s over the model's points, a .npy of the model's shape "
                  "(required)")
      ->type_name("FILE")
      ->group(group);
  cmd->add_option("--survey", f->survey,
                  "A survey file (`fdstencil wave --survey`'s): every shot's record into --output's "
                  "shot_<id> folder, as wave --survey writes them, so that rtm and gradient --survey take "
                  "the folder as --observed; the same command again keeps the finished shots (verified) "
                  "and runs the rest")
      ->type_name("FILE")
      ->group(group);
  cmd->add_option("--devices", g->devices,
                  "With --survey on the GPU: the GPUs its shots spread over, one worker each taking the "
                  "next shot (\"all\": every visible one; default: the current one)")
      ->type_name("LIST")
      ->group(group);
  add_output_options(cmd, f.get(), group,
                     "shot.npy (receivers, steps; float32), shot.json (with --survey: shot_<id> folders of "
                     "them, survey.json)");
  cmd->add_flag("--segy", f->segy, "Also shot.sgy, the same samples as SEG-Y rev 2 (one source)")
      ->group(group);
  const std::string command = command_text(argv);
  return [f, g, command] { return run_born(*f, *g, command); };
}

}  // namespace fdstencil::cli
