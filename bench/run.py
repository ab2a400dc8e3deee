#!/usr/bin/env python3
"""The device runner: one call on a GPU machine runs the named stages in order, writing every
result and a log under OUT ($OUT, else ./out).

Usage: python3 bench/run.py STAGE [STAGE ...]

Stages:
  build      configure (Release, CUDA) and build the tool and the tests
  carried    use the tool built elsewhere and carried in .carry/fdstencil (else build)
  test       the whole CTest suite
  sanitize   compute-sanitizer memcheck and racecheck over the CUDA tests of SANITIZE_FILTER
  pack       every wave run's folder (less its wavefields) into OUT/runs.tar
  list       the campaigns and the question each answers
  NAME       the campaign bench/campaigns/NAME.toml: its runs, its result file OUT/<result>, and,
             where it names a committed figure, whether the new one reproduces it within noise
             (OUT/checks.json)

A campaign file (TOML) declares one study:
  question   what it answers, one sentence
  result     the file it writes under OUT (committed as bench/results/<device>/campaigns/<result>)
  kind       bench: `fdstencil bench --backend cuda ARGS --json RESULT`
             wave:  `fdstencil wave --backend cuda --quiet ARGS --output DIR`; RESULT is its summary.json
             cpml:  `python3 bench/wave_cpml.py --backend cuda --cli FD ARGS --output RESULT`
             gradient: `python3 bench/python/gradient_versus_deepwave.py ARGS --output RESULT`, the
                    built Python package (build/python) on its path
             wave-sweep: one wave run per point of [sweep], ARGS and the point's arguments;
                    RESULT holds a record per run: the point, the kernel, GPts/s, % of its bound
  args       the command's arguments
  [sweep]    wave-sweep only: keys whose values are lists, run as their product; an entry that is
             a list is added to the arguments as it is (["--shape", "1000,1000", ...]), a scalar
             as --KEY VALUE (key's _ as -), an empty string not at all (the default); a table
             kernel_params of lists is the product of its keys as --kernel-params JSON objects, and a
             list of tables (kernel_params = [{graph = 0}, ...]) is each table as one;
             the key progress takes "quiet" (--quiet, every other sweep's way) or "bar" (the progress
             reports a run without --quiet makes, into the log)
  [reproduces]  file (under bench/results/), record (the fields that pick one record of a file of
             records), at (the figure's dotted path in the committed record or file), now (its path in
             the new result; default: at), noise (how far apart two runs of it may be), why (the
             noise's reason)

Example: python3 bench/run.py carried laplacian-plan d2xyz-plan wave-step cpml-reflection pack
"""
import itertools
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CAMPAIGNS = os.path.join(ROOT, "bench", "campaigns")
RESULTS = os.path.join(ROOT, "bench", "results")
OUT = os.path.abspath(os.environ.get("OUT", os.path.join(ROOT, "out")))
WORK = "/tmp/fdstencil-runs"  # the wave runs' folders, packed by `pack`
LOG = os.path.join(OUT, "run-log.txt")
# The tests compute-sanitizer walks: one small case of each kernel family (the whole suite under
# memcheck takes longer than one device call).
SANITIZE_FILTER = os.environ.get(
    "SANITIZE_FILTER", "CudaLaplacian.EveryVariantDefaultsOnOddSizes:CudaSeismic.TmaTileRing:"
    "WaveGpu.TileAndL1DesignsAgreeOnASmallGrid")


