#!/usr/bin/env python3
"""A markdown table of `fdstencil wave` runs, from their summary.json files (docs/wave.md):

  python3 bench/report_wave.py RUN/summary.json [RUN2 ...] [--json]

Each argument is a summary.json, a run's output folder (its summary.json is read) or a glob of
either ("results/*/summary.json"; quoted, so the script expands it). One row per run: the
computational extents (model plus absorbing layers, the points the time loop updates), R, the
CPML width, the steps, the time loop's GPts/s (points x steps / loop time), the copy bandwidth
measured in the same run, the bound it gives (copy GB/s / the step's DRAM bytes per point), the
share of that bound, the state's bytes per grid point and the backend with its kernel. Rows are
sorted by R, then by the number of computational points. --json prints the rows as a JSON list.

A file that is missing, not JSON or not a wave summary exits 2 naming it; nothing is printed.
"""
import argparse
import glob
import json
import math
import os
import sys

FORMAT = "fdstencil-wave-summary-1"


class InputError(Exception):
    """A bad input file: the message names it; exit status 2."""


def expand(args):
    """Paths from arguments: files, run folders, globs of either; in the order given."""
    paths = []
    for a in args:
        hits = sorted(glob.glob(a)) if glob.has_magic(a) else [a]
        if not hits:
            raise InputError(f"{a}: no file matches")
        for p in hits:
            paths.append(os.path.join(p, "summary.json") if os.path.isdir(p) else p)
    return paths


def _number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def read_json(path, what=None):
    """One JSON file, or InputError saying why not; `what` names the file's role in the message."""
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        raise InputError(f"{path}: no such file" + (f" ({what})" if what else ""))
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"{path}: cannot read: {e}")
    except json.JSONDecodeError as e:
        raise InputError(f"{path}: not valid JSON: {e.msg} at line {e.lineno}")


def load_summary(path):
    """One run's row: a dict with the table's fields, from a summary.json. Raises InputError."""
    doc = read_json(path)
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        got = doc.get("format") if isinstance(doc, dict) else type(doc).__name__
        raise InputError(f"{path}: not an fdstencil wave summary (format {got!r}, expected {FORMAT!r})")
    try:
        domain, timing = doc["domain"], doc["timing"]
        extents = [int(n) for n in domain["computational"]]
        if len(extents) not in (2, 3) or min(extents) < 1:
            raise ValueError(f"computational extents {extents}")
        # The CPML's width is that of the x faces: the top z face is 0 under a free surface.
        absorbing = domain.get("absorbing", {})
        cpml = absorbing.get("x", {}).get("lo")
        row = {"path": path, "size": "x".join(str(n) for n in extents), "extents": extents,
               "points": math.prod(extents), "radius": int(doc["radius"]), "cpml": cpml,
               "free_surface": absorbing.get("z", {}).get("lo") == 0 and bool(cpml),
               "steps": int(doc["steps"]), "gpts": float(timing["gpts"]),
               "copy_gbps": float(timing.get("copy_gbps") or 0.0),
               "bound_gpts": float(timing.get("bound_gpts") or 0.0),
               "percent_of_bound": float(timing.get("percent_of_bound") or 0.0),
               "bytes_per_point": float(timing.get("bytes_per_point") or 0.0),
               "bytes_per_grid_point": float(doc.get("bytes_per_grid_point") or 0.0),
               "backend": str(doc["backend"]), "kernel": str(doc.get("kernel", "")),
               "loop_s": float(timing.get("loop_s") or 0.0)}
    except (KeyError, TypeError, ValueError) as e:
        raise InputError(f"{path}: malformed wave summary: {e!r}")
    if not _number(row["gpts"]) or row["gpts"] <= 0:
        raise InputError(f"{path}: timing.gpts is {row['gpts']}, not a positive rate")
    return row


def load_rows(args):
    rows = [load_summary(p) for p in expand(args)]
    rows.sort(key=lambda r: (r["radius"], r["points"], r["extents"]))
    return rows


def table(rows):
    """The markdown table's lines (a caption, the header, one line per row)."""
    out = ["*fdstencil wave: GPts/s = computational points x steps / time loop; the bound is the copy bandwidth "
           "measured in the same run over the step's DRAM bytes per point (no copy figure on the cpu backend); "
           "bytes per grid point = the state's memory over the computational points.*", "",
           "| size | R | CPML | steps | GPts/s | copy GB/s | bound GPts/s | % of bound | bytes / point | backend |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        cpml = "?" if r["cpml"] is None else f'{r["cpml"]}{" + free surface" if r["free_surface"] else ""}'
        copy = f'{r["copy_gbps"]:.0f}' if r["copy_gbps"] > 0 else "-"
        bound = f'{r["bound_gpts"]:.1f}' if r["bound_gpts"] > 0 else "-"
        pct = f'{r["percent_of_bound"]:.1f}' if r["bound_gpts"] > 0 else "-"
        backend = f'{r["backend"]} ({r["kernel"]})' if r["kernel"] else r["backend"]
        out.append(f'| {r["size"]} | {r["radius"]} | {cpml} | {r["steps"]} | {r["gpts"]:.3g} | {copy} | {bound} | '
                   f'{pct} | {r["bytes_per_grid_point"]:.1f} | {backend} |')
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("files", nargs="+", help="summary.json files, run folders or globs")
    p.add_argument("--json", action="store_true", help="print the rows as JSON instead of a table")
    args = p.parse_args(argv)
    try:
        rows = load_rows(args.files)
    except InputError as e:
        print(f"report_wave.py: error: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        print("\n".join(table(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
