"""The wave solver's bench scripts on synthetic data, without the CLI binary:

- bench/wave_cpml.py: a known 1 % reflected copy measures -40 dB (peak and band); the Ricker's 10 %
  band from the closed form agrees with the FFT of the CLI's sampled wavelet; the geometry keeps
  every face but the measured one out of reach; and the whole script, driven through a fake CLI
  whose every face reflects exactly 1 % (image sources), reports -40 dB once the spreading is
  added back, for each width and angle.
- bench/report_wave.py: rows sorted by R then size, the figures as written, refusals exit 2.
- bench/plot_wave.py: each subcommand writes a PNG (skipped without matplotlib); bad inputs exit 2
  and write nothing, with or without matplotlib. The gather, the snapshot over its model and the
  model slice are drawn from files of a few KB made here (.npy with their sidecars, run folders,
  and SEG-Y through segyio where it is importable, else those cases report skipped); a .sgy input
  without segyio exits 2 naming it.
- bench/wave_files.py: SEG-Y models read back as written (2D, and 3D by inline and crossline), a
  layered model rebuilt from a summary as src/wave/model.cpp builds it, the --snapshot-slice read
  from a run's command.

Everything needs NumPy: without it the whole module reports skipped.
"""
import contextlib
import glob
import io
import json
import math
import os
import stat
import subprocess
import sys
import tempfile
import textwrap
import unittest
from unittest import mock

BENCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench")
sys.path.insert(0, BENCH)

try:
    import numpy as np
except ImportError:
    np = None
try:
    import matplotlib  # noqa: F401
    HAVE_MPL = True
except ImportError:
    HAVE_MPL = False
try:
    import segyio
except ImportError:
    segyio = None

if np is not None:
    import plot_wave
    import report_wave
    import wave_cpml
    import wave_files


