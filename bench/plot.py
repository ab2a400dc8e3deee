#!/usr/bin/env python3
"""Turn fdstencil benchmark result files (``fdstencil bench --json``) into PNG figures.

The figures follow the AMD lab-notes Laplacian posts: effective memory bandwidth (or its share
of the copy bandwidth measured in the same run) against the quantity a sweep varies.

The kind of figure is chosen from each file's contents:

  sizes    no parameter varies and there are several grid sizes: effective GB/s against the
           grid size, one line per variant, one subplot per dtype.  All size files given on
           one command line are merged into a single figure (a later file wins on duplicate
           variant/dtype/size); only lines with points at >= 3 sizes are drawn.
           -> <op>_sizes.png
  planes   no parameter varies, nx and nz fixed (nz small), ny takes >= 3 values: effective
           GB/s against the xy-plane size in MB (log2), with the L2/3 mark.
           -> <op>_planes.png
  m        only params.m varies: grouped bars of % of copy per variant and m.
           -> <op>_m.png
  nzc      params.nzc varies: % of copy against nzc (0 = "auto", first), one line per
           size/dtype.  -> <op>_<variant>_nzc.png
  tuning   other parameters vary (ty, stages, ...): bars of % of copy per configuration,
           grouped by size and dtype.  -> <op>_<variant>_tuning.png
  generic  anything else (several ops or radii, a single size, ...): horizontal bars of
           effective GB/s per record.  -> <stem>.png

<op> is "laplacian" for op laplacian7, else the op name.  Only records with status "ok" are
plotted; the others are counted in a note on stderr.  Figures are written to a temporary file in
the output folder and renamed into place, so no partial PNG is ever left behind.

Exit status: 0 on success, 2 for a missing, unreadable or malformed input file (or an unusable
output folder), 1 if nothing could be plotted or a figure could not be written.
"""

import argparse
import json
import math
import os
import re
import sys
import tempfile
from collections import Counter, OrderedDict, defaultdict
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO_ROOT / "docs" / "figures"
DPI = 120
DTYPE_BYTES = {"double": 8, "float64": 8, "fp64": 8, "float": 4, "float32": 4, "fp32": 4,
               "half": 2, "float16": 2, "fp16": 2, "bfloat16": 2, "bf16": 2}
DTYPE_ORDER = ["double", "float64", "fp64", "float", "float32", "fp32",
               "half", "float16", "fp16", "bfloat16", "bf16"]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "<", ">", "*", "h", "p"]
LINESTYLES = ["-", "--", "-.", ":"]


class InputError(Exception):
    """A problem with an input file: reported on stderr, exit status 2."""


# ------------------------------------------------------------------------------------------
# Loading and validation
# ------------------------------------------------------------------------------------------

class Record:
    __slots__ = ("op", "variant", "backend", "dtype", "radius", "nx", "ny", "nz", "params",
                 "gbps", "pct", "raw", "order")

    @property
    def size(self):
        return (self.nx, self.ny, self.nz)

    @property
    def points(self):
        return self.nx * self.ny * self.nz


class Dataset:
    def __init__(self, path):
        self.path = path
        self.stem = Path(path).stem
        self.device = {}
        self.device_name = "unknown device"
        self.copy = None
        self.copy_kernel = None
        self.records = []
        self.skipped = Counter()
        self.total = 0


def _is_number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _is_posint(x):
    return isinstance(x, int) and not isinstance(x, bool) and x > 0


