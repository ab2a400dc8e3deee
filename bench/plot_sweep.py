#!/usr/bin/env python3
"""GPts/s against model size from `wave-sweep` campaign results (bench/run.py), one PNG per call.

Usage: python3 bench/plot_sweep.py FILE.json ... --output PNG [--title TEXT] [--widths 0,10]

Each record of each file is one `fdstencil wave` run: its radius (the record's `radius`, else the
`--radius` in its arguments, else the R= of its kernel's description), its model shape (`--shape` in its `model`
or other list arguments) and its computational extents (`computational`: model + layers). The
layer width is their difference over two. The figure has a panel per dimension (2D, 3D), a line per
radius (colour) and layer width (solid with layers, dashed without), points at the model's points
(x, log scale) and the run's GPts/s over its computational points (y). Records that failed
(`ok` false) are left out; --widths keeps only runs with those layer widths.

Inputs are checked before anything is drawn: a missing or malformed file, a record without a
shape, extents or GPts/s, or no record left to draw exits 2 with a message and writes nothing.
The PNG is written to a temporary name and renamed into place.
"""
import argparse
import json
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import png_out  # noqa: E402

DPI = 130  # as bench/plot_wave.py: legible 7-8 inch figures in docs/ at ~1000 pixels wide


class InputError(Exception):
    pass


def flag_value(record, flag):
    """The value after `flag` in any list field of the record (the sweep's argument lists)."""
    for value in record.values():
        if isinstance(value, list) and flag in value[:-1]:
            return value[value.index(flag) + 1]
    return None


def point_of(record, where):
    try:
        shape = [int(x) for x in flag_value(record, "--shape").split(",")]
        comp = [int(x) for x in record["computational"]]
        gpts = float(record["gpts"])
    except (AttributeError, KeyError, TypeError, ValueError):
        raise InputError(f"{where}: a record needs --shape, computational extents and gpts")
    if len(shape) != len(comp) or len(comp) not in (2, 3) or not math.isfinite(gpts) or gpts <= 0:
        raise InputError(f"{where}: shape {shape}, extents {comp} and GPts/s {gpts} do not fit together")
    radius = record.get("radius", flag_value(record, "--radius"))
    if radius is None:  # the campaign's fixed arguments are not in its records: the kernel says R
        found = re.search(r"\bR=(\d+)", str(record.get("kernel", "")))
        if not found:
            raise InputError(f"{where}: the record names no radius (no radius, --radius or kernel R=)")
        radius = found.group(1)
    return {"dim": len(comp), "radius": int(radius), "width": (comp[-1] - shape[-1]) // 2,
            "points": math.prod(shape), "gpts": gpts}


def read_points(files, widths):
    points = []
    for path in files:
        try:
            with open(path) as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            raise InputError(f"{path}: {e}")
        records = doc.get("records") if isinstance(doc, dict) else None
        if not isinstance(records, list):
            raise InputError(f"{path}: not a wave-sweep result (no records)")
        for i, r in enumerate(records):
            if isinstance(r, dict) and r.get("ok"):
                p = point_of(r, f"{path} record {i}")
                if widths is None or p["width"] in widths:
                    points.append(p)
    if not points:
        raise InputError("no successful run to draw" + (f" with layer widths {sorted(widths)}" if widths else ""))
    return points


def figure(points, title, plt):
    dims = sorted({p["dim"] for p in points})
    fig, axes = plt.subplots(1, len(dims), figsize=(6.2 * len(dims), 4.6), squeeze=False)
    colours = {r: plt.get_cmap("tab10")(i % 10) for i, r in enumerate(sorted({p["radius"] for p in points}))}
    for ax, dim in zip(axes[0], dims):
        mine = [p for p in points if p["dim"] == dim]
        for radius, width in sorted({(p["radius"], p["width"]) for p in mine}):
            line = sorted((p for p in mine if p["radius"] == radius and p["width"] == width), key=lambda p: p["points"])
            ax.plot([p["points"] for p in line], [p["gpts"] for p in line], "o-" if width else "s--",
                    color=colours[radius], label=f"R = {radius}, " + (f"CPML {width}" if width else "no layer"))
        ax.set_xscale("log")
        ax.set_xlabel(f"model points ({dim}D; the layers come on top)")
        ax.set_ylabel("GPts/s over the computational points")
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=7.5)
        ax.set_title(f"{dim}D", fontsize=9)
    if title:
        fig.suptitle(title, fontsize=10)
    return fig


def parse_widths(text):
    try:
        return {int(w) for w in text.split(",")}
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected layer widths like 0,10, got {text!r}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("files", nargs="+", metavar="FILE.json")
    p.add_argument("--output", required=True, help="the PNG to write")
    p.add_argument("--title", default="", help="the figure's title (the card, the campaigns)")
    p.add_argument("--widths", type=parse_widths, help="only runs with these layer widths, e.g. 0,10 (default all)")
    args = p.parse_args(argv)
    try:
        problem = png_out.folder_problem(args.output)
        if problem:
            raise InputError(problem)
        points = read_points(args.files, args.widths)
    except InputError as e:
        print(f"plot_sweep.py: error: {e}", file=sys.stderr)
        return 2
    plt = png_out.pyplot("plot_sweep.py")
    if plt is None:
        return 1
    return png_out.save(figure(points, args.title, plt), args.output, DPI, "plot_sweep.py")


if __name__ == "__main__":
    sys.exit(main())