def quietly(fn, *args):
    """fn(*args) with stdout and stderr captured: (its return value, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = fn(*args)
    return rc, out.getvalue(), err.getvalue()


# A stand-in for `fdstencil wave`: the direct wave f(t - r/v) / sqrt(r) (2D far-field spreading)
# plus, off each face of the model, a mirror-image source reflecting exactly 1 %. A correct
# measurement of the left face therefore reads -40 dB once 10 log10(path ratio) is added back; any
# other face reaching a receiver inside its window would show up as a larger figure.
FAKE_CLI = r'''
import json, math, os, sys
import numpy as np
a = sys.argv[2:]
opt = {a[i]: a[i + 1] for i in range(0, len(a) - 1) if a[i].startswith("--") and not a[i + 1].startswith("--")}
if os.environ.get("FAKE_FAIL"):
    print("fake: the solver refused", file=sys.stderr)
    sys.exit(3)
v, h, f0, delay = float(opt["--constant"]), float(opt["--spacing"]), float(opt["--ricker"]), float(opt["--delay"])
shape = [int(n) for n in opt["--shape"].split(",")]
dim = len(shape)
dt = 1e-3
nt = int(opt["--steps"]) if "--steps" in opt else int(round(float(opt["--time"]) / dt)) + 1
src = np.array([float(c) for c in opt["--source"].split(",")])
p0, p1, n = opt["--receiver-line"].split(":")
p0 = np.array([float(c) for c in p0.split(",")]); p1 = np.array([float(c) for c in p1.split(",")])
rec = p0 + (p1 - p0) * (np.arange(int(n))[:, None] / max(1, int(n) - 1))
t = np.arange(nt) * dt
def w(tt):
    x = (math.pi * f0 * (tt - delay)) ** 2
    return (1 - 2 * x) * np.exp(-x)
images = [(src, 1.0)]
for axis, npts in enumerate(shape):
    for plane in (0.0, (npts - 1) * h):
        m = src.copy(); m[axis] = 2 * plane - m[axis]; images.append((m, 0.01))
u = np.zeros((len(rec), nt))
for pos, amp in images:
    r = np.linalg.norm(rec - pos, axis=1)
    u += amp * w(t[None, :] - r[:, None] / v) / np.sqrt(r[:, None])
out = opt["--output"]; os.makedirs(out, exist_ok=True)
np.save(os.path.join(out, "shot.npy"), u.astype(np.float32))
W = int(opt["--cpml"])
comp = [s + 2 * W for s in shape]
json.dump({"format": "fdstencil-shot-1", "shape": [len(rec), nt], "dt": dt, "t0": 0.0,
           "receivers": rec.tolist(), "cpml_width": W, "run_dt": dt}, open(os.path.join(out, "shot.json"), "w"))
json.dump({"format": "fdstencil-wave-summary-1", "steps": nt, "dt": dt, "dt_limit": 1.25e-3, "backend": "fake",
           "kernel": "image sources", "radius": int(opt["--radius"]), "warnings": [],
           "domain": {"dim": dim, "model": shape, "computational": comp, "points": int(np.prod(comp)),
                      "absorbing": {"x": {"lo": W, "hi": W}, "z": {"lo": W, "hi": W}}},
           "timing": {"loop_s": 0.1, "gpts": 1.0}}, open(os.path.join(out, "summary.json"), "w"))
'''


def summary_doc(radius, extents, gpts, backend="cuda", cpml=20, free_surface=False, copy=3000.0, steps=1000):
    points = math.prod(extents)
    absorbing = {"x": {"lo": cpml, "hi": cpml}, "z": {"lo": 0 if free_surface else cpml, "hi": cpml}}
    if len(extents) == 3:
        absorbing["y"] = {"lo": cpml, "hi": cpml}
    bound = copy / 16 if copy else 0.0
    return {"format": "fdstencil-wave-summary-1", "steps": steps, "dt": 1e-3, "dt_limit": 1.25e-3,
            "backend": backend, "kernel": f"step_r{radius} block 32x4", "radius": radius,
            "domain": {"dim": len(extents), "model": [n - 2 * cpml for n in extents], "computational": extents,
                       "points": points, "absorbing": absorbing},
            "timing": {"loop_s": points * steps / gpts / 1e9, "total_s": 1.0, "gpts": gpts, "bytes_per_point": 16.0,
                       "copy_gbps": copy, "bound_gpts": bound, "percent_of_bound": 100 * gpts / bound if bound else 0,
                       "device_bytes": points * 40},
            "bytes_per_grid_point": 40.0, "warnings": []}


@unittest.skipIf(np is None, "NumPy is not installed for " + sys.executable)
class ReflectionTest(unittest.TestCase):
    def pulse(self, n=2000, dt=1e-3, f0=15.0, at=0.3):
        return wave_cpml.ricker(f0, at, dt, n)

    def test_a_one_percent_copy_measures_minus_40_db(self):
        dt, shift = 1e-3, 250  # the copy 0.25 s later, both pulses well inside the untapered window
        b = self.pulse()
        reflected = np.zeros_like(b)
        reflected[shift:] = 0.01 * b[:-shift]
        band = wave_cpml.ricker_band(15.0)
        got = wave_cpml.reflection_db(b + reflected, b, dt, band, n_window=1500, taper_samples=100, n_floor=400)
        self.assertAlmostEqual(got["peak_db"], -40.0, places=6)
        self.assertAlmostEqual(got["band_db"], -40.0, places=6)
        # Before the copy arrives the difference is only the copy of the wavelet's Gaussian tail.
        self.assertLess(got["floor_db"], -300)

    def test_band_ratio_sees_what_the_peak_hides(self):
        # A reflection 10x stronger at low frequency: the copy of the wavelet's running integral.
        dt = 1e-3
        b = self.pulse()
        slow = np.cumsum(b) * dt * 2 * math.pi * 3.0   # ~ b's shape scaled by 3 Hz / f
        a = b.copy()
        a[300:] += 0.01 * slow[:-300]
        band = wave_cpml.ricker_band(15.0)
        got = wave_cpml.reflection_db(a, b, dt, band, n_window=1800, taper_samples=100)
        # At the band's low edge (2.93 Hz) the integral's gain is 3 / 2.93: about -40 dB there,
        # while the peak ratio is set by the integral's smaller amplitude.
        self.assertAlmostEqual(got["band_db"], -40 + 20 * math.log10(3.0 / band[0]), delta=0.3)
        self.assertLess(got["peak_db"], got["band_db"] - 3)

    def test_refusals(self):
        b = self.pulse(n=100)
        band = (3.0, 33.0)
        with self.assertRaises(ValueError):
            wave_cpml.reflection_db(b, b[:50], 1e-3, band)
        with self.assertRaises(ValueError):
            wave_cpml.reflection_db(b, np.zeros_like(b), 1e-3, band)
        bad = b.copy()
        bad[10] = np.nan
        with self.assertRaises(ValueError):
            wave_cpml.reflection_db(bad, b, 1e-3, band)
        with self.assertRaises(ValueError):
            wave_cpml.reflection_db(b, b, 1e-3, band, n_window=500)


@unittest.skipIf(np is None, "NumPy is not installed for " + sys.executable)
class RickerBandTest(unittest.TestCase):
    def test_closed_form(self):
        lo, hi = wave_cpml.ricker_band(15.0)
        self.assertAlmostEqual(lo / 15.0, 0.19550, places=4)
        self.assertAlmostEqual(hi / 15.0, 2.21127, places=4)
        for f in (lo, hi):
            self.assertAlmostEqual(float(wave_cpml.ricker_amplitude(f, 15.0)), 0.1, places=9)
        self.assertAlmostEqual(float(wave_cpml.ricker_amplitude(15.0, 15.0)), 1.0, places=12)

    def test_against_the_sampled_wavelets_fft(self):
        f0, dt = 15.0, 5e-4
        w = wave_cpml.ricker(f0, 1.5 / f0, dt, 4000)
        spec = np.abs(np.fft.rfft(w, 1 << 16))
        f = np.fft.rfftfreq(1 << 16, dt)
        inside = f[spec >= 0.1 * spec.max()]
        lo, hi = wave_cpml.ricker_band(f0)
        step = f[1]
        self.assertLess(abs(inside.min() - lo), 2 * step)
        self.assertLess(abs(inside.max() - hi), 2 * step)


@unittest.skipIf(np is None, "NumPy is not installed for " + sys.executable)
class GeometryTest(unittest.TestCase):
    def test_only_the_measured_face_is_within_reach(self):
        for dim in (2, 3):
            g = wave_cpml.plan_geometry(dim, 2000.0, 5.0, 15.0, [10, 20, 40])
            shape = g["shape"]
            nz, nx = shape[0], shape[-1]
            s = g["source"]
            for rec in g["receivers"]:
                self.assertLess(abs(rec["angle_deg"] - rec["angle_nominal"]), 0.5)
                rz, rx = g["line"]["z0"] + rec["dz"], g["line"]["x"]
                reach = 2000.0 * rec["window_s"] / 5.0   # points the wave covers in the window
                # Test model: the top, bottom and right faces (and the y faces in 3D) mirror the source
                # beyond the window; the left face's image lies within it (it is what is measured).
                far = [math.hypot(rz - (-s["z"]), rx - s["x"]), math.hypot(rz - (2 * (nz - 1) - s["z"]), rx - s["x"]),
                       math.hypot(rz - s["z"], rx - (2 * (nx - 1) - s["x"]))]
                if dim == 3:
                    far.append(math.hypot(math.hypot(rz - s["z"], rx - s["x"]), s["y"] - (-s["y"])))
                self.assertGreater(min(far), reach * 1.04, (dim, rec))
                self.assertLess(math.hypot(rz - s["z"], rx + s["x"]), reach)
                # Reference: the left face moved out by extend_left.
                e = g["extend_left"]
                self.assertGreater(math.hypot(rz - s["z"], (rx + e) + (s["x"] + e)), reach * 1.04)
                self.assertLess(rec["floor_s"], rec["front_points"] * 5.0 / 2000.0)


@unittest.skipIf(np is None, "NumPy is not installed for " + sys.executable)
class CpmlScriptTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.cli = os.path.join(self.dir.name, "fdstencil")
        with open(self.cli, "w") as f:
            f.write(f"#!{sys.executable}\n" + textwrap.dedent(FAKE_CLI))
        os.chmod(self.cli, os.stat(self.cli).st_mode | stat.S_IEXEC)

    def tearDown(self):
        self.dir.cleanup()

    def test_a_one_percent_face_reads_minus_40_db_at_every_angle(self):
        out = os.path.join(self.dir.name, "cpml.json")
        rc, _, err = quietly(wave_cpml.main, ["--cli", self.cli, "--widths", "10,40", "--backend", "cpu",
                                              "--output", out])
        self.assertEqual(rc, 0, err)
        with open(out) as f:
            doc = json.load(f)
        self.assertEqual(sorted(doc["widths"]), ["10", "40"])
        self.assertEqual(doc["device"], {"backend": "fake", "kernel": "image sources"})
        self.assertEqual(doc["cli_backend"], "cpu")
        for width, fig in doc["widths"].items():
            self.assertEqual(sorted(fig["per_angle"], key=float), ["0", "30", "45", "60"])
            for angle, a in fig["per_angle"].items():
                self.assertAlmostEqual(a["peak_db"] + a["spreading_db"], -40.0, delta=0.06, msg=(width, angle, a))
                self.assertAlmostEqual(a["band_db"] + a["spreading_db"], -40.0, delta=0.1, msg=(width, angle, a))
                self.assertTrue(a["floor_db"] is None or a["floor_db"] < -100, (width, angle, a))
            self.assertEqual(fig["peak_db"], max(a["peak_db"] for a in fig["per_angle"].values()))
        self.assertAlmostEqual(doc["band_hz"][0], 2.933, places=2)

    def test_a_failing_run_exits_one_and_a_missing_cli_two(self):
        os.environ["FAKE_FAIL"] = "1"
        try:
            rc, _, err = quietly(wave_cpml.main, ["--cli", self.cli, "--widths", "10"])
        finally:
            del os.environ["FAKE_FAIL"]
        self.assertEqual(rc, 1)
        self.assertIn("the solver refused", err)
        rc, _, err = quietly(wave_cpml.main, ["--cli", os.path.join(self.dir.name, "nothing")])
        self.assertEqual(rc, 2)
        self.assertIn("no fdstencil binary", err)


@unittest.skipIf(np is None, "NumPy is not installed for " + sys.executable)
class ReportWaveTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def write(self, name, doc):
        path = os.path.join(self.dir.name, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(doc if isinstance(doc, str) else json.dumps(doc))
        return path

    def test_rows_sorted_by_radius_then_size(self):
        self.write("r8big/summary.json", summary_doc(8, [552, 552, 552], 20.0))
        self.write("r4big/summary.json", summary_doc(4, [552, 552, 552], 30.0))
        self.write("r4small/summary.json", summary_doc(4, [296, 296, 296], 25.0, free_surface=True))
        self.write("r2d/summary.json", summary_doc(4, [240, 240], 0.4, backend="cpu", copy=0.0))
        rc, out, err = quietly(report_wave.main, [os.path.join(self.dir.name, "*", "summary.json")])
        self.assertEqual(rc, 0, err)
        rows = [l for l in out.splitlines() if l.startswith("| ") and not l.startswith("| size")]
        self.assertEqual([r.split(" | ")[0] for r in rows], ["| 240x240", "| 296x296x296", "| 552x552x552", "| 552x552x552"])
        self.assertEqual(rows[1], "| 296x296x296 | 4 | 20 + free surface | 1000 | 25 | 3000 | 187.5 | 13.3 | 40.0 | "
                                  "cuda (step_r4 block 32x4) |")
        self.assertIn("| 240x240 | 4 | 20 | 1000 | 0.4 | - | - | - | 40.0 | cpu", rows[0])
        self.assertIn("| 8 |", rows[3])

    def test_json_rows_and_run_folders(self):
        d = os.path.dirname(self.write("run/summary.json", summary_doc(4, [100, 120, 140], 12.5)))
        rc, out, err = quietly(report_wave.main, [d, "--json"])
        self.assertEqual(rc, 0, err)
        rows = json.loads(out)
        self.assertEqual(len(rows), 1)
        self.assertEqual(rows[0]["extents"], [100, 120, 140])
        self.assertEqual(rows[0]["points"], 100 * 120 * 140)
        self.assertEqual((rows[0]["radius"], rows[0]["cpml"], rows[0]["gpts"]), (4, 20, 12.5))

    def test_refusals_exit_two(self):
        good = self.write("good.json", summary_doc(4, [64, 64], 1.0))
        bads = [self.write("broken.json", "{not json"),
                self.write("shot.json", {"format": "fdstencil-shot-1"}),
                self.write("nodomain.json", {"format": "fdstencil-wave-summary-1", "radius": 4}),
                os.path.join(self.dir.name, "missing.json"),
                os.path.join(self.dir.name, "none*", "summary.json")]
        for bad in bads:
            r = subprocess.run([sys.executable, os.path.join(BENCH, "report_wave.py"), good, bad],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 2, (bad, r.stderr))
            self.assertEqual(r.stdout, "")
            self.assertNotIn("Traceback", r.stderr)


@unittest.skipIf(np is None, "NumPy is not installed for " + sys.executable)
class PlotWaveTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        d = self.dir.name
        # A run with --compare-analytic: 3 receivers, 400 samples, the computed trace off by 1 %.
        self.run_dir = os.path.join(d, "run")
        os.makedirs(self.run_dir)
        dt = 1e-3
        exact = np.stack([wave_cpml.ricker(15.0, 0.1 + 0.02 * k, dt, 400) for k in range(3)]).astype(np.float32)
        np.save(os.path.join(self.run_dir, "analytic.npy"), exact)
        np.save(os.path.join(self.run_dir, "shot.npy"), (exact * 1.01).astype(np.float32))
        with open(os.path.join(self.run_dir, "shot.json"), "w") as f:
            json.dump({"format": "fdstencil-shot-1", "shape": [3, 400], "dt": dt, "t0": 0.0,
                       "receivers": [[100.0, 50.0 + 10 * k] for k in range(3)], "model": {"dim": 2}}, f)
        doc = summary_doc(4, [200, 200], 0.5, backend="cpu", copy=0.0)
        doc["analytic"] = {"misfit": 0.01, "window_end_s": 0.3, "window_samples": 301,
                           "per_receiver": [{"receiver": k, "misfit": 0.01, "distance_m": 40.0} for k in range(2)],
                           "skipped": [2]}
        with open(os.path.join(self.run_dir, "summary.json"), "w") as f:
            json.dump(doc, f)
        x = np.linspace(-1, 1, 60)
        self.snap2 = os.path.join(d, "snapshot_000100.npy")
        np.save(self.snap2, np.outer(np.sin(5 * x), np.cos(3 * x[:40])).astype(np.float32))
        self.snap3 = os.path.join(d, "snapshot_000200.npy")
        np.save(self.snap3, np.random.default_rng(7).standard_normal((20, 24, 28)).astype(np.float32))
        self.cpml = os.path.join(d, "cpml.json")
        widths = {str(w): {"peak_db": -20 - w, "band_db": -18 - w,
                           "per_angle": {str(a): {"peak_db": -22 - w + a / 30, "band_db": -20 - w} for a in (0, 30, 45, 60)}}
                  for w in (10, 20, 40)}
        with open(self.cpml, "w") as f:
            json.dump({"dim": 2, "velocity": 2000.0, "spacing": 5.0, "f0": 15.0, "widths": widths,
                       "device": {"backend": "cpu", "kernel": "x"}}, f)
        self.perf = []
        for i, (radius, n, gpts) in enumerate([(4, 256, 20.0), (4, 512, 28.0), (8, 256, 14.0), (8, 512, 19.0)]):
            path = os.path.join(d, f"perf{i}.json")
            with open(path, "w") as f:
                json.dump(summary_doc(radius, [n + 40] * 3, gpts), f)
            self.perf.append(path)

    def tearDown(self):
        self.dir.cleanup()

    def png(self, name):
        return os.path.join(self.dir.name, name)

    def cases(self):
        return [("trace", ["trace", self.run_dir, "--receiver", "1"]),
                ("trace_skipped", ["trace", self.run_dir, "--receiver", "2"]),
                ("snap2", ["snapshot", self.snap2, "--spacing", "5"]),
                ("snap3", ["snapshot", self.snap3]),
                ("cpml", ["cpml", self.cpml]),
                ("perf", ["perf", *self.perf])]

    @unittest.skipUnless(HAVE_MPL, "matplotlib is not installed for " + sys.executable)
    def test_every_subcommand_writes_a_png(self):
        for name, argv in self.cases():
            out = self.png(name + ".png")
            rc, _, err = quietly(plot_wave.main, [*argv, "--output", out])
            self.assertEqual(rc, 0, (name, err))
            with open(out, "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n", name)
            self.assertGreater(os.path.getsize(out), 10000, name)
        self.assertEqual(glob.glob(os.path.join(self.dir.name, "*.tmp.png")), [])

    def test_bad_inputs_exit_two_and_write_nothing(self):
        d = self.dir.name
        line = os.path.join(d, "line.npy")
        np.save(line, np.zeros(10, np.float32))
        nan = os.path.join(d, "nan.npy")
        np.save(nan, np.full((4, 4), np.nan, np.float32))
        empty_run = os.path.join(d, "empty_run")
        os.makedirs(empty_run)
        for name in ("shot.npy", "shot.json", "summary.json"):
            with open(os.path.join(self.run_dir, name), "rb") as src, open(os.path.join(empty_run, name), "wb") as dst:
                dst.write(src.read())   # the same run without analytic.npy
        not_cpml = os.path.join(d, "not_cpml.json")
        with open(not_cpml, "w") as f:
            json.dump({"dim": 2}, f)
        bads = [["trace", self.run_dir, "--receiver", "3"],
                ["trace", empty_run],
                ["trace", os.path.join(d, "nowhere")],
                ["snapshot", line],
                ["snapshot", nan],
                ["snapshot", os.path.join(d, "missing.npy")],
                ["snapshot", self.snap2, "--spacing", "-1"],
                ["cpml", not_cpml],
                ["cpml", self.perf[0]],
                ["perf", self.perf[0], self.cpml],
                ["cpml", self.cpml, "--output", os.path.join(d, "no_such_folder", "x.png")]]
        for argv in bads:
            if "--output" not in argv:
                argv = [*argv, "--output", self.png("bad.png")]
            rc, _, err = quietly(plot_wave.main, argv)
            self.assertEqual(rc, 2, (argv, err))
            self.assertIn("plot_wave.py: error:", err)
        self.assertEqual(glob.glob(os.path.join(d, "*.png")), [])
        # As a script too: the exit status and no traceback.
        r = subprocess.run([sys.executable, os.path.join(BENCH, "plot_wave.py"), "snapshot", line,
                            "--output", self.png("bad.png")], capture_output=True, text=True)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertNotIn("Traceback", r.stderr)


PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_size(path):
    """(width, height) from a PNG's IHDR chunk; fails the caller's assertion on anything else."""
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != PNG_SIGNATURE or head[12:16] != b"IHDR":
        return None
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def write_segy_shot(path, data, dt_us, group_x, source_x, scalar=-10):
    """A shot record as SEG-Y through segyio: one trace per receiver, the coordinates times -scalar
    (a negative scalar divides), as SEG-Y writers store decimetres."""
    spec = segyio.spec()
    spec.format, spec.samples, spec.tracecount = 5, np.arange(data.shape[1]), data.shape[0]
    with segyio.create(path, spec) as f:
        f.bin.update({segyio.BinField.Interval: dt_us, segyio.BinField.Samples: data.shape[1]})
        for i, trace in enumerate(data):
            f.header[i] = {segyio.TraceField.SourceGroupScalar: scalar,
                           segyio.TraceField.GroupX: int(round(group_x[i] * -scalar)),
                           segyio.TraceField.SourceX: int(round(source_x * -scalar)),
                           segyio.TraceField.TRACE_SAMPLE_INTERVAL: dt_us,
                           segyio.TraceField.TRACE_SEQUENCE_LINE: i + 1, segyio.TraceField.FieldRecord: 1}
            f.trace[i] = trace.astype(np.float32)


def write_segy_traces(path, traces, inline, crossline, dt_us=5000):
    """Traces (ntraces, nsamples) with the given inline and crossline numbers, in this order."""
    spec = segyio.spec()
    spec.format, spec.samples, spec.tracecount = 5, np.arange(traces.shape[1]), traces.shape[0]
    with segyio.create(path, spec) as f:
        f.bin.update({segyio.BinField.Interval: dt_us, segyio.BinField.Samples: traces.shape[1]})
        for i, trace in enumerate(traces):
            f.header[i] = {segyio.TraceField.INLINE_3D: int(inline[i]), segyio.TraceField.CROSSLINE_3D: int(crossline[i]),
                           segyio.TraceField.TRACE_SAMPLE_INTERVAL: dt_us}
            f.trace[i] = trace.astype(np.float32)


class PlotCase(unittest.TestCase):
    """A temporary folder per test, and the checks every picture shares."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.d = self.dir.name

    def tearDown(self):
        self.dir.cleanup()

    def path(self, *names):
        return os.path.join(self.d, *names)

    def save(self, name, array, dtype=np.float32):
        path = self.path(name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        np.save(path, np.asarray(array, dtype=dtype))
        return path

    def dump(self, name, doc):
        path = self.path(name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            json.dump(doc, f)
        return path

    def draws(self, argv, name="out.png"):
        """plot_wave.py argv --output name writes a plausible PNG; returns its path."""
        out = self.path(name)
        rc, _, err = quietly(plot_wave.main, [*argv, "--output", out])
        self.assertEqual(rc, 0, (argv, err))
        size = png_size(out)
        self.assertIsNotNone(size, (argv, "not a PNG"))
        # A 7-8 inch figure at plot_wave.DPI: several hundred pixels each way, tens of KB.
        self.assertGreater(min(size), 300, (argv, size))
        self.assertGreater(os.path.getsize(out), 10000, argv)
        self.assertEqual(glob.glob(self.path("*.tmp.png")), [])
        return out

    def refuses(self, argv, *words):
        """plot_wave.py argv exits 2 with a message holding each word, and writes nothing."""
        out = argv[argv.index("--output") + 1] if "--output" in argv else self.path("refused.png")
        rc, _, err = quietly(plot_wave.main, argv if "--output" in argv else [*argv, "--output", out])
        self.assertEqual(rc, 2, (argv, err))
        self.assertIn("plot_wave.py: error:", err)
        for w in words:
            self.assertIn(w, err, argv)
        self.assertFalse(os.path.exists(out), argv)
        self.assertEqual(glob.glob(self.path("*.tmp.png")), [])
        return err


def synthetic_shot(nrec=12, ns=250, dt=2e-3, dx=10.0, source_x=55.0, v=1500.0, f0=15.0):
    """A direct wave's hyperbola and a reflection's, Ricker-shaped: (record, receiver x)."""
    x = np.arange(nrec) * dx
    t = np.arange(ns) * dt
    off = np.abs(x - source_x)
    rec = np.zeros((nrec, ns))
    for arrival, amp in ((0.05 + off / v, 1.0), (np.sqrt(0.2 ** 2 + (off / v) ** 2) + 0.05, 0.1)):
        arg = (np.pi * f0 * (t[None, :] - arrival[:, None])) ** 2
        rec += amp * (1 - 2 * arg) * np.exp(-arg)
    return rec.astype(np.float32), x


@unittest.skipIf(np is None, "NumPy is not installed for " + sys.executable)
class PlotGatherTest(PlotCase):
    def run_folder(self, name="run", nrec=12, ns=250, dt=2e-3, receivers=None):
        rec, x = synthetic_shot(nrec, ns, dt)
        self.save(f"{name}/shot.npy", rec)
        pos = receivers if receivers is not None else [[5.0, float(xi)] for xi in x]
        self.dump(f"{name}/shot.json", {"format": "fdstencil-shot-1", "shape": [nrec, ns], "dt": dt, "t0": 0.0,
                                        "receivers": pos, "sources": [{"position": [10.0, 55.0]}]})
        return self.path(name)

    @unittest.skipUnless(HAVE_MPL, "matplotlib is not installed for " + sys.executable)
    def test_each_gain_and_axis_draws(self):
        run = self.run_folder()
        self.assertLess(os.path.getsize(os.path.join(run, "shot.npy")), 16000)   # a small input
        for argv in (["gather", run],
                     ["gather", os.path.join(run, "shot.npy"), "--gain", "tpow", "--clip", "95"],
                     ["gather", run, "--gain", "tpow", "--tpow", "1.5", "--cmap", "seismic"],
                     ["gather", run, "--gain", "agc", "--agc-window", "0.04", "--horizontal", "offset"],
                     ["gather", run, "--horizontal", "index", "--clip", "100"]):
            self.draws(argv)

    def test_gains(self):
        data = np.ones((2, 11))
        n = 4
        flat = plot_wave.agc(data, n)   # a constant trace: every window's RMS is 1
        np.testing.assert_allclose(flat, 1 / (1 + plot_wave.AGC_FLOOR))
        burst = np.zeros((1, 50))
        burst[0, 20:30] = 1e-3
        burst[0, 40] = 1.0
        out = plot_wave.agc(burst, 5)
        # A quiet stretch is lifted towards the loud one's level; silence stays zero.
        self.assertGreater(out[0, 25], 0.5)
        self.assertEqual(out[0, 5], 0.0)

    @unittest.skipUnless(HAVE_MPL, "matplotlib is not installed for " + sys.executable)
    def test_a_receiver_grid_falls_back_to_the_index(self):
        grid = [[5.0, 100.0 * (k // 4), 10.0 * (k % 4)] for k in range(12)]   # x repeats: not one line
        run = self.run_folder(receivers=grid)
        self.draws(["gather", run])
        self.refuses(["gather", run, "--horizontal", "x"], "neither rises nor falls")

    @unittest.skipUnless(HAVE_MPL, "matplotlib is not installed for " + sys.executable)
    def test_uneven_receivers_draw(self):
        run = self.run_folder(receivers=[[5.0, float(x)] for x in np.cumsum(np.arange(1, 13))])
        self.draws(["gather", run])

    @unittest.skipIf(segyio is None, "segyio is not installed for " + sys.executable)
    def test_a_segy_record_reads_back_and_draws(self):
        rec, x = synthetic_shot()
        path = self.path("shot.sgy")
        write_segy_shot(path, rec, 2000, x, 55.0)
        shot = wave_files.read_shot(path)
        np.testing.assert_array_equal(shot["data"], rec)
        self.assertAlmostEqual(shot["dt"], 2e-3)
        np.testing.assert_allclose(shot["x"], x)
        np.testing.assert_allclose(shot["offset"], x - 55.0)
        if HAVE_MPL:
            self.draws(["gather", path, "--horizontal", "offset", "--gain", "agc", "--agc-window", "0.05"])

    def test_segy_without_segyio_exits_two(self):
        path = self.path("shot.sgy")
        with open(path, "wb") as f:
            f.write(b"\0" * 4000)
        with mock.patch.dict(sys.modules, {"segyio": None}):   # import segyio raises ImportError
            err = self.refuses(["gather", path], "segyio")
        self.assertIn("python3-segyio", err)

    def test_bad_inputs_exit_two_and_write_nothing(self):
        run = self.run_folder()
        line = self.run_folder("line")
        self.save("line/shot.npy", np.ones(250))                        # wrong rank
        nan = self.run_folder("nan")
        rec = np.load(os.path.join(nan, "shot.npy"))
        rec[3, 40] = np.nan
        self.save("nan/shot.npy", rec)
        zeros = self.run_folder("zeros")
        self.save("zeros/shot.npy", np.zeros((12, 250)))
        lonely = self.save("lonely/shot.npy", np.ones((12, 250)))        # no shot.json beside it
        mismatch = self.run_folder("mismatch")
        self.save("mismatch/shot.npy", np.ones((12, 249)))               # the sidecar says 250 samples
        with open(self.path("notes.txt"), "w") as f:
            f.write("not a record\n")
        nopos = self.run_folder("nopos")
        self.dump("nopos/shot.json", {"format": "fdstencil-shot-1", "dt": 2e-3})
        cases = [(["gather", self.path("nowhere")], ["no such file"]),
                 (["gather", line], ["(receivers, samples)"]),
                 (["gather", nan], ["NaN", "(3, 40)"]),
                 (["gather", zeros], ["every sample is zero"]),
                 (["gather", lonely], ["shot.json", "no such file"]),
                 (["gather", mismatch], ["(12, 249)", "(12, 250)"]),
                 (["gather", nopos, "--horizontal", "offset"], ["no source and receiver positions"]),
                 (["gather", self.path("notes.txt")], ["expected a run folder"])]
        for clip in ("0", "-5", "100.5", "nan"):
            cases.append((["gather", run, "--clip", clip], ["--clip", "(0, 100]"]))
        cases += [(["gather", run, "--tpow", "2"], ["goes with --gain tpow"]),
                  (["gather", run, "--agc-window", "0.1"], ["goes with --gain agc"]),
                  (["gather", run, "--gain", "tpow", "--tpow", "0"], ["--tpow 0"]),
                  (["gather", run, "--gain", "agc", "--agc-window", "10"], ["--agc-window 10", "2..250"]),
                  (["gather", run, "--gain", "agc", "--agc-window", "0.001"], ["--agc-window"]),
                  (["gather", run, "--output", self.path("no_such_folder", "x.png")], ["does not exist"])]
        for argv, words in cases:
            self.refuses(argv, *words)


@unittest.skipIf(np is None, "NumPy is not installed for " + sys.executable)
class PlotSnapshotOverModelTest(PlotCase):
    def layered_run(self, name="run", shape=(30, 40), steps=(10, 20), command=None, snap_shape=None):
        """A run folder of a layered model: its summary, and a snapshot per step."""
        dim = len(shape)
        cmd = command or f"fdstencil wave --layered 0:1500,50:2500 --shape {','.join(map(str, shape))} --spacing 5"
        self.dump(f"{name}/summary.json",
                  {"format": "fdstencil-wave-summary-1", "command": cmd, "dt": 1e-3, "steps": max(steps),
                   "model": {"kind": "layered", "dim": dim, "shape": list(shape), "spacing": 5.0,
                             "layers": [[0.0, 1500.0], [50.0, 2500.0]], "vmin": 1500.0, "vmax": 2500.0}})
        rng = np.random.default_rng(11)
        for step in steps:
            self.save(f"{name}/snapshot_{step:06d}.npy", rng.standard_normal(snap_shape or shape))
        return self.path(name)

    def test_a_layered_model_is_rebuilt_as_the_solver_builds_it(self):
        summary = {"model": {"kind": "layered", "shape": [5, 3], "spacing": 5.0,
                             "layers": [[0.0, 1500.0], [10.0, 2000.0], [12.0, 3000.0]]}}
        v = wave_files.run_model(self.d, summary)
        # Depth k h against each layer's top: 0, 5 in the first; 10 (on the top) in the second;
        # 15, 20 below 12 in the third.
        np.testing.assert_array_equal(v[:, 0], [1500, 1500, 2000, 3000, 3000])
        self.assertEqual(v.shape, (5, 3))
        summary["model"] = {"kind": "constant", "shape": [2, 3, 4], "velocity": 1800.0}
        np.testing.assert_array_equal(wave_files.run_model(self.d, summary), np.full((2, 3, 4), 1800.0))

    def test_a_snapshot_the_summary_does_not_list_is_another_runs(self):
        # A folder of two runs (before issue 33 a run could be written over another's): the
        # summary lists step 10's snapshot, and step 20's file is the earlier run's.
        run = self.layered_run(steps=(10, 20))
        summary = wave_files.read_summary(run)
        summary["outputs"] = ["snapshot_000010.npy", "summary.json"]
        self.assertEqual(wave_files.run_snapshot(run, None, summary)[1], 10)
        with self.assertRaisesRegex(wave_files.InputError, "snapshot_000020.npy is not among the outputs"):
            wave_files.run_snapshot(run, 20, summary)
        summary["outputs"] = ["summary.json"]
        with self.assertRaisesRegex(wave_files.InputError, "another run's"):
            wave_files.run_snapshot(run, None, summary)
        self.assertEqual(wave_files.run_snapshot(run, None, None)[1], 20)  # no summary: an interrupted run

    def test_the_snapshot_slice_is_read_from_the_command(self):
        for command, want in (("fdstencil wave --snapshot-every 5 --snapshot-slice y=4 --output r", ("y", 4)),
                              ("fdstencil wave --snapshot-slice=x=12 -o 'a b'", ("x", 12)),
                              ("fdstencil wave --snapshot-every 5 --output r", None)):
            self.assertEqual(wave_files.recorded_slice({"command": command}), want, command)

    @unittest.skipUnless(HAVE_MPL, "matplotlib is not installed for " + sys.executable)
    def test_over_a_model_file_and_a_run_folder(self):
        v = 1500 + 10 * np.add.outer(np.arange(30), np.arange(40))
        model2 = self.save("model2.npy", v)
        snap2 = self.save("snapshot_000100.npy", np.random.default_rng(3).standard_normal((30, 40)))
        self.assertLess(os.path.getsize(snap2), 8000)
        self.draws(["snapshot", snap2, "--model", model2, "--spacing", "5"])
        model3 = self.save("model3.npy", 2000 + np.arange(12 * 14 * 16).reshape(12, 14, 16))
        snap3 = self.save("snap3.npy", np.random.default_rng(4).standard_normal((12, 14, 16)))
        self.draws(["snapshot", snap3, "--model", model3, "--axis", "x", "--index", "3", "--clip", "99"])
        run = self.layered_run()
        self.draws(["snapshot", run])                    # the last step over the run's own model
        self.draws(["snapshot", run, "--step", "10", "--model", model2])

    @unittest.skipUnless(HAVE_MPL, "matplotlib is not installed for " + sys.executable)
    def test_a_sliced_3d_run_finds_its_cut(self):
        # --snapshot-slice y=4 of a (12, 9, 16) model: (12, 16) snapshots.
        run = self.layered_run(shape=(12, 9, 16), snap_shape=(12, 16),
                               command="fdstencil wave --layered 0:1500,50:2500 --shape 12,9,16 --spacing 5 "
                                       "--snapshot-every 10 --snapshot-slice y=4 --output run")
        self.draws(["snapshot", run])
        self.draws(["snapshot", run, "--axis", "y", "--index", "2"])
        self.refuses(["snapshot", run, "--axis", "x"], "y=4", "--index")
        self.refuses(["snapshot", run, "--axis", "z", "--index", "3"], "(12, 16)", "(9, 16)")

    @unittest.skipIf(segyio is None, "segyio is not installed for " + sys.executable)
    def test_a_segy_model(self):
        v = (1500 + 10 * np.add.outer(np.arange(30), np.arange(40))).astype(np.float32)
        path = self.path("model2.sgy")
        segyio.tools.from_array2D(path, np.ascontiguousarray(v.T), format=5, dt=5000)  # one trace per column
        np.testing.assert_array_equal(wave_files.read_model(path)[0], v)
        if HAVE_MPL:
            snap = self.save("snap.npy", np.random.default_rng(5).standard_normal((30, 40)))
            self.draws(["snapshot", snap, "--model", path])
            self.refuses(["snapshot", self.save("snap_t.npy", np.ones((40, 30))), "--model", path],
                         "(40, 30)", "(30, 40)")

    def test_bad_inputs_exit_two_and_write_nothing(self):
        model2 = self.save("model2.npy", np.full((30, 40), 2000.0))
        snap2 = self.save("snap2.npy", np.ones((30, 40)))
        model3 = self.save("model3.npy", np.full((12, 14, 16), 2000.0))
        nan_model = np.full((30, 40), 2000.0)
        nan_model[4, 7] = np.nan
        run = self.layered_run()
        gone = self.layered_run("gone")
        self.dump("gone/summary.json", {"format": "fdstencil-wave-summary-1", "dt": 1e-3,
                                         "model": {"kind": "file", "path": self.path("deleted.npy"), "shape": [30, 40]}})
        cases = [(["snapshot", snap2, "--model", self.save("wide.npy", np.full((30, 41), 2000.0))],
                  ["(30, 40)", "(30, 41)"]),
                 (["snapshot", self.save("s3.npy", np.ones((12, 14, 17))), "--model", model3],
                  ["(12, 14, 17)", "(12, 14, 16)"]),
                 (["snapshot", snap2, "--model", model3], ["--axis and --index"]),
                 (["snapshot", snap2, "--model", model3, "--axis", "z", "--index", "12"], ["--index 12", "0..11"]),
                 (["snapshot", snap2, "--model", self.save("nan_model.npy", nan_model)], ["(4, 7)", "finite"]),
                 (["snapshot", snap2, "--model", self.save("neg.npy", -np.ones((30, 40)))], ["positive"]),
                 (["snapshot", snap2, "--model", self.save("m1.npy", np.ones(30))], ["(30,)"]),
                 (["snapshot", snap2, "--model", self.path("missing.npy")], ["no such file"]),
                 (["snapshot", snap2, "--model", model2, "--index", "3"], ["--index 3", "2D"]),
                 (["snapshot", self.save("nan.npy", np.full((30, 40), np.nan)), "--model", model2], ["NaN"]),
                 (["snapshot", snap2, "--clip", "0"], ["--clip", "(0, 100]"]),
                 (["snapshot", snap2, "--step", "10"], ["run folder"]),
                 (["snapshot", run, "--step", "15"], ["--step 15", "10, 20"]),
                 (["snapshot", gone], ["deleted.npy", "--model"]),
                 (["snapshot", self.path("empty_run")], ["no such file"])]
        for argv, words in cases:
            self.refuses(argv, *words)
        os.makedirs(self.path("no_snapshots"))
        self.dump("no_snapshots/summary.json", {"format": "fdstencil-wave-summary-1"})
        self.refuses(["snapshot", self.path("no_snapshots")], "no snapshot_")


@unittest.skipIf(np is None, "NumPy is not installed for " + sys.executable)
class PlotModelTest(PlotCase):
    def model(self, shape=(30, 40)):
        v = 1500 + np.arange(int(np.prod(shape))).reshape(shape) % 997
        return v.astype(np.float32)

    @unittest.skipUnless(HAVE_MPL, "matplotlib is not installed for " + sys.executable)
    def test_npy_models_and_a_run(self):
        self.draws(["model", self.save("m2.npy", self.model()), "--spacing", "5"])
        m3 = self.save("m3.npy", self.model((12, 14, 16)))
        self.draws(["model", m3])
        self.draws(["model", m3, "--axis", "z", "--index", "0"])
        self.dump("run/summary.json", {"format": "fdstencil-wave-summary-1", "model": {
            "kind": "layered", "shape": [30, 40], "spacing": 5.0, "layers": [[0.0, 1500.0], [60.0, 2500.0]]}})
        self.draws(["model", self.path("run")])

    @unittest.skipIf(segyio is None, "segyio is not installed for " + sys.executable)
    def test_segy_models_read_back(self):
        v2 = self.model()
        p2 = self.path("m2.sgy")
        segyio.tools.from_array2D(p2, np.ascontiguousarray(v2.T), format=5, dt=5000)
        got, h = wave_files.read_model(p2)
        np.testing.assert_array_equal(got, v2)
        self.assertEqual(h, 5.0)   # the sample interval 5000 in millimetres
        # A 2D line runs along its crossline numbers, whatever the order of its traces.
        p2r = self.path("m2r.sgy")
        write_segy_traces(p2r, v2.T[::-1], [7] * 40, np.arange(40, 0, -1))
        np.testing.assert_array_equal(wave_files.read_model(p2r)[0], v2)
        v3 = self.model((10, 3, 5))                            # (nz, ny, nx)
        p3 = self.path("m3.sgy")
        with contextlib.redirect_stdout(io.StringIO()):   # segyio 1.8's from_array3D prints each inline
            segyio.tools.from_array3D(p3, np.ascontiguousarray(v3.transpose(1, 2, 0)), format=5, dt=5000)
        np.testing.assert_array_equal(wave_files.read_model(p3)[0], v3)
        # Crossline-sorted: the same cube, its traces in another order.
        il, xl = np.meshgrid(np.arange(1, 4), np.arange(1, 6), indexing="ij")
        order = np.lexsort((il.ravel(), xl.ravel()))
        columns = v3.transpose(1, 2, 0).reshape(15, 10)
        p3x = self.path("m3x.sgy")
        write_segy_traces(p3x, columns[order], il.ravel()[order], xl.ravel()[order])
        np.testing.assert_array_equal(wave_files.read_model(p3x)[0], v3)
        if HAVE_MPL:
            self.draws(["model", p2])
            self.draws(["model", p3, "--axis", "x", "--index", "4"])

    @unittest.skipIf(segyio is None, "segyio is not installed for " + sys.executable)
    def test_malformed_segy_exits_two(self):
        p = self.path("m2.sgy")
        segyio.tools.from_array2D(p, np.ascontiguousarray(self.model().T), format=5, dt=5000)
        with open(p, "rb") as f:
            whole = f.read()
        with open(self.path("truncated.sgy"), "wb") as f:
            f.write(whole[:len(whole) - 50])
        with open(self.path("text.sgy"), "wb") as f:
            f.write(b"not a SEG-Y file\n" * 300)
        columns = self.model((10, 4)).T
        write_segy_traces(self.path("dup.sgy"), columns, [1, 1, 2, 2], [1, 2, 1, 1])   # (2, 1) twice
        self.refuses(["model", self.path("truncated.sgy")], "not a readable SEG-Y")
        self.refuses(["model", self.path("text.sgy")], "not a readable SEG-Y")
        self.refuses(["model", self.path("dup.sgy")], "inconsistent geometry", "3 distinct")

    def test_segy_without_segyio_exits_two(self):
        with open(self.path("m.sgy"), "wb") as f:
            f.write(b"\0" * 4000)
        with mock.patch.dict(sys.modules, {"segyio": None}):
            self.refuses(["model", self.path("m.sgy")], "segyio")

    def test_bad_inputs_exit_two_and_write_nothing(self):
        m2 = self.save("m2.npy", self.model())
        m3 = self.save("m3.npy", self.model((12, 14, 16)))
        zero = self.model()
        zero[2, 3] = 0
        cases = [(["model", self.path("missing.npy")], ["no such file"]),
                 (["model", self.save("m1.npy", np.ones(30))], ["(30,)"]),
                 (["model", self.save("m4.npy", np.ones((2, 2, 2, 2)))], ["(2, 2, 2, 2)"]),
                 (["model", self.save("nan.npy", np.full((30, 40), np.nan))], ["finite and positive"]),
                 (["model", self.save("zero.npy", zero)], ["(2, 3)", "positive"]),
                 (["model", m2, "--index", "3"], ["drawn whole"]),
                 (["model", m2, "--axis", "y"], ["drawn whole"]),
                 (["model", m3, "--axis", "x", "--index", "16"], ["--index 16", "0..15"]),
                 (["model", m3, "--spacing", "0"], ["--spacing"])]
        for argv, words in cases:
            self.refuses(argv, *words)


if __name__ == "__main__":
    unittest.main()