def load(path):
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        raise InputError(f"{path}: no such file")
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory, not a result file")
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror or e}")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: not UTF-8 text (byte {e.start})")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"{path}: not valid JSON: {e.msg} at line {e.lineno} column {e.colno}")
    except RecursionError:
        raise InputError(f"{path}: not valid JSON: nested too deeply")

    def bad(msg):
        return InputError(f"{path}: malformed result file: {msg}")

    if not isinstance(data, dict):
        raise bad(f"top level is a JSON {type(data).__name__}, expected an object")
    ds = Dataset(path)
    dev = data.get("device")
    if isinstance(dev, dict):
        ds.device = dev
        if isinstance(dev.get("name"), str) and dev["name"]:
            ds.device_name = dev["name"]
    elif dev is not None:
        raise bad('"device" is not an object')
    if not _is_number(data.get("copy_gbps")) or data["copy_gbps"] <= 0:
        raise bad('"copy_gbps" is missing or not a positive number')
    ds.copy = float(data["copy_gbps"])
    ck = data.get("copy_kernel_gbps")
    if ck is not None:
        if not _is_number(ck) or ck <= 0:
            raise bad('"copy_kernel_gbps" is not a positive number')
        ds.copy_kernel = float(ck)
    recs = data.get("records")
    if not isinstance(recs, list):
        raise bad('"records" is missing or not a list')
    ds.total = len(recs)
    for i, r in enumerate(recs):
        where = f"record {i}"
        if not isinstance(r, dict):
            raise bad(f"{where} is not an object")
        status = r.get("status")
        if status != "ok":
            ds.skipped[str(status) if status is not None else "no status"] += 1
            continue
        g = r.get("effective_gbps")
        if not _is_number(g) or g < 0:
            ds.skipped["ok but no timing"] += 1
            continue
        rec = Record()
        for key in ("variant", "dtype"):
            if not isinstance(r.get(key), str) or not r[key]:
                raise bad(f'{where}: "{key}" is missing or not a string')
        for key in ("nx", "ny", "nz"):
            if not _is_posint(r.get(key)):
                raise bad(f'{where}: "{key}" is missing or not a positive integer')
        params = r.get("params", {})
        if params is None:
            params = {}
        if not isinstance(params, dict):
            raise bad(f'{where}: "params" is not an object')
        rec.op = str(r.get("op", "?"))
        rec.variant = r["variant"]
        rec.backend = str(r.get("backend", ""))
        rec.dtype = r["dtype"]
        rec.radius = r.get("radius")
        rec.nx, rec.ny, rec.nz = r["nx"], r["ny"], r["nz"]
        rec.params = params
        rec.gbps = float(g)
        p = r.get("pct_of_copy")
        rec.pct = float(p) if _is_number(p) else 100.0 * rec.gbps / ds.copy
        rec.raw = r
        rec.order = i
        ds.records.append(rec)
    if not ds.device_name or ds.device_name == "unknown device":
        names = {r.raw.get("device") for r in ds.records if isinstance(r.raw.get("device"), str)}
        if len(names) == 1:
            ds.device_name = names.pop()
    return ds


def note_skipped(ds):
    if ds.skipped:
        n = sum(ds.skipped.values())
        why = ", ".join(f"{k}: {v}" for k, v in sorted(ds.skipped.items()))
        print(f"note: {ds.path}: skipped {n} of {ds.total} records whose status is not ok ({why})",
              file=sys.stderr)


# ------------------------------------------------------------------------------------------
# Classification
# ------------------------------------------------------------------------------------------

def _pval(v):
    return json.dumps(v, sort_keys=True)


def varying_params(records, by=lambda r: (r.variant, r.dtype, r.size)):
    """Parameter keys that take more than one value within a (variant, dtype, size) group."""
    groups = defaultdict(list)
    for r in records:
        groups[by(r)].append(r)
    out = set()
    for recs in groups.values():
        keys = set().union(*(r.params.keys() for r in recs))
        for k in keys:
            if len({_pval(r.params.get(k)) for r in recs}) > 1:
                out.add(k)
    return out


def classify(ds):
    recs = ds.records
    if not recs:
        return None
    if len({r.op for r in recs}) > 1 or len({_pval(r.radius) for r in recs}) > 1:
        return "generic"
    vary = varying_params(recs)
    if vary:
        if vary == {"m"}:
            return "m"
        if "nzc" in vary:
            return "nzc"
        return "tuning"
    nxs = {r.nx for r in recs}
    nys = {r.ny for r in recs}
    nzs = {r.nz for r in recs}
    if len(nxs) == 1 and len(nzs) == 1 and len(nys) >= 3:
        nz = next(iter(nzs))
        if 4 * nz <= min(min(nys), next(iter(nxs))):
            return "planes"
    if len({r.size for r in recs}) >= 2:
        return "sizes"
    return "generic"


# ------------------------------------------------------------------------------------------
# Helpers shared by the figures
# ------------------------------------------------------------------------------------------

def op_prefix(records):
    ops = sorted({r.op for r in records})
    if len(ops) != 1:
        return "mixed"
    op = ops[0]
    if op.startswith("laplacian"):
        return "laplacian"
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", op) or "op"


def op_title(records):
    ops = list(OrderedDict.fromkeys(r.op for r in records))
    return ", ".join(ops)


def common_variant(records):
    names = sorted({r.variant for r in records})
    pre = os.path.commonprefix(names).rstrip("_-")
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", pre)


def dtype_key(d):
    return (DTYPE_ORDER.index(d) if d in DTYPE_ORDER else len(DTYPE_ORDER), d)


def variant_key(v):
    """Natural order: k2 before k10, k6 before k6_block."""
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", v)]


def size_label(size):
    return "x".join(str(n) for n in size)


def param_str(params, keys=None, sep=" "):
    keys = sorted(params) if keys is None else [k for k in keys if k in params]
    return sep.join(f"{k}={params[k]}" for k in keys)


def title_for(what, datasets):
    """Figure title: what, device name(s), and the copy bandwidth measured in the same run."""
    devs = list(OrderedDict.fromkeys(ds.device_name for ds in datasets))
    if len(datasets) == 1 or len({round(ds.copy) for ds in datasets}) == 1:
        ds = datasets[-1]
        copy = f"copy bandwidth measured in the same run: {ds.copy:.0f} GB/s"
        if ds.copy_kernel:
            copy += f" (16-byte copy kernel {ds.copy_kernel:.0f} GB/s)"
    else:
        parts = ", ".join(f"{ds.copy:.0f} GB/s ({ds.stem})" for ds in datasets)
        copy = f"copy bandwidth measured in the same run: {parts}"
    return f"{what} on {' / '.join(devs)}\n{copy}"