class Runner:
    def __init__(self):
        self.fd = os.path.join(ROOT, "build", "fdstencil")
        self.failed = []
        self.checks = []

    def log(self, text):
        print(text, flush=True)
        with open(LOG, "a") as f:
            f.write(text + "\n")

    def sh(self, cmd, name, timeout=None, env=None):
        """Runs cmd (a list), its output into the log; False (and the stage failed) on an error."""
        self.log("$ " + " ".join(cmd))
        with open(LOG, "a") as f:
            r = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, cwd=ROOT, timeout=timeout, env=env)
        if r.returncode != 0:
            self.log(f"{name}: FAILED (exit {r.returncode})")
            self.failed.append(name)
        return r.returncode == 0

    def build(self):
        subprocess.run(["nvidia-smi", "--query-gpu=name,memory.total", "--format=csv"], stdout=open(LOG, "a"))
        # The device image has no libsegyio, the SEG-Y tests' second reader (the tool needs none):
        # the Debian packages unpacked by scripts/fetch-segyio.sh (carried by the call) are found
        # through CMAKE_PREFIX_PATH.
        segyio = os.path.join(ROOT, "build-deps", "segyio", "usr")
        prefix = ["-DCMAKE_PREFIX_PATH=" + segyio] if os.path.isdir(segyio) else []
        ok = self.sh(["cmake", "--preset", "default", "-DFDSTENCIL_CUDA=ON", *prefix], "build") and self.sh(
            ["cmake", "--build", "--preset", "default", "-j", str(os.cpu_count())], "build")
        if not ok:
            sys.exit(f"build failed: see {LOG}")

    def carried(self):
        tool = os.path.join(ROOT, ".carry", "fdstencil")
        if os.access(tool, os.X_OK) and subprocess.run([tool, "info"], capture_output=True).returncode == 0:
            self.fd = tool
            self.log("carried build ok")
        else:
            self.log("the carried build does not run here: building")
            self.build()

    def test(self):
        self.sh(["ctest", "--preset", "default", "-j", str(os.cpu_count()), "--output-on-failure"], "test")

    def sanitize(self):
        binary = os.path.join(ROOT, "build", "tests", "test_cuda")
        for tool in ("memcheck", "racecheck"):
            self.sh(["compute-sanitizer", "--tool", tool, "--error-exitcode", "1", binary,
                     "--gtest_filter=" + SANITIZE_FILTER], "sanitize " + tool)

    def pack(self):
        if not os.path.isdir(WORK):
            return
        with tarfile.open(os.path.join(OUT, "runs.tar"), "w") as tar:
            tar.add(WORK, arcname="runs", filter=lambda t: None if t.name.endswith(".npy") else t)
        shutil.rmtree(WORK)

    def campaign(self, name):
        path = os.path.join(CAMPAIGNS, name + ".toml")
        if not os.path.isfile(path):
            sys.exit(f"no stage or campaign '{name}' (campaigns: {', '.join(campaign_names())})")
        c = tomllib.load(open(path, "rb"))
        result = os.path.join(OUT, c["result"])
        self.log(f"=== {name}: {c['question']}")
        if c["kind"] != "wave-sweep" and not self.sh(self.command(c, name, result), name, env=environment(c)):
            return
        if c["kind"] == "wave-sweep":
            return self.sweep(c, name, result)
        if c["kind"] == "wave":
            shutil.copy(os.path.join(WORK, name, "summary.json"), result)
        if "reproduces" in c:
            self.check(name, c["reproduces"], result)

    def command(self, c, name, result):
        if c["kind"] == "bench":
            return [self.fd, "bench", "--backend", "cuda", *c["args"], "--json", result]
        if c["kind"] == "wave":
            shutil.rmtree(os.path.join(WORK, name), ignore_errors=True)
            os.makedirs(WORK, exist_ok=True)
            return [self.fd, "wave", "--backend", "cuda", "--quiet", *c["args"], "--output", os.path.join(WORK, name)]
        if c["kind"] == "cpml":
            return [sys.executable, os.path.join(ROOT, "bench", "wave_cpml.py"), "--backend", "cuda", "--cli", self.fd,
                    *c["args"], "--output", result]
        if c["kind"] == "gradient":
            return [sys.executable, os.path.join(ROOT, "bench", "python", "gradient_versus_deepwave.py"), *c["args"],
                    "--output", result]
        sys.exit(f"campaign {name}: unknown kind '{c['kind']}' (bench, wave, cpml, gradient or wave-sweep)")

    def sweep(self, c, name, result):
        """The campaign's runs, one per point of the product of its [sweep] lists, into one table."""
        axes = {k: sweep_values(v) for k, v in c["sweep"].items()}
        keys = list(axes)
        records = []
        for i, point in enumerate(itertools.product(*axes.values())):
            extra, quiet = [], ["--quiet"]
            for key, value in zip(keys, point):
                if key == "progress":
                    if value not in ("quiet", "bar"):
                        sys.exit(f"campaign {name}: progress is \"quiet\" or \"bar\", not {value!r}")
                    quiet = ["--quiet"] if value == "quiet" else []
                elif isinstance(value, list):
                    extra += [str(v) for v in value]
                elif value != "":
                    extra += ["--" + key.replace("_", "-"), str(value)]
            folder = os.path.join(WORK, f"{name}-{i}")
            shutil.rmtree(folder, ignore_errors=True)
            os.makedirs(WORK, exist_ok=True)
            ok = self.sh([self.fd, "wave", "--backend", "cuda", *quiet, *c["args"], *extra, "--output", folder],
                         f"{name} run {i}")
            record = dict(zip(keys, point)) | {"ok": ok}
            if ok:
                s = json.load(open(os.path.join(folder, "summary.json")))
                t = s["timing"]
                record |= {"kernel": s["kernel"], "computational": s["domain"]["computational"],
                           "steps": s["steps"], "gpts": t["gpts"], "percent_of_bound": t["percent_of_bound"],
                           "copy_gbps": t["copy_gbps"], "loop_s": t["loop_s"]}
                self.log(f"{name} {i}: {point} {t['gpts']:.1f} GPts/s, {t['percent_of_bound']:.1f} % of bound")
            records.append(record)
            json.dump({"question": c["question"], "records": records}, open(result, "w"), indent=1)

    def check(self, name, rep, result):
        then = figure(json.load(open(os.path.join(RESULTS, rep["file"]))), rep.get("record"), rep["at"])
        now = figure(json.load(open(result)), rep.get("record"), rep.get("now", rep["at"]))
        ok = abs(now - then) <= rep["noise"]
        self.checks.append({"campaign": name, "committed_file": rep["file"], "figure": rep.get("now", rep["at"]),
                            "committed": then, "now": now, "noise": rep["noise"], "within_noise": ok})
        self.log(f"{name}: {rep.get('now', rep['at'])} committed {then:.2f}, now {now:.2f} "
                 f"({'within' if ok else 'OUTSIDE'} the noise {rep['noise']})")
        json.dump(self.checks, open(os.path.join(OUT, "checks.json"), "w"), indent=1)


