"""The wave solver's bench scripts on synthetic data, without the CLI binary:

- bench/wave_cpml.py: a known 1 % reflected copy measures -40 dB (peak and band); the Ricker's 10 %
  band from the closed form agrees with the FFT of the CLI's sampled wavelet; the geometry keeps
  every face but the measured one out of reach; and the whole script, driven through a fake CLI
  whose every face reflects exactly 1 % (image sources), reports -40 dB once the spreading is
  added back, for each width and angle.
- bench/report_wave.py: rows sorted by R then size, the figures as written, refusals exit 2.
- bench/plot_wave.py: each subcommand writes a PNG (skipped without matplotlib); bad inputs exit 2
  and write nothing, with or without matplotlib.

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

if np is not None:
    import plot_wave
    import report_wave
    import wave_cpml


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


if __name__ == "__main__":
    unittest.main()