def ref_lines_h(ax, ds, pct=False, xlim=None):
    """Horizontal reference lines for cudaMemcpy and the copy kernel of one run."""
    c = 100.0 if pct else ds.copy
    ax.axhline(c, color="black", ls="--", lw=1.3, label="cudaMemcpy (same run)"
               + (f" = 100% = {ds.copy:.0f} GB/s" if pct else f": {ds.copy:.0f} GB/s"))
    if ds.copy_kernel:
        ck = 100.0 * ds.copy_kernel / ds.copy if pct else ds.copy_kernel
        ax.axhline(ck, color="dimgray", ls=":", lw=1.5, label="16-byte copy kernel"
                   + (f" = {ck:.0f}%" if pct else f": {ck:.0f} GB/s"))


def finish(fig, ax_list):
    for ax in ax_list:
        ax.grid(True, which="major", alpha=0.35)
        ax.set_axisbelow(True)


def save(fig, out_dir, name, written):
    import matplotlib.pyplot as plt
    final = out_dir / name
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=str(out_dir))
    try:
        with os.fdopen(fd, "wb") as f:
            fig.savefig(f, format="png", dpi=DPI)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, final)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    finally:
        plt.close(fig)
    written.append(final)
    print(f"wrote {final}")


def unique_name(name, stem, used):
    if name not in used:
        used.add(name)
        return name
    base, ext = os.path.splitext(name)
    cand = f"{base}-{stem}{ext}"
    n = 2
    while cand in used:
        cand = f"{base}-{stem}-{n}{ext}"
        n += 1
    used.add(cand)
    return cand


def bar_labels(ax, bars, values, fmt="{:.0f}", fontsize=7, rotation=90):
    for b, v in zip(bars, values):
        ax.annotate(fmt.format(v), (b.get_x() + b.get_width() / 2, b.get_height()),
                    xytext=(0, 2), textcoords="offset points", ha="center", va="bottom",
                    fontsize=fontsize, rotation=rotation)


# ------------------------------------------------------------------------------------------
# Figures
# ------------------------------------------------------------------------------------------

def fig_sizes(datasets, min_sizes=3):
    """Merged size sweep. Returns (fig, leftover description) or (None, reason)."""
    import matplotlib.pyplot as plt
    merged = OrderedDict()
    for ds in datasets:
        for r in ds.records:
            key = (r.variant, r.dtype, r.size)
            merged.pop(key, None)
            merged[key] = (r, ds)
    lines = defaultdict(list)
    for (v, d, s), (r, ds) in merged.items():
        lines[(v, d)].append((r, ds))
    kept = {k: pts for k, pts in lines.items() if len(pts) >= min_sizes}
    dropped = sorted({k[0] for k in lines} - {k[0] for k in kept}, key=variant_key)
    if not kept:
        return None, f"no variant was measured at {min_sizes} or more sizes"
    sizes = sorted({r.size for pts in kept.values() for r, _ in pts},
                   key=lambda s: (s[0] * s[1] * s[2], s))
    xpos = {s: i for i, s in enumerate(sizes)}
    dtypes = sorted({d for _, d in kept}, key=dtype_key)
    variants = sorted({v for v, _ in kept}, key=variant_key)
    colors = plt.get_cmap("tab10")
    vstyle = {v: (colors(i % 10), MARKERS[i % len(MARKERS)]) for i, v in enumerate(variants)}

    # The copy reference of each size is the one of the run its records came from.
    copy_at, ck_at = {}, {}
    for pts in kept.values():
        for r, ds in pts:
            copy_at[r.size] = ds.copy
            ck_at[r.size] = ds.copy_kernel
    used_ds = [ds for ds in datasets if any(ds is d for pts in kept.values() for _, d in pts)]

    fig, axes = plt.subplots(len(dtypes), 1, figsize=(11, 3.7 * len(dtypes) + 2.6),
                             sharex=True, squeeze=False)
    axes = axes[:, 0]
    ymax = max(max(copy_at.values()), max(r.gbps for pts in kept.values() for r, _ in pts))
    n = len(sizes)
    xs_edge = [-0.5] + list(range(n)) + [n - 0.5]
    for ax, dt in zip(axes, dtypes):
        for v in variants:
            pts = kept.get((v, dt))
            if not pts:
                continue
            pts = sorted(pts, key=lambda p: xpos[p[0].size])
            plist = [_pval(r.params) for r, _ in pts]
            lab = v
            if len(set(plist)) == 1 and pts[0][0].params:
                lab += f"  ({param_str(pts[0][0].params, sep=', ')})"
            c, m = vstyle[v]
            hollow = variants.index(v) % 2 == 1
            ax.plot([xpos[r.size] for r, _ in pts], [r.gbps for r, _ in pts], marker=m,
                    color=c, lw=1.8, ms=8 if hollow else 6, mew=1.6,
                    mfc="white" if hollow else c, label=lab, zorder=3)
        cvals = [copy_at[s] for s in sizes]
        ax.plot(xs_edge, [cvals[0]] + cvals + [cvals[-1]], drawstyle="steps-mid", color="black",
                ls="--", lw=1.3, label="cudaMemcpy (same run)")
        if all(ck_at[s] for s in sizes):
            kvals = [ck_at[s] for s in sizes]
            ax.plot(xs_edge, [kvals[0]] + kvals + [kvals[-1]], drawstyle="steps-mid",
                    color="dimgray", ls=":", lw=1.5, label="16-byte copy kernel")
        ax.set_ylim(0, ymax * 1.08)
        ax.set_xlim(-0.5, n - 0.5)
        ax.set_ylabel("effective bandwidth (GB/s)")
        ax.set_title(f"{dt}", loc="left", fontsize=11, fontweight="bold")
    handles = OrderedDict()
    for ax in axes:
        for h, l in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(l, h)
    axes[-1].set_xticks(range(n))
    axes[-1].set_xticklabels([f"{size_label(s)}\n{s[0]*s[1]*s[2]/1e6:.0f} M points" for s in sizes],
                             fontsize=8.5, rotation=25, ha="right", rotation_mode="anchor")
    axes[-1].set_xlabel("grid NXxNYxNZ including the boundary, ordered by point count")
    finish(fig, axes)
    fig.suptitle(title_for(f"{op_title([r for pts in kept.values() for r, _ in pts])}: "
                           "effective bandwidth against grid size", used_ds),
                 fontsize=11.5)
    foot = ""
    if dropped:
        foot = f"not drawn (measured at fewer than {min_sizes} sizes): {', '.join(dropped)}"
    if len(used_ds) > 1:
        foot += ("; " if foot else "") + "merged from " + ", ".join(
            Path(ds.path).name for ds in used_ds) + \
            " (later file wins on duplicates; the copy lines step where the run changes)"
    if foot:
        fig.text(0.01, 0.005, foot, fontsize=8, color="dimgray", ha="left", va="bottom")
    legend_h = (0.26 * math.ceil(len(handles) / 3) + 0.1) / fig.get_figheight()
    foot_h = 0.3 / fig.get_figheight() if foot else 0.0
    fig.legend(list(handles.values()), list(handles.keys()), loc="lower center", ncol=3,
               fontsize=9, frameon=False, bbox_to_anchor=(0.5, foot_h))
    fig.tight_layout(rect=(0, foot_h + legend_h, 1, 1))
    return fig, dropped


