"""The source tree's layers depend one way only: core <- physics (the wave step's per-point
physics) <- backends (reference, cpu, cuda) <- plan <- wave <- bench, apps, with the public
headers (include/fdstencil) below them all; the MPI and NCCL
transports (mpi, nccl) see the public headers only, and the apps reach the backends only through
the public headers or the plan layer, never around it. Every quoted include under src/, include/
and apps/ is checked against the layers its file may reach; the public headers must also compile
without CUDA. The link order in CMakeLists.txt enforces the same for definitions; this
catches a header-only reach upwards, which would link fine."""
import os
import re
import unittest

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
SCANNED = ("src", "include", "apps", "python")
EXTENSIONS = (".hpp", ".cpp", ".cu", ".cuh", ".h", ".hpp.in")

# The include roots ("X" of #include "X/...") each layer may name. "fdstencil" is the public headers.
ALLOWED = {
    "fdstencil": {"fdstencil"},
    "core": {"fdstencil", "core"},
    # The acoustic step's per-point physics, which the cpu and cuda backends compute.
    "physics": {"fdstencil", "core", "physics"},
    "reference": {"fdstencil", "core", "reference"},
    "cpu": {"fdstencil", "core", "physics", "cpu"},
    "cuda": {"fdstencil", "core", "physics", "cuda"},
    "plan": {"fdstencil", "core", "reference", "cpu", "cuda", "plan"},
    "wave": {"fdstencil", "core", "physics", "reference", "cpu", "cuda", "plan", "wave"},
    # The transports of runs split across ranks: they implement the public wave::Comm over MPI and
    # over NCCL (which takes MPI's wave::Comm for the rest, through the public interface alone).
    "mpi": {"fdstencil", "mpi"},
    "nccl": {"fdstencil", "nccl"},
}
# The bench layer sits at the top beside the apps: it may name anything but them. The apps (the
# command-line tool) name anything but the backends: the device through fdstencil/device.hpp.
# The Python package's module sits beside the tool, under the same rule.
FORBIDDEN = {"bench": {"apps"}, "apps": {"reference", "cpu", "cuda"}, "python": {"reference", "cpu", "cuda"}}
LAYERS = set(ALLOWED) | set(FORBIDDEN)

# System headers that exist only with the CUDA toolkit.
CUDA_SYSTEM_HEADER = re.compile(
    r"^(cuda|cub/|thrust/|cooperative_groups|curand|cublas|cufft|cusparse|cusolver|nvtx|nvToolsExt|"
    r"mma\.h|nvrtc|nv/)")

QUOTED_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
SYSTEM_INCLUDE = re.compile(r"^\s*#\s*include\s*<([^>]+)>")


def layer_of(rel_path):
    """The layer a repository-relative path belongs to: 'fdstencil' for include/fdstencil, the
    folder name for src/<folder>, 'apps' for apps/, else the path's first component."""
    parts = rel_path.replace(os.sep, "/").split("/")
    if parts[0] == "include" and len(parts) > 2 and parts[1] == "fdstencil":
        return "fdstencil"
    if parts[0] == "src" and len(parts) > 2:
        return parts[1]
    return parts[0]


def include_root(rel_file, include, root=ROOT):
    """The layer an include names. A path that exists next to the including file (the compiler looks
    there first for quoted includes, "../" included) counts as the layer it lands in; otherwise the
    include's first component, or None for a bare name found nowhere."""
    local = os.path.normpath(os.path.join(os.path.dirname(rel_file), include))
    if not local.startswith("..") and os.path.isfile(os.path.join(root, local)):
        return layer_of(local)
    if "/" not in include:
        return None
    return include.split("/")[0]


def check_text(rel_file, text, root=ROOT):
    """The layering violations of one file, given by its repository-relative path and contents, as
    'path:line: #include "X" ...' messages."""
    layer = layer_of(rel_file)
    problems = []
    for number, line in enumerate(text.splitlines(), start=1):
        match = QUOTED_INCLUDE.match(line)
        if not match:
            continue
        include = match.group(1)
        where = f'{rel_file}:{number}: #include "{include}"'
        target = include_root(rel_file, include, root)
        if layer not in LAYERS:
            problems.append(f"{where}: {os.path.dirname(rel_file)} is no known layer (add it to test_layers.py)")
        elif layer in FORBIDDEN:
            if target in FORBIDDEN[layer]:
                problems.append(f"{where}: the {layer} layer may not include {target}/")
        elif target not in ALLOWED[layer]:
            allowed = ", ".join(f'"{r}/..."' for r in sorted(ALLOWED[layer]))
            named = f'"{target}/..."' if target else "a header found in no layer"
            problems.append(f"{where}: the {layer} layer may include only {allowed}, not {named}")
    return problems


def source_files(root=ROOT):
    """Repository-relative paths of every scanned source file, sorted."""
    found = []
    for top in SCANNED:
        for directory, _, names in os.walk(os.path.join(root, top)):
            for name in names:
                if name.endswith(EXTENSIONS):
                    found.append(os.path.relpath(os.path.join(directory, name), root))
    return sorted(found)