def environment(c):
    """A gradient campaign's environment: the built Python package first on the path; None (the
    runner's own) for the others."""
    if c["kind"] != "gradient":
        return None
    path = os.path.join(ROOT, "build", "python")
    return os.environ | {"PYTHONPATH": os.pathsep.join(filter(None, [path, os.environ.get("PYTHONPATH")]))}


def sweep_values(value):
    """A [sweep] key's points: its list, or for a table of lists (kernel_params) the JSON object of
    each point of their product."""
    if not isinstance(value, dict):
        return [json.dumps(v) if isinstance(v, dict) else v for v in value]
    return [json.dumps(dict(zip(value, p))) for p in itertools.product(*value.values())]


def figure(doc, record, at):
    """The number at dotted path `at` in doc, or in the one record of doc["records"] that has every
    field of `record`."""
    if record:
        hits = [r for r in doc["records"] if all(r.get(k) == v for k, v in record.items())]
        if len(hits) != 1:
            raise SystemExit(f"{len(hits)} records match {record}: a check needs exactly one")
        doc = hits[0]
    for key in at.split("."):
        doc = doc[key]
    return float(doc)


def campaign_names():
    return sorted(f[:-5] for f in os.listdir(CAMPAIGNS) if f.endswith(".toml"))


def main(stages):
    if not stages or stages[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if stages else 2
    os.makedirs(OUT, exist_ok=True)
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    r = Runner()
    builtin = {"build": r.build, "carried": r.carried, "test": r.test, "sanitize": r.sanitize, "pack": r.pack}
    for stage in stages:
        if stage == "list":
            for n in campaign_names():
                print(f"{n:20s} {tomllib.load(open(os.path.join(CAMPAIGNS, n + '.toml'), 'rb'))['question']}")
        elif stage in builtin:
            builtin[stage]()
        else:
            r.campaign(stage)
    missed = [c["campaign"] for c in r.checks if not c["within_noise"]]
    if r.failed or missed:
        r.log(f"failed: {', '.join(r.failed + [m + ' (outside the noise)' for m in missed])}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