def fig_planes(ds):
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FixedLocator, NullLocator
    recs = ds.records
    dtypes = sorted({r.dtype for r in recs}, key=dtype_key)
    variants = sorted({r.variant for r in recs}, key=variant_key)
    colors = plt.get_cmap("tab10")
    fig, ax = plt.subplots(figsize=(11, 6.2))
    xs_all = set()
    for di, dt in enumerate(dtypes):
        nbytes = DTYPE_BYTES.get(dt, 8)
        for vi, v in enumerate(variants):
            pts = sorted((r for r in recs if r.variant == v and r.dtype == dt), key=lambda r: r.ny)
            if not pts:
                continue
            xs = [r.nx * r.ny * nbytes / 2**20 for r in pts]
            xs_all.update(xs)
            plist = {_pval(r.params) for r in pts}
            lab = v + (f" {dt}" if len(dtypes) > 1 else "")
            if len(plist) == 1 and pts[0].params:
                lab += f"  ({param_str(pts[0].params, sep=', ')})"
            ax.plot(xs, [r.gbps for r in pts], marker=MARKERS[vi % len(MARKERS)],
                    color=colors(vi % 10), ls=LINESTYLES[di % len(LINESTYLES)], lw=1.8, ms=6,
                    label=lab)
    ax.set_xscale("log", base=2)
    ticks = sorted(xs_all)
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticklabels([f"{t:g}" for t in ticks])
    l2 = ds.device.get("l2_bytes")
    if _is_number(l2) and l2 > 0:
        x3 = l2 / 3 / 2**20
        ax.axvline(x3, color="tab:red", ls="--", lw=1.3,
                   label=f"three planes fill the L2 (L2/3 = {x3:.0f} MB)")
    ref_lines_h(ax, ds)
    ymax = max(ds.copy, max(r.gbps for r in recs))
    ax.set_ylim(0, ymax * 1.1)
    ax.set_ylabel("effective bandwidth (GB/s)")
    sec = ax.secondary_yaxis("right", functions=(lambda g: 100.0 * g / ds.copy,
                                                 lambda p: p * ds.copy / 100.0))
    sec.set_ylabel("% of cudaMemcpy bandwidth (same run)")
    nx = recs[0].nx
    nz = recs[0].nz
    bytes_note = "8 bytes/point" if dtypes == ["double"] else "(bytes/point: " + \
        ", ".join(f"{d} {DTYPE_BYTES.get(d, 8)}" for d in dtypes) + ")"
    ax.set_xlabel(f"xy-plane size (MB, log2 scale) = NX*NY*{bytes_note} / 2^20;"
                  f"  NX = {nx}, NZ = {nz}, NY varies")
    handles, labels = ax.get_legend_handles_labels()
    bottom = 0
    if len(labels) <= 9:
        ax.legend(loc="lower left", fontsize=9, framealpha=0.92)
    else:   # too many lines to sit inside the axes: below it, two columns
        fig.set_figheight(fig.get_figheight() + 0.2 * math.ceil(len(labels) / 2))
        fig.legend(handles, labels, loc="lower center", ncol=2, fontsize=9, frameon=False)
        bottom = (0.21 * math.ceil(len(labels) / 2) + 0.1) / fig.get_figheight()
    finish(fig, [ax])
    ax.set_title(title_for(f"{op_title(recs)}: xy-plane sweep across the L2 cliff", [ds]),
                 fontsize=11.5)
    fig.tight_layout(rect=(0, bottom, 1, 1))
    return fig


