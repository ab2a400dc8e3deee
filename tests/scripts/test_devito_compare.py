"""bench/devito_compare.py's refusals (CI has no Devito): a missing CLI and a missing Devito exit 2
with a message; where Devito is installed, a toy comparison runs and reports both figures."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
SCRIPT = os.path.join(ROOT, "bench", "devito_compare.py")


def cli():
    for d in ("build", "build-cpu"):
        path = os.path.join(ROOT, d, "fdstencil")
        if os.access(path, os.X_OK):
            return path
    return None


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, timeout=600)


class DevitoCompareTest(unittest.TestCase):
    def test_a_missing_cli_is_refused(self):
        r = run("--cli", "/nonexistent/fdstencil")
        self.assertEqual(r.returncode, 2)
        self.assertIn("not an executable", r.stderr)

    @unittest.skipIf(cli() is None, "no fdstencil build")
    def test_without_devito_it_says_so_and_with_it_both_run(self):
        try:
            import devito  # noqa: F401
        except ImportError:
            r = run("--cli", cli())
            self.assertEqual(r.returncode, 2)
            self.assertIn("pip install devito", r.stderr)
            return
        with tempfile.TemporaryDirectory() as out:
            path = os.path.join(out, "c.json")
            r = run("--cli", cli(), "--size", "24", "--layer", "4", "--steps", "4", "--output", path)
            self.assertEqual(r.returncode, 0, r.stderr)
            doc = json.load(open(path))
            self.assertGreater(doc["fdstencil"]["gpts"], 0)
            self.assertGreater(doc["devito"]["gpts"], 0)
            self.assertEqual(doc["devito"]["computational"], [32, 32, 32])


if __name__ == "__main__":
    unittest.main()
