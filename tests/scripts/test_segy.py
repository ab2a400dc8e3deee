"""SEG-Y between the built tool and Python's segyio (Debian python3-segyio), the other side of
every file:

- a shot record: `fdstencil wave --segy` on small 2D and 3D models on the cpu; segyio reads
  shot.sgy and finds shot.npy's samples bit for bit and every header the record promises
  (positions with their scalars, interval, sample count, field record, sequence numbers, offsets);
- velocity models written by segyio (segyio.create with inline/crossline numbers and CDP
  coordinates, inline- and crossline-sorted, IEEE and IBM float; segyio.tools.from_array without
  coordinates) read by `fdstencil segy info --json`, `segy to-npy` and `wave --model`, and a model
  written by `fdstencil segy from-npy` opened by segyio.open with its geometry recognised;
- malformed files through the CLI: exit 2, a message naming the problem, nothing written.

The tool comes from $FDSTENCIL_CLI (tests/CMakeLists.txt sets it). Without segyio, the tool, or
SEG-Y support in it, every case reports skipped; run as a script the file then exits 77, which
CTest reports as skipped.
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest

try:
    import numpy as np
    import segyio
    from segyio import _segyio  # noqa: F401  the C extension, loaded lazily by segyio.open
except ImportError as e:
    np = segyio = None
    MISSING = f"{sys.executable} cannot import {e.name} (Debian python3-segyio)"
else:
    MISSING = None

CLI = os.environ.get("FDSTENCIL_CLI", "")
if MISSING is None and not (CLI and os.access(CLI, os.X_OK)):
    MISSING = "$FDSTENCIL_CLI does not name the built fdstencil (CTest sets it)"
if MISSING is None:
    info = subprocess.run([CLI, "info", "--json"], capture_output=True, text=True)
    if info.returncode != 0 or not json.loads(info.stdout)["build"].get("segy"):
        MISSING = f"{CLI} was built without SEG-Y support (libsegyio)"

# One thread, and sleeping rather than spinning OpenMP waiters: each run takes well under a second
# even while other tests hold the machine's cores.
ENV = dict(os.environ, OMP_NUM_THREADS="1", OMP_WAIT_POLICY="passive")
TEXT, BINARY, TRACE_HEADER = 3200, 400, 240


def fdstencil(*args):
    return subprocess.run([CLI, *map(str, args)], capture_output=True, text=True, env=ENV)


def patch(path, offset, fmt, value):
    """Overwrite one big-endian field of a file (struct format such as '>h' or '>i')."""
    with open(path, "r+b") as f:
        f.seek(offset)
        f.write(struct.pack(fmt, value))


def trace_header(t, ns, byte, bytes_per_sample=4):
    """The file offset of byte `byte` (1-based, SEG-Y's numbering) of trace t's header."""
    return TEXT + BINARY + t * (TRACE_HEADER + bytes_per_sample * ns) + byte - 1


def write_cube(path, cube, spacing, fmt=5, crossline_sorted=False, ilines=None, xlines=None):
    """A 3D model (ny, nx, nz) written by segyio.create: inline and crossline numbers, CDP
    coordinates in centimetres (scalar -100) at `spacing`, the sample interval spacing in mm."""
    ny, nx, nz = cube.shape
    ilines = list(range(10, 10 + 2 * ny, 2)) if ilines is None else ilines
    xlines = list(range(1, nx + 1)) if xlines is None else xlines
    spec = segyio.spec()
    spec.format = fmt
    spec.samples = list(range(nz))
    spec.ilines, spec.xlines = ilines, xlines
    spec.sorting = 1 if crossline_sorted else 2  # segyio's codes: 1 crossline, 2 inline
    order = [(j, i) for i in range(nx) for j in range(ny)] if crossline_sorted else \
        [(j, i) for j in range(ny) for i in range(nx)]
    interval = int(round(spacing * 1000))
    with segyio.create(path, spec) as f:
        for t, (j, i) in enumerate(order):
            f.header[t] = {
                segyio.TraceField.INLINE_3D: ilines[j],
                segyio.TraceField.CROSSLINE_3D: xlines[i],
                segyio.TraceField.CDP_X: int(round(100 * i * spacing)),
                segyio.TraceField.CDP_Y: int(round(100 * j * spacing)),
                segyio.TraceField.SourceGroupScalar: -100,
                segyio.TraceField.TRACE_SAMPLE_COUNT: nz,
                segyio.TraceField.TRACE_SAMPLE_INTERVAL: interval,
            }
            f.trace[t] = cube[j, i, :]
        f.bin.update(hdt=interval, hns=nz)


@unittest.skipIf(MISSING, MISSING)
class SegyTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="fdstencil_test_segy_")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.dir, name)

    def ok(self, *args):
        r = fdstencil(*args)
        self.assertEqual(r.returncode, 0, f"fdstencil {' '.join(map(str, args))}:\n{r.stdout}{r.stderr}")
        return r

    def refused(self, args, *words, written=()):
        """The command exits 2 with a message holding every word, and none of `written` exists."""
        r = fdstencil(*args)
        self.assertEqual(r.returncode, 2, f"fdstencil {' '.join(map(str, args))}: {r.stdout}{r.stderr}")
        for w in words:
            self.assertIn(w, r.stderr)
        for name in written:
            self.assertFalse(os.path.exists(name), f"{name} was written")
        return r.stderr

    # --- a shot record: written by the tool, read by segyio -------------------------------------

    def check_shot(self, run, dim, shot_id, endian="big"):
        record = np.load(os.path.join(run, "shot.npy"))
        with open(os.path.join(run, "shot.json")) as f:
            side = json.load(f)
        with open(os.path.join(run, "summary.json")) as f:
            self.assertIn("shot.sgy", json.load(f)["outputs"])
        self.assertEqual(side["shot_id"], shot_id)
        dt_us = side["dt"] * 1e6
        self.assertAlmostEqual(dt_us, round(dt_us), delta=1e-6, msg="the record's interval is whole microseconds")
        # segy info reads it as the shot gather it is (issue 33: it once said "2D SEG-Y model",
        # its sample interval read as a depth spacing).
        info = fdstencil("segy", "info", os.path.join(run, "shot.sgy"))
        self.assertEqual(info.returncode, 0, info.stderr)
        # The file's path (a random temporary folder) is taken out: its letters can spell "dz".
        said = info.stdout.replace(os.path.join(run, "shot.sgy"), "SHOT")
        self.assertIn("a pre-stack file", said)
        self.assertNotIn("model", said.split("\n")[0])
        self.assertNotIn("dz", said)
        with segyio.open(os.path.join(run, "shot.sgy"), ignore_geometry=True, endian=endian) as f:
            data = f.trace.raw[:]
            self.assertEqual(data.dtype, np.float32)
            self.assertTrue(np.array_equal(data, record), "shot.sgy's samples differ from shot.npy's")
            self.assertGreater(np.abs(data).max(), 0, "the record is all zeros")
            self.assertEqual(f.tracecount, record.shape[0])
            self.assertEqual(len(f.samples), record.shape[1])
            self.assertEqual(segyio.tools.dt(f), round(dt_us))
            self.assertEqual(f.bin[segyio.BinField.Interval], round(dt_us))
            self.assertEqual(f.bin[segyio.BinField.Samples], record.shape[1])
            self.assertEqual(f.bin[segyio.BinField.Format], 5)
            self.assertEqual(f.bin[segyio.BinField.MeasurementSystem], 1)
            # The revision is two bytes, major then minor (rev 1 big-endian; rev 2, 02 00, where
            # little-endian): segyio 1.8 reads the pair as one number in the file's order.
            self.assertEqual(f.bin[segyio.BinField.SEGYRevision], 0x0100 if endian == "big" else 0x0002)
            self.assertEqual(f.bin[segyio.BinField.TraceFlag], 1)
            self.assertIn("FDSTENCIL", segyio.tools.wrap(f.text[0]))
            src = side["sources"][0]["position"]
            sz, sy, sx = (src[0], src[1], src[2]) if dim == 3 else (src[0], 0.0, src[1])
            for t, rec in enumerate(side["receivers"]):
                rz, ry, rx = (rec[0], rec[1], rec[2]) if dim == 3 else (rec[0], 0.0, rec[1])
                h = f.header[t]
                F = segyio.TraceField
                self.assertEqual(h[F.TRACE_SEQUENCE_LINE], t + 1)
                self.assertEqual(h[F.TRACE_SEQUENCE_FILE], t + 1)
                self.assertEqual(h[F.TraceNumber], t + 1)
                self.assertEqual(h[F.FieldRecord], shot_id)
                self.assertEqual(h[F.TRACE_SAMPLE_COUNT], record.shape[1])
                self.assertEqual(h[F.TRACE_SAMPLE_INTERVAL], round(dt_us))
                self.assertEqual(h[F.SourceGroupScalar], -100)
                self.assertEqual(h[F.ElevationScalar], -100)
                # Coordinates and depths read back through their scalars, in metres.
                scale = 1 / 100
                self.assertAlmostEqual(h[F.SourceX] * scale, sx, places=2)
                self.assertAlmostEqual(h[F.SourceY] * scale, sy, places=2)
                self.assertAlmostEqual(h[F.GroupX] * scale, rx, places=2)
                self.assertAlmostEqual(h[F.GroupY] * scale, ry, places=2)
                self.assertAlmostEqual(h[F.SourceDepth] * scale, sz, places=2)
                self.assertAlmostEqual(h[F.ReceiverGroupElevation] * scale, -rz, places=2)
                self.assertAlmostEqual(h[F.CDP_X] * scale, (sx + rx) / 2, places=2)
                offset = np.hypot(rx - sx, ry - sy) * (np.sign(rx - sx) if dim == 2 and rx < sx else 1)
                self.assertEqual(h[F.offset], int(round(offset)))

    def test_a_2d_shot_round_trips_through_segyio(self):
        run = self.path("run2d")
        self.ok("wave", "--backend", "cpu", "--quiet", "--constant", 2000, "--shape", "61,61", "--spacing", 10,
                "--steps", 100, "--source", "300,300", "--receiver-line", "100,100:100,500:9", "--segy",
                "--shot-id", 17, "-o", run)
        self.check_shot(run, 2, 17)
        with open(os.path.join(run, "summary.json")) as f:
            summary = json.load(f)
        # The run's default dt is no whole number of microseconds: the record is at the one below.
        self.assertNotEqual(summary["record_dt"], summary["dt"])
        self.assertEqual(summary["record_dt"] * 1e6, int(summary["dt"] * 1e6))

    def test_a_little_endian_shot_and_model_round_trip_through_segyio(self):
        run = self.path("run-le")
        self.ok("wave", "--backend", "cpu", "--quiet", "--constant", 2000, "--shape", "61,61", "--spacing", 10,
                "--steps", 100, "--source", "300,300", "--receiver-line", "100,100:100,500:9", "--segy",
                "--segy-little-endian", "--shot-id", 3, "-o", run)
        self.check_shot(run, 2, 3, endian="little")
        model = (1500 + np.arange(7 * 3 * 6, dtype=np.float32)).reshape(7, 3, 6)
        npy, sgy = self.path("m.npy"), self.path("m-le.sgy")
        np.save(npy, model)
        self.ok("segy", "from-npy", npy, sgy, "--spacing", 12.5, "--little-endian")
        with segyio.open(sgy, endian="little") as f:  # strict: the inline/crossline geometry must be found
            self.assertEqual(list(f.ilines), [1, 2, 3])
            self.assertTrue(np.array_equal(segyio.tools.cube(f), model.transpose(1, 2, 0)))
        out = self.path("back.npy")
        self.ok("segy", "to-npy", sgy, out)
        self.assertTrue(np.array_equal(np.load(out), model))

    def test_a_3d_shot_with_a_whole_dt_round_trips_unresampled(self):
        run = self.path("run3d")
        self.ok("wave", "--backend", "cpu", "--quiet", "--constant", 2000, "--shape", "21,21,21", "--spacing", 10,
                "--cpml", 8, "--steps", 40, "--dt", 0.001, "--source", "100,90,110",
                "--receiver-grid", "50:20,180,3:30,170,4", "--segy", "-o", run)
        self.check_shot(run, 3, 1)
        with open(os.path.join(run, "summary.json")) as f:
            summary = json.load(f)
        self.assertEqual(summary["record_dt"], summary["dt"])
        self.assertEqual(summary["record_samples"], 40)

    # --- models written by segyio, read by the tool --------------------------------------------

    def test_segyio_cubes_in_either_sorting_and_format_read_as_written(self):
        rng = np.random.default_rng(3)
        ny, nx, nz = 4, 5, 9
        cube = np.round(1500 + 3000 * rng.random((ny, nx, nz))).astype(np.float32)  # exact in IBM float
        want = np.ascontiguousarray(cube.transpose(2, 0, 1))  # (nz, ny, nx)
        for fmt, crossline_sorted, order in ((5, False, "inline-sorted"), (1, True, "crossline-sorted")):
            with self.subTest(format=fmt, order=order):
                sgy, npy = self.path(f"cube{fmt}.sgy"), self.path(f"cube{fmt}.npy")
                write_cube(sgy, cube, 20.0, fmt=fmt, crossline_sorted=crossline_sorted)
                info = json.loads(self.ok("segy", "info", sgy, "--json").stdout)
                self.assertEqual(info["dim"], 3)
                self.assertEqual(info["shape"], [nz, ny, nx])
                self.assertEqual(info["spacing"], {"z": 20.0, "y": 20.0, "x": 20.0})
                self.assertEqual(info["format"], fmt)
                self.assertEqual(info["order"], order)
                self.assertEqual(info["inline"]["first"], 10)
                self.assertEqual(info["inline"]["last"], 16)
                self.assertEqual(info["inline"]["step"], 2)
                self.assertEqual(info["crossline"]["last"], nx)
                self.assertEqual(info["vmin"], float(cube.min()))
                self.assertEqual(info["vmax"], float(cube.max()))
                self.ok("segy", "to-npy", sgy, npy)
                got = np.load(npy)
                self.assertEqual(got.dtype, np.float32)
                self.assertTrue(np.array_equal(got, want))
        # The solver takes it without --spacing, and records where it came from.
        run = self.path("run")
        self.ok("wave", "--backend", "cpu", "--quiet", "--model", self.path("cube5.sgy"), "--steps", 5,
                "--source", "80,30,40", "--no-final", "-o", run)
        with open(os.path.join(run, "summary.json")) as f:
            model = json.load(f)["model"]
        self.assertEqual(model["format"], "segy")
        self.assertEqual(model["spacing"], 20.0)
        self.assertEqual(model["segy"]["shape"], [nz, ny, nx])

    def test_a_from_array_line_without_coordinates_needs_the_spacing(self):
        rng = np.random.default_rng(4)
        line = (1500 + 1000 * rng.random((12, 30))).astype(np.float32)  # (traces, samples)
        sgy, npy = self.path("line.sgy"), self.path("line.npy")
        segyio.tools.from_array(sgy, line, format=5, dt=5000)  # 5 m in millimetres
        info = json.loads(self.ok("segy", "info", sgy, "--json").stdout)
        self.assertEqual(info["dim"], 2)
        self.assertEqual(info["shape"], [30, 12])
        self.assertEqual(info["spacing"], {"z": 5.0, "x": None})
        self.assertFalse(info["coordinates"])
        self.ok("segy", "to-npy", sgy, npy)
        self.assertTrue(np.array_equal(np.load(npy), line.T))
        run = self.path("run")
        self.refused(["wave", "--backend", "cpu", "--model", sgy, "--steps", 5, "--source", "50,20", "-o", run],
                     "x spacing", "CDP coordinates", "--spacing", written=[run])
        self.refused(["wave", "--backend", "cpu", "--model", sgy, "--spacing", 4, "--steps", 5, "--source", "50,20",
                      "-o", run], "--spacing 4", "dz = 5", written=[run])
        self.ok("wave", "--backend", "cpu", "--quiet", "--model", sgy, "--spacing", 5, "--steps", 5, "--source",
                "50,20", "-o", run)

    # --- a model written by the tool, opened by segyio ------------------------------------------

    def test_from_npy_writes_a_cube_segyio_recognises(self):
        rng = np.random.default_rng(5)
        model = (1500 + 3000 * rng.random((7, 3, 6))).astype(np.float32)  # (nz, ny, nx)
        npy, sgy = self.path("m.npy"), self.path("m.sgy")
        np.save(npy, model)
        self.ok("segy", "from-npy", npy, sgy, "--spacing", 12.5)
        with segyio.open(sgy) as f:  # strict: the inline/crossline geometry must be found
            self.assertEqual(list(f.ilines), [1, 2, 3])
            self.assertEqual(list(f.xlines), [1, 2, 3, 4, 5, 6])
            self.assertEqual(f.sorting, segyio.TraceSortingFormat.INLINE_SORTING)
            self.assertEqual(segyio.tools.dt(f), 12500)
            self.assertTrue(np.array_equal(segyio.tools.cube(f), model.transpose(1, 2, 0)))
            h = f.header[f.tracecount - 1]
            scalar = h[segyio.TraceField.SourceGroupScalar]
            unit = 1 / -scalar if scalar < 0 else (scalar or 1)
            self.assertAlmostEqual(h[segyio.TraceField.CDP_X] * unit, 5 * 12.5)
            self.assertAlmostEqual(h[segyio.TraceField.CDP_Y] * unit, 2 * 12.5)
        # 2D: one inline.
        np.save(npy, model[:, 0, :])
        self.ok("segy", "from-npy", npy, sgy, "--spacing", 10, "--overwrite")
        with segyio.open(sgy) as f:
            self.assertEqual(list(f.ilines), [1])
            self.assertTrue(np.array_equal(f.iline[1], model[:, 0, :].T))

    # --- malformed files: exit 2, named, nothing written ----------------------------------------

    def test_malformed_files_are_refused_by_name(self):
        rng = np.random.default_rng(6)
        ny, nx, nz = 3, 4, 5
        good = self.path("good.sgy")
        write_cube(good, (1500 + 1000 * rng.random((ny, nx, nz))).astype(np.float32), 10.0)
        out = self.path("out.npy")

        def bad(name, change):
            path = self.path(name)
            shutil.copy(good, path)
            change(path)
            return path

        truncated = bad("cut.sgy", lambda p: os.truncate(p, os.path.getsize(p) - 10))
        self.refused(["segy", "to-npy", truncated, out], "cut.sgy", "truncated",
                     f"{TRACE_HEADER + 4 * nz - 10} bytes are left over", written=[out])
        fmt = bad("fmt.sgy", lambda p: patch(p, 3224, ">h", 13))
        self.refused(["segy", "to-npy", fmt, out], "format code 13", "rev 2 defines", written=[out])
        # Trace 5's crossline set to trace 4's: (inline 12, crossline 1) twice.
        dup = bad("dup.sgy", lambda p: patch(p, trace_header(5, nz, 193), ">i", 1))
        self.refused(["segy", "to-npy", dup, out], "inline 12, crossline 1", "pre-stack", written=[out])
        bent = bad("bent.sgy", lambda p: patch(p, trace_header(6, nz, 181), ">i", 2 * 1000 + 250))
        self.refused(["segy", "to-npy", bent, out], "irregular CDP coordinates", written=[out])
        self.refused(["segy", "to-npy", good, out, "--spacing", 12], "--spacing 12", "contradicts", written=[out])
        self.refused(["segy", "info", self.path("none.sgy")], "none.sgy", "no such file")
        run = self.path("run")
        self.refused(["wave", "--backend", "cpu", "--model", dup, "--steps", 5, "--source", "20,10,10", "-o", run],
                     "pre-stack", written=[run])
        self.refused(["wave", "--backend", "cpu", "--constant", 2000, "--shape", "11,11", "--spacing", 10, "--steps",
                      5, "--source", "50,50", "--receiver-line", "10,0:10,100:3", "--segy", "--record-dt",
                      0.0012345, "-o", run], "--record-dt 0.0012345", "whole number of microseconds",
                     written=[run])
        self.assertEqual(sorted(os.listdir(self.dir)),
                         sorted(["good.sgy", "cut.sgy", "fmt.sgy", "dup.sgy", "bent.sgy"]))


if __name__ == "__main__":
    if MISSING:
        print(f"skipped: {MISSING}")
        sys.exit(77)
    unittest.main()