def fig_m(ds):
    import matplotlib.pyplot as plt
    recs = ds.records
    dtypes = sorted({r.dtype for r in recs}, key=dtype_key)
    sizes = sorted({r.size for r in recs}, key=lambda s: (s[0] * s[1] * s[2], s))
    groups = [(v, s) for v in sorted({r.variant for r in recs}, key=variant_key) for s in sizes
              if any(r.variant == v and r.size == s for r in recs)]
    ms = sorted({r.params.get("m") for r in recs}, key=lambda m: (not _is_number(m), m if _is_number(m) else str(m)))
    cmap = plt.get_cmap("viridis")
    mcolor = {m: cmap(0.1 + 0.75 * i / max(1, len(ms) - 1)) for i, m in enumerate(ms)}
    fig, axes = plt.subplots(len(dtypes), 1,
                             figsize=(max(11, 0.16 * len(groups) * len(ms) + 2), 3.4 * len(dtypes) + 1.8),
                             sharey=True, squeeze=False)
    axes = axes[:, 0]
    width = 0.8 / len(ms)
    for ax, dt in zip(axes, dtypes):
        for mi, m in enumerate(ms):
            xs, ys = [], []
            for gi, (v, s) in enumerate(groups):
                hit = [r for r in recs if r.dtype == dt and r.variant == v and r.size == s
                       and r.params.get("m") == m]
                if hit:
                    xs.append(gi - 0.4 + width * (mi + 0.5))
                    ys.append(hit[-1].pct)
            bars = ax.bar(xs, ys, width=width * 0.92, color=mcolor[m], label=f"m = {m}")
            bar_labels(ax, bars, ys)
        ref_lines_h(ax, ds, pct=True)
        ax.set_xticks(range(len(groups)))
        ax.set_xticklabels([v if len(sizes) == 1 else f"{v}\n{size_label(s)}" for v, s in groups])
        ax.set_ylim(0, 112)
        ax.set_title(dt, loc="left", fontsize=11, fontweight="bold")
    for ax in axes:
        ax.set_ylabel("% of cudaMemcpy (same run)")
    axes[-1].set_xlabel("variant" + (f"  (grid {size_label(sizes[0])})" if len(sizes) == 1 else ""))
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 7), fontsize=9,
               bbox_to_anchor=(0.5, 0.0), frameon=False)
    finish(fig, axes)
    fig.suptitle(title_for(f"{op_title(recs)}: tiling factor m", [ds]), fontsize=11.5)
    fig.tight_layout(rect=(0, 0.05 * math.ceil(len(labels) / 7), 1, 1))
    return fig


