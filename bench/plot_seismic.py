#!/usr/bin/env python3
"""The seismic posts' figures from fdstencil result files (JSON from `fdstencil bench --json`):

  radius  FILE.json   % of copy against R, one panel per operator, a line per variant
  nw      FILE.json   % of copy against nw (planes per block), one panel per R, a line per variant
  passes  FILE.json   end-to-end ms of one pass (best one-pass variant) against 2 and 3 passes, per R

Every figure names the device and the same-run cudaMemcpy bandwidth it is a share of.
Example: python3 bench/plot_seismic.py radius bench/results/nvidia-h100/seis-r512.json
Bad input (unreadable file, no records of the kind) exits 2 and writes nothing.
"""
import argparse
import json
import os
import sys

OPS = ["d2x", "d2y", "d2z", "d2xy", "d2xyz"]
MULTIPASS = ("3pass", "2pass")


def fail(message):
    print(f"plot_seismic.py: {message}", file=sys.stderr)
    sys.exit(2)


def load(path):
    try:
        with open(path) as f:
            doc = json.load(f)
        return doc, [r for r in doc["records"] if r.get("status") == "ok"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        fail(f"cannot read {path}: {e}")


def caption(doc, records):
    sizes = sorted({f'{r["nx"]}x{r["ny"]}x{r["nz"]}' for r in records})
    dtypes = sorted({r["dtype"] for r in records})
    return (f'{doc["device"]["name"]}, {", ".join(sizes)} {"/".join(dtypes)}; '
            f'100 % = cudaMemcpy {doc["copy_gbps"]:.0f} GB/s in the same run; medians')


def fig_radius(doc, records, plt):
    ops = [op for op in OPS if any(r["op"] == op for r in records)]
    if not ops:
        return None
    fig, axes = plt.subplots(1, len(ops), figsize=(3.2 * len(ops), 3.6), sharey=True, squeeze=False)
    for ax, op in zip(axes[0], ops):
        mine = [r for r in records if r["op"] == op]
        for v in dict.fromkeys(r["variant"] for r in mine):
            pts = sorted((r["radius"], r["pct_of_copy"]) for r in mine if r["variant"] == v)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3,
                    ls="--" if v in MULTIPASS else "-", label=v)
        ax.set_title(op)
        ax.set_xlabel("radius R")
        ax.set_xticks(range(1, 9))
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    axes[0][0].set_ylabel("effective bandwidth, % of copy")
    fig.suptitle(caption(doc, records), fontsize=8)
    return fig


def fig_nw(doc, records, plt):
    records = [r for r in records if "nw" in r["params"]]
    radii = sorted({r["radius"] for r in records})
    if not radii:
        return None
    fig, axes = plt.subplots(1, len(radii), figsize=(4 * len(radii), 3.6), sharey=True, squeeze=False)
    for ax, radius in zip(axes[0], radii):
        mine = [r for r in records if r["radius"] == radius]
        for key in dict.fromkeys((r["op"], r["variant"]) for r in mine):
            pts = sorted((r["params"]["nw"], r["pct_of_copy"]) for r in mine if (r["op"], r["variant"]) == key)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3, label=f"{key[0]} {key[1]}")
        ax.set_xscale("log", base=2)
        ax.set_title(f"R = {radius}")
        ax.set_xlabel("nw (planes per block)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    axes[0][0].set_ylabel("effective bandwidth, % of copy")
    fig.suptitle(caption(doc, records), fontsize=8)
    return fig


def fig_passes(doc, records, plt):
    records = [r for r in records if r["op"] == "d2xyz" and r["variant"] != "baseline"]
    radii = sorted({r["radius"] for r in records})
    series = {}
    for radius in radii:
        mine = [r for r in records if r["radius"] == radius]
        one = [r["median_ms"] for r in mine if r["variant"] not in MULTIPASS]
        if one:
            series.setdefault("one pass (best)", {})[radius] = min(one)
        for v in MULTIPASS:
            for r in mine:
                if r["variant"] == v:
                    series.setdefault(v, {})[radius] = r["median_ms"]
    if len(series) < 2:
        return None
    fig, ax = plt.subplots(figsize=(6, 3.8))
    width = 0.8 / len(series)
    for n, (name, by_r) in enumerate(series.items()):
        xs = [radius + (n - (len(series) - 1) / 2) * width for radius in radii if radius in by_r]
        ax.bar(xs, [by_r[radius] for radius in radii if radius in by_r], width, label=name)
    ax.set_xlabel("radius R")
    ax.set_ylabel("end-to-end time per application, ms")
    ax.set_xticks(radii)
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    fig.suptitle(caption(doc, records), fontsize=8)
    return fig


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("kind", choices=["radius", "nw", "passes"])
    p.add_argument("file")
    p.add_argument("--out", help="the PNG to write (default: docs/figures/seismic_<kind>_<file stem>.png)")
    args = p.parse_args(argv)
    doc, records = load(args.file)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = {"radius": fig_radius, "nw": fig_nw, "passes": fig_passes}[args.kind](doc, records, plt)
    if fig is None:
        fail(f"{args.file} holds no records for a '{args.kind}' figure")
    out = args.out or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "figures",
                                   f"seismic_{args.kind}_{os.path.splitext(os.path.basename(args.file))[0]}.png")
    fig.tight_layout()
    tmp = out + ".tmp.png"
    fig.savefig(tmp, dpi=130)
    os.replace(tmp, out)  # nothing half-written under the final name
    print(os.path.relpath(out))


if __name__ == "__main__":
    main()