def read(rel_path, root=ROOT):
    with open(os.path.join(root, rel_path), encoding="utf-8") as f:
        return f.read()


class LayersTest(unittest.TestCase):
    def test_tree_is_where_expected(self):
        for folder in ("src/core", "src/reference", "src/cpu", "src/cuda", "src/plan", "src/bench",
                       "apps/fdstencil", "include/fdstencil"):
            self.assertTrue(os.path.isdir(os.path.join(ROOT, folder)), f"{folder} not found under {ROOT}")
        files = source_files()
        self.assertGreater(len(files), 20, "too few sources found: is ROOT right?")
        unknown = sorted({os.path.dirname(f) for f in files if layer_of(f) not in LAYERS})
        self.assertEqual(unknown, [], "folders that belong to no layer (add them to test_layers.py)")

    def test_includes_follow_the_layers(self):
        problems = []
        checked = 0
        for rel in source_files():
            text = read(rel)
            checked += sum(1 for line in text.splitlines() if QUOTED_INCLUDE.match(line))
            problems += check_text(rel, text)
        self.assertGreater(checked, 50, "too few quoted includes seen: is the pattern right?")
        if problems:
            self.fail("includes against the layering:\n" + "\n".join(problems))

    def test_public_headers_need_no_cuda(self):
        problems = []
        public = [f for f in source_files() if layer_of(f) == "fdstencil"]
        self.assertGreater(len(public), 5)
        for rel in public:
            for number, line in enumerate(read(rel).splitlines(), start=1):
                match = SYSTEM_INCLUDE.match(line) or QUOTED_INCLUDE.match(line)
                if match and CUDA_SYSTEM_HEADER.match(match.group(1)):
                    problems.append(f"{rel}:{number}: {line.strip()}: a public header must compile without CUDA")
        if problems:
            self.fail("public headers that need CUDA:\n" + "\n".join(problems))


class CheckerTest(unittest.TestCase):
    """The checker itself, on made-up files (the paths need not exist)."""

    def test_backend_reaching_up_is_reported(self):
        problems = check_text("src/cuda/x.cu", '#include <cstdio>\n#include "bench/harness.hpp"\n')
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("src/cuda/x.cu:2:", problems[0])
        self.assertIn('#include "bench/harness.hpp"', problems[0])

    def test_each_rule(self):
        cases = [
            ("include/fdstencil/a.hpp", "fdstencil/b.hpp", True), ("include/fdstencil/a.hpp", "core/v.hpp", False),
            ("src/core/a.cpp", "core/variant.hpp", True), ("src/core/a.cpp", "cpu/x.hpp", False),
            ("src/cpu/a.cpp", "cpu/x.hpp", True), ("src/cpu/a.cpp", "reference/x.hpp", False),
            ("src/reference/a.cpp", "core/variant.hpp", True), ("src/reference/a.cpp", "plan/x.hpp", False),
            ("src/cuda/k/a.cuh", "cuda/common/vec.cuh", True), ("src/cuda/a.cu", "plan/registry.hpp", False),
            ("src/cuda/a.cu", "cpu/x.hpp", False), ("src/cuda/a.cu", "reference/x.hpp", False),
            ("src/plan/a.cpp", "cuda/variants.hpp", True), ("src/plan/a.cpp", "reference/x.hpp", True),
            ("apps/fdstencil/a.cpp", "fdstencil/device.hpp", True), ("apps/fdstencil/a.cpp", "plan/registry.hpp", True),
            ("apps/fdstencil/a.cpp", "cuda/variants.hpp", False), ("apps/fdstencil/a.cpp", "cpu/acoustic.hpp", False),
            ("src/plan/a.cpp", "bench/harness.hpp", False), ("src/plan/a.cpp", "apps/fdstencil/c.hpp", False),
            ("src/bench/a.cpp", "plan/registry.hpp", True), ("src/bench/a.cpp", "apps/fdstencil/c.hpp", False),
            ("src/core/a.cpp", "nowhere.hpp", False), ("src/newlayer/a.cpp", "fdstencil/b.hpp", False),
        ]
        for path, include, ok in cases:
            with self.subTest(path=path, include=include):
                problems = check_text(path, f'  #  include "{include}"  // why\n')
                self.assertEqual(problems == [], ok, problems)

    def test_relative_include_counts_where_it_lands(self):
        # src/cuda/variants.hpp exists, so from src/cuda/common/ "../variants.hpp" is the cuda
        # layer, and from src/core/ "../bench/harness.hpp" reaches the bench layer.
        self.assertEqual(check_text("src/cuda/common/x.cu", '#include "../variants.hpp"\n'), [])
        problems = check_text("src/core/x.cpp", '#include "../bench/harness.hpp"\n')
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("src/core/x.cpp:1:", problems[0])

    def test_system_and_commented_includes_are_not_quoted_includes(self):
        self.assertEqual(check_text("src/core/x.cpp", '#include <bench/harness.hpp>\n// #include "bench/x.hpp"\n'), [])


if __name__ == "__main__":
    unittest.main()