def fig_nzc(ds):
    import matplotlib.pyplot as plt
    recs = ds.records
    other = sorted(varying_params(recs, by=lambda r: (r.variant, r.dtype, r.size)) - {"nzc"})
    many_variants = len({r.variant for r in recs}) > 1
    vals = sorted({r.params.get("nzc") for r in recs},
                  key=lambda n: (n != 0, n if _is_number(n) else math.inf, str(n)))
    xpos = {n: i for i, n in enumerate(vals)}
    lines = OrderedDict()
    for r in sorted(recs, key=lambda r: (r.points, r.size, dtype_key(r.dtype),
                                         variant_key(r.variant))):
        key = (r.variant, r.size, r.dtype, tuple(_pval(r.params.get(k)) for k in other))
        lines.setdefault(key, []).append(r)
    sizes = list(OrderedDict.fromkeys(k[1] for k in lines))
    dtypes = sorted({k[2] for k in lines}, key=dtype_key)
    colors = plt.get_cmap("tab10")
    fig, ax = plt.subplots(figsize=(11, 6))
    ymin = 100.0
    for li, (key, pts) in enumerate(lines.items()):
        v, s, dt, _ = key
        pts = sorted(pts, key=lambda r: xpos[r.params.get("nzc")])
        si = sizes.index(s)
        di = dtypes.index(dt)
        lab = f"{size_label(s)} {dt}"
        if many_variants:
            lab = f"{v} " + lab
        if other:
            lab += " " + param_str(pts[0].params, other)
        color = colors((si * max(1, len(dtypes)) + di) % 10) if len(lines) > 4 else colors(li % 10)
        autos = [r.raw.get("nzc_used") for r in pts if r.params.get("nzc") == 0]
        if autos and _is_posint(autos[-1]):
            lab += f"  (auto chose nzc = {autos[-1]})"
        xs = [xpos[r.params.get("nzc")] for r in pts]
        ys = [r.pct for r in pts]
        ymin = min(ymin, min(ys))
        ax.plot(xs, ys, marker=MARKERS[di % len(MARKERS)], ls=LINESTYLES[di % len(LINESTYLES)],
                color=color, lw=1.8, ms=7, label=lab)
    ref_lines_h(ax, ds, pct=True)
    ax.set_xticks(range(len(vals)))
    ax.set_xticklabels(["auto (0)" if n == 0 else str(n) for n in vals])
    ax.set_xlim(-0.4, len(vals) - 0.6)
    ax.set_ylim(max(0, math.floor((ymin - 8) / 10) * 10), 105)
    ax.set_xlabel("nzc: z-planes per block (auto = chosen by the library, see legend)")
    ax.set_ylabel("effective bandwidth, % of cudaMemcpy (same run)")
    fixed = {k: v for k, v in recs[0].params.items() if k != "nzc" and k not in other}
    what = f"{op_title(recs)} {common_variant(recs) or ''}: planes per block (nzc)".replace(" :", ":")
    if fixed:
        what += f", {param_str(fixed, sep=', ')}"
    ax.legend(loc="lower left", fontsize=9, framealpha=0.92)
    finish(fig, [ax])
    ax.set_title(title_for(what, [ds]), fontsize=11.5)
    fig.tight_layout()
    return fig


def fig_tuning(ds):
    import matplotlib.pyplot as plt
    recs = ds.records
    vary = sorted(varying_params(recs, by=lambda r: (r.dtype, r.size)))
    # Order the parameters: the one with fewer values first gives the hue.
    vary.sort(key=lambda k: (len({_pval(r.params.get(k)) for r in recs}), k))
    variants = sorted({r.variant for r in recs}, key=variant_key)

    def cfg_key(r):
        return (variant_key(r.variant),
                tuple((0, r.params[k]) if _is_number(r.params.get(k)) else (1, str(r.params.get(k)))
                      for k in vary))

    configs = OrderedDict()
    for r in sorted(recs, key=cfg_key):
        present = [k for k in vary if k in r.params]
        configs.setdefault((r.variant, tuple(_pval(r.params.get(k)) for k in present)),
                           (r.variant, present, r.params))
    groups = sorted({(r.size, r.dtype) for r in recs},
                    key=lambda g: (g[0][0] * g[0][1] * g[0][2], g[0], dtype_key(g[1])))

    # Colour: hue per (variant, first parameter) when a variant has two or more parameters,
    # else per variant; shade per remaining configuration (tab20c: 5 hues x 4 shades).
    tab = plt.get_cmap("tab20c")
    hue_of, shade_of, hues = {}, {}, []
    for ck, (v, present, params) in configs.items():
        hk = (v, _pval(params.get(present[0]))) if len(present) >= 2 else (v,)
        if hk not in hues:
            hues.append(hk)
        shade_of[ck] = sum(1 for c in shade_of if hue_of[c] == hk)
        hue_of[ck] = hk
    hatch = {v: ("" if i == 0 else ["//", "..", "xx", "\\\\"][(i - 1) % 4]) for i, v in enumerate(variants)}
    nconf = len(configs)
    width = 0.86 / nconf
    fig, ax = plt.subplots(figsize=(max(11, 0.2 * nconf * len(groups) + 1.5), 7.4))
    for ci, (ck, (v, present, params)) in enumerate(configs.items()):
        xs, ys = [], []
        for gi, (s, dt) in enumerate(groups):
            hit = [r for r in recs if r.size == s and r.dtype == dt and r.variant == v
                   and tuple(_pval(r.params.get(k)) for k in present) == ck[1]]
            if hit:
                xs.append(gi - 0.43 + width * (ci + 0.5))
                ys.append(hit[-1].pct)
        color = tab((hues.index(hue_of[ck]) % 5) * 4 + min(shade_of[ck], 3))
        lab = f"{v}  " + param_str(params, present)
        bars = ax.bar(xs, ys, width=width * 0.95, color=color, hatch=hatch[v],
                      edgecolor="white" if not hatch[v] else "dimgray", linewidth=0.4, label=lab)
        bar_labels(ax, bars, ys, fontsize=6.5)
    ref_lines_h(ax, ds, pct=True)
    ax.set_xticks(range(len(groups)))
    # Past 8 groups the labels ("1024x1024x768  double") no longer fit side by side: slant them.
    slant = len(groups) > 8
    ax.set_xticklabels([f"{size_label(s)}  {dt}" for s, dt in groups], rotation=35 if slant else 0,
                       ha="right" if slant else "center", fontsize=8 if slant else None)
    ax.set_xlim(-0.5, len(groups) - 0.5)
    ax.set_ylim(0, 112)
    ax.set_xlabel("grid and dtype")
    ax.set_ylabel("effective bandwidth, % of cudaMemcpy (same run)")
    fixed = {}
    for k in set().union(*(r.params for r in recs)) - set(vary):
        vals = {_pval(r.params.get(k)) for r in recs if k in r.params}
        if len(vals) == 1:
            fixed[k] = next(r.params[k] for r in recs if k in r.params)
    what = f"{op_title(recs)} {common_variant(recs)} tuning: {' x '.join(vary)}"
    if fixed:
        what += f" ({param_str(fixed, sep=', ')})"
    handles, labels = ax.get_legend_handles_labels()
    sizes_per_hue = Counter(hue_of.values())
    if len(set(sizes_per_hue.values())) == 1 and next(iter(sizes_per_hue.values())) >= 2:
        ncol = len(hues) + 1     # one column per hue, the references in the last one
    else:
        ncol = 4
    # Configurations first (column-major reads as one column per hue), references last.
    order = list(range(2, len(labels))) + [0, 1]
    fig.legend([handles[i] for i in order], [labels[i] for i in order], loc="lower center",
               ncol=ncol, fontsize=8.5, frameon=False, bbox_to_anchor=(0.5, 0.0))
    finish(fig, [ax])
    ax.set_title(title_for(what, [ds]), fontsize=11.5)
    fig.tight_layout(rect=(0, (0.24 * math.ceil(len(labels) / ncol) + 0.1) / fig.get_figheight(),
                           1, 1))
    return fig


def fig_generic(ds):
    import matplotlib.pyplot as plt
    recs = ds.records
    ops = list(OrderedDict.fromkeys(r.op for r in recs))   # file order
    dtypes = sorted({r.dtype for r in recs}, key=dtype_key)
    vary = sorted(varying_params(recs, by=lambda r: (r.op, r.variant, r.dtype, r.size,
                                                     _pval(r.radius))))
    multi_backend = len({r.backend for r in recs}) > 1

    def label(r):
        parts = [r.variant, r.dtype]
        if r.radius is not None:
            parts.append(f"R{r.radius}")
        parts.append(size_label(r.size))
        if multi_backend:
            parts.append(r.backend)
        if vary:
            p = param_str(r.params, vary)
            if p:
                parts.append(p)
        s = " / ".join(parts)
        return f"{r.op}: {s}" if len(ops) > 1 else s

    recs = sorted(recs, key=lambda r: (ops.index(r.op),
                                       r.radius if _is_number(r.radius) else math.inf, r.order))
    colors = plt.get_cmap("tab10")
    if len(ops) > 1:
        ckey, cvals = (lambda r: r.op), ops
    else:
        ckey, cvals = (lambda r: r.dtype), dtypes
    n = len(recs)
    fig, ax = plt.subplots(figsize=(11, max(4.5, 0.26 * n + 2.6)))
    ys = list(range(n))[::-1]
    bars = ax.barh(ys, [r.gbps for r in recs], height=0.75,
                   color=[colors(cvals.index(ckey(r)) % 10) for r in recs])
    for b, r in zip(bars, recs):
        ax.annotate(f"{r.gbps:.0f} ({r.pct:.0f}%)", (b.get_width(), b.get_y() + b.get_height() / 2),
                    xytext=(3, 0), textcoords="offset points", va="center", fontsize=7.5)
    ax.axvline(ds.copy, color="black", ls="--", lw=1.3,
               label=f"cudaMemcpy (same run): {ds.copy:.0f} GB/s")
    if ds.copy_kernel:
        ax.axvline(ds.copy_kernel, color="dimgray", ls=":", lw=1.5,
                   label=f"16-byte copy kernel: {ds.copy_kernel:.0f} GB/s")
    ax.set_yticks(ys)
    ax.set_yticklabels([label(r) for r in recs], fontsize=8 if n > 30 else 9)
    ax.set_ylim(-0.7, n - 0.3)
    ax.set_xlim(0, max(ds.copy, max(r.gbps for r in recs)) * 1.15)
    ax.set_xlabel("effective bandwidth (GB/s); in brackets: % of cudaMemcpy (same run)")
    from matplotlib.patches import Patch
    handles, _ = ax.get_legend_handles_labels()
    handles = [Patch(color=colors(i % 10), label=c) for i, c in enumerate(cvals)] + handles
    ncol = len(handles) if len(handles) <= 7 else 4
    fig.legend(handles=handles, loc="lower center", ncol=ncol, fontsize=8.5, frameon=False,
               bbox_to_anchor=(0.5, 0.0))
    ax.grid(True, axis="x", alpha=0.35)
    ax.set_axisbelow(True)
    what = ", ".join(ops) + ": effective bandwidth per record"
    ax.set_title(title_for(what, [ds]), fontsize=11.5)
    fig.tight_layout(rect=(0, (0.24 * math.ceil(len(handles) / ncol) + 0.1) / fig.get_figheight(),
                           1, 1))
    return fig


# ------------------------------------------------------------------------------------------
# Driver
# ------------------------------------------------------------------------------------------

def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="plot.py",
        description="Plot fdstencil benchmark result files (JSON from `fdstencil bench --json`) "
                    "as PNG figures in the style of the AMD lab-notes Laplacian posts. The figure "
                    "kind is picked from each file's contents: size sweep, xy-plane sweep, tiling "
                    "factor m, nzc sweep, parameter tuning, or a generic bar chart. Size-sweep "
                    "files given together are merged into one figure (later files win on "
                    "duplicates).",
        epilog="Example: python3 bench/plot.py bench/results/nvidia-h200/lap-sizes.json "
               "bench/results/nvidia-h200/lap-quick.json bench/results/nvidia-h200/lap-m.json")
    ap.add_argument("files", nargs="+", metavar="FILE.json", help="benchmark result file(s)")
    ap.add_argument("--out", metavar="DIR", default=None,
                    help=f"output folder for the PNGs (default: docs/figures of the repository, "
                         f"{DEFAULT_OUT})")
    args = ap.parse_args(argv)

    try:
        datasets = [load(p) for p in args.files]
    except InputError as e:
        print(f"plot.py: error: {e}", file=sys.stderr)
        return 2

    out_dir = Path(args.out) if args.out else DEFAULT_OUT
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        print(f"plot.py: error: cannot create output folder {out_dir}: {e.strerror or e}",
              file=sys.stderr)
        return 2
    if not os.access(out_dir, os.W_OK):
        print(f"plot.py: error: output folder {out_dir} is not writable", file=sys.stderr)
        return 2

    import matplotlib
    matplotlib.use("Agg")

    for ds in datasets:
        note_skipped(ds)

    kinds = []
    for ds in datasets:
        k = classify(ds)
        if k is None:
            print(f"note: {ds.path}: no records with status ok, nothing to plot", file=sys.stderr)
        kinds.append(k)

    jobs = []  # (name, stem for collisions, builder)
    size_sets = [ds for ds, k in zip(datasets, kinds) if k == "sizes"]
    # Merge size files per device and op; one figure each.
    by_dev = OrderedDict()
    for ds in size_sets:
        by_dev.setdefault((ds.device_name, op_prefix(ds.records)), []).append(ds)
    for (dev, op), group in by_dev.items():
        suffix = "" if len(by_dev) == 1 or len({d for d, _ in by_dev}) == 1 else \
            "-" + re.sub(r"[^A-Za-z0-9]+", "_", dev).strip("_").lower()
        jobs.append((f"{op}_sizes{suffix}.png", group[-1].stem, ("sizes", group)))

    for ds, k in zip(datasets, kinds):
        if k in (None, "sizes"):
            continue
        op = op_prefix(ds.records)
        cv = common_variant(ds.records)
        name = {"planes": f"{op}_planes.png",
                "m": f"{op}_m.png",
                "nzc": f"{op}_{cv}_nzc.png" if cv else f"{op}_nzc.png",
                "tuning": f"{op}_{cv}_tuning.png" if cv else f"{op}_tuning.png",
                "generic": f"{ds.stem}.png"}[k]
        jobs.append((name, ds.stem, (k, ds)))

    used, written, failed = set(), [], 0
    import matplotlib.pyplot as plt
    plt.rcParams.update({"font.size": 10, "axes.titlesize": 11, "legend.fontsize": 9})
    builders = {"planes": fig_planes, "m": fig_m, "nzc": fig_nzc, "tuning": fig_tuning,
                "generic": fig_generic}
    queue = list(jobs)
    while queue:
        name, stem, (kind, payload) = queue.pop(0)
        try:
            if kind == "sizes":
                fig, info = fig_sizes(payload)
                if fig is None:
                    files = ", ".join(ds.path for ds in payload)
                    print(f"note: {files}: {info}; drawing a generic figure per file instead",
                          file=sys.stderr)
                    for ds in payload:
                        queue.append((f"{ds.stem}.png", ds.stem, ("generic", ds)))
                    continue
                if info:
                    print(f"note: {name}: left out variants measured at fewer than 3 sizes: "
                          f"{', '.join(info)}", file=sys.stderr)
            else:
                fig = builders[kind](payload)
            save(fig, out_dir, unique_name(name, stem, used), written)
        except OSError as e:
            print(f"plot.py: error: cannot write {out_dir / name}: {e.strerror or e}",
                  file=sys.stderr)
            failed += 1
    if failed:
        return 1
    if not written:
        print("plot.py: error: nothing to plot", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
