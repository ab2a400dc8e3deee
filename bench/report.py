#!/usr/bin/env python3
"""Markdown tables from fdstencil result files, for docs/: every figure in the docs comes from a
committed run through this script, never typed by hand.

  python3 bench/report.py variants FILE.json [--variant k5]   per-variant rows (ms, GB/s, % copy, resources)
  python3 bench/report.py pivot FILE.json [FILE.json ...] --rows size --cols variant [--dtype double]
  python3 bench/report.py param FILE.json --param m           one column per value of a parameter
  python3 bench/report.py best FILE.json [...] --op d2z         the best record per R, with its parameters
  python3 bench/report.py passes FILE.json [...]                one-pass d2xyz against 2 and 3 passes, per R
  python3 bench/report.py counters FILE.json [...] [--best]    bench --profile's hardware counters per record
  python3 bench/report.py samesize FILE.json [...]              records against the reference copy and a copy
                                                               of their own output's bytes (bench --same-size-copy)
  python3 bench/report.py defaults [--check]                    docs/defaults.md: the plan's built-in rows and the
                                                               records that chose them (bench/defaults_table.py)
Filters: --op and --radius (comma-separated) on pivot, param, best, counters and samesize;
--variant and --dtype on counters too.
"""
import argparse
import json
import sys


def load(paths):
    records, copies, devices = [], [], set()
    for path in paths:
        try:
            with open(path) as f:
                doc = json.load(f)
        except (OSError, json.JSONDecodeError) as e:
            sys.exit(f"report.py: cannot read {path}: {e}")
        # A file merged from several runs (the retired bench/device_run.sh's merge_json) lists each run's copy.
        copies.extend(doc.get("copy_gbps_runs", [doc["copy_gbps"]]))
        devices.add(doc["device"]["name"])
        for r in doc["records"]:
            r["_copy"] = doc["copy_gbps"]
            records.append(r)
    return records, copies, devices


def size(r):
    return f'{r["nx"]}x{r["ny"]}x{r["nz"]}'


def caption(copies, devices):
    lo, hi = min(copies), max(copies)
    span = f"{lo:.0f}" if abs(hi - lo) < 1 else f"{lo:.0f}-{hi:.0f}"
    return (f"{', '.join(sorted(devices))}; cudaMemcpy device-to-device measured in the same run: "
            f"{span} GB/s (bytes read + written); medians of the timed runs.")


def cmd_variants(args):
    records, copies, devices = load(args.files)
    print(f"*{caption(copies, devices)}*\n")
    print("| variant | type | R | size | params | median ms | GB/s | % of copy | regs | local B | smem B | occupancy |")
    print("|---|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in records:
        if args.variant and r["variant"] not in args.variant.split(","):
            continue
        if r.get("status") != "ok":
            print(f'| {r["variant"]} | {r["dtype"]} | {r["radius"]} | {size(r)} | | {r.get("status")}: {r.get("reason", "")} |||||||')
            continue
        params = ", ".join(f"{k}={v}" for k, v in r["params"].items())
        extra = ", ".join(f"{k}={r[k]}" for k in ("subdomains", "nzc_used") if k in r)
        if extra:
            params = f"{params} ({extra})" if params else extra
        print(f'| {r["variant"]} | {r["dtype"]} | {r["radius"]} | {size(r)} | {params} | {r["median_ms"]:.4f} | '
              f'{r["effective_gbps"]:.0f} | {r["pct_of_copy"]:.1f} | {r.get("regs", "")} | {r.get("spill_bytes", "")} | '
              f'{r.get("smem_bytes", "")} | {r.get("occupancy", 0):.2f} |')


def key_of(r, name):
    if name == "size":
        return size(r)
    if name == "plane_mb":
        return f'{r["nx"] * r["ny"] * (8 if r["dtype"] == "double" else 4) / 2**20:g} MB ({r["nx"]}x{r["ny"]})'
    if name == "variant+dtype":
        return f'{r["variant"]} {r["dtype"]}'
    return str(r[name])


def keep_fastest(cells, key, r):
    """Several records per cell (a parameter sweep): the cell shows the fastest, never the last."""
    if key not in cells or r["pct_of_copy"] > cells[key]["pct_of_copy"]:
        cells[key] = r


def keep(r, args):
    """The op / radius filters of the subcommands that take them."""
    if getattr(args, "op", None) and r["op"] not in args.op.split(","):
        return False
    if getattr(args, "radius", None) and str(r["radius"]) not in args.radius.split(","):
        return False
    return True


def cmd_pivot(args):
    records, copies, devices = load(args.files)
    cells, rows, cols = {}, [], []
    for r in records:
        if r.get("status") != "ok" or (args.dtype and r["dtype"] != args.dtype) or not keep(r, args):
            continue
        if args.variant and r["variant"] not in args.variant.split(","):
            continue
        row, col = key_of(r, args.rows), key_of(r, args.cols)
        if row not in rows:
            rows.append(row)
        if col not in cols:
            cols.append(col)
        keep_fastest(cells, (row, col), r)
    if args.rows in ("size", "plane_mb"):  # smallest first
        points = {}
        for r in records:
            points[key_of(r, args.rows)] = r["nx"] * r["ny"] * r["nz"] if args.rows == "size" else r["nx"] * r["ny"]
        rows.sort(key=lambda k: points[k])
    print(f"*{caption(copies, devices)} Cells: effective GB/s (% of copy); the fastest record where a "
          f"cell has several (parameter values).*\n")
    print(f"| {args.rows} | " + " | ".join(cols) + " |")
    print("|---|" + "---:|" * len(cols))
    for row in rows:
        out = []
        for col in cols:
            r = cells.get((row, col))
            out.append(f'{r["effective_gbps"]:.0f} ({r["pct_of_copy"]:.1f})' if r else "")
        print(f"| {row} | " + " | ".join(out) + " |")


def cmd_param(args):
    records, copies, devices = load(args.files)
    cells, rows, values = {}, [], []
    for r in records:
        if r.get("status") != "ok" or args.param not in r["params"] or not keep(r, args):
            continue
        others = ", ".join(f"{k}={v}" for k, v in sorted(r["params"].items()) if k != args.param)
        row = f'{r["op"]} {r["variant"]} R={r["radius"]} {r["dtype"]} {size(r)}' + (f" ({others})" if others else "")
        value = r["params"][args.param]
        if row not in rows:
            rows.append(row)
        if value not in values:
            values.append(value)
        keep_fastest(cells, (row, value), r)
    print(f"*{caption(copies, devices)} Cells: % of copy (registers / occupancy).*\n")
    print(f"| op, variant, R, type, size (other parameters) | " + " | ".join(f"{args.param}={v}" for v in values) + " |")
    print("|---|" + "---:|" * len(values))
    for row in rows:
        out = []
        for v in values:
            r = cells.get((row, v))
            out.append(f'{r["pct_of_copy"]:.1f} ({r.get("regs", "?")} / {r.get("occupancy", 0):.2f})' if r else "")
        print(f"| {row} | " + " | ".join(out) + " |")


def cmd_best(args):
    records, copies, devices = load(args.files)
    best = {}
    for r in records:
        if r.get("status") != "ok" or not keep(r, args):
            continue
        key = (r["op"], size(r), r["dtype"], r["radius"])
        if key not in best or r["pct_of_copy"] > best[key]["pct_of_copy"]:
            best[key] = r
    print(f"*{caption(copies, devices)} The fastest record per R over every variant and parameter "
          f"value in the file(s).*\n")
    print("| op | size | type | R | variant | parameters | ms | GB/s | % copy | regs | occupancy |")
    print("|---|---|---|---:|---|---|---:|---:|---:|---:|---:|")
    for key in sorted(best):
        r = best[key]
        params = ", ".join(f"{k}={v}" for k, v in r["params"].items())
        print(f'| {r["op"]} | {size(r)} | {r["dtype"]} | {r["radius"]} | {r["variant"]} | {params} | '
              f'{r["median_ms"]:.4f} | {r["effective_gbps"]:.0f} | {r["pct_of_copy"]:.1f} | {r.get("regs", "")} | '
              f'{r.get("occupancy", 0):.2f} |')


def cmd_passes(args):
    records, copies, devices = load(args.files)
    by = {}
    for r in records:
        if r.get("status") != "ok" or r["op"] != "d2xyz" or r["variant"] == "baseline":
            continue
        by.setdefault((size(r), r["dtype"], r["radius"]), []).append(r)
    print(f"*{caption(copies, devices)} End-to-end time of one application of d2xyz: the fastest "
          f"one-pass variant against xy + z (2 passes) and x + y + z (3 passes), each later pass adding "
          f"into the output.*\n")
    print("| size | type | R | one pass | ms | 2 passes ms | 3 passes ms | speed-up vs 2 | speed-up vs 3 |")
    print("|---|---|---:|---|---:|---:|---:|---:|---:|")
    for key in sorted(by):
        rs = by[key]
        one = [r for r in rs if r["variant"] not in ("2pass", "3pass")]
        two = [r["median_ms"] for r in rs if r["variant"] == "2pass"]
        three = [r["median_ms"] for r in rs if r["variant"] == "3pass"]
        if not one or not two or not three:
            continue
        o = min(one, key=lambda r: r["median_ms"])
        two, three = min(two), min(three)  # the fastest of each, as for the one pass
        print(f'| {key[0]} | {key[1]} | {key[2]} | {o["variant"]} | {o["median_ms"]:.4f} | {two:.4f} | '
              f'{three:.4f} | {two / o["median_ms"]:.2f} | {three / o["median_ms"]:.2f} |')


def pct_or_na(v):
    """An efficiency is null where no bytes moved that way (bench's derive_counters)."""
    return "n/a" if v is None else f"{100 * v:.1f}"


def cmd_counters(args):
    records, copies, devices = load(args.files)
    rows = [r for r in records if keep(r, args) and r.get("counters")
            and (not args.dtype or r["dtype"] in args.dtype.split(","))
            and (not args.variant or r["variant"] in args.variant.split(","))]
    if args.best:  # the fastest record per operator, size, type and R: the one the targets judge
        best = {}
        for r in rows:
            if r.get("status") == "ok":
                keep_fastest(best, (r["op"], size(r), r["dtype"], r["radius"]), r)
        rows = sorted(best.values(), key=lambda r: (r["op"], r["nx"] * r["ny"] * r["nz"], r["dtype"], r["radius"]))
    if not rows:
        sys.exit("report.py: no record with counters (run bench with --profile) matches the selection")
    print(f"*{caption(copies, devices)} Counters: Nsight Compute over one timed application (bench "
          f"--profile); x cube = bytes / the output cube's bytes; fetch and write efficiency = the model's "
          f"bytes / DRAM bytes; achieved = DRAM bytes / the un-profiled median time.*\n")
    print("| op | variant | params | type | R | size | ms | % copy | effective GB/s | achieved GB/s | "
          "DRAM read x cube | fetch eff % | DRAM write x cube | write eff % | read / write | L2 read x cube | "
          "L2 write x cube | L1 read x cube | L2 hit % |")
    print("|---|---|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        c = r["counters"]
        params = ", ".join(f"{k}={v}" for k, v in r["params"].items())
        head = f'| {r["op"]} | {r["variant"]} | {params} | {r["dtype"]} | {r["radius"]} | {size(r)} |'
        if c.get("status") != "ok":
            blanks = " |" * 10  # the 10 counter columns after the status cell
            print(f'{head} {r["median_ms"]:.4f} | {r["pct_of_copy"]:.1f} | {c.get("status")}: {c.get("reason", "")} |{blanks}')
            continue
        rw = c["read_write_ratio"]
        print(f'{head} {r["median_ms"]:.4f} | {r["pct_of_copy"]:.1f} | {r["effective_gbps"]:.0f} | '
              f'{c["achieved_gbps"]:.0f} | {c["dram_read_per_cube"]:.3f} | {pct_or_na(c["fetch_efficiency"])} | '
              f'{c["dram_write_per_cube"]:.3f} | {pct_or_na(c["write_efficiency"])} | '
              f'{"n/a" if rw is None else f"{rw:.2f}"} | {c["l2_read_per_cube"]:.2f} | {c["l2_write_per_cube"]:.2f} | '
              f'{c["l1_read_per_cube"]:.2f} | {c["l2_hit_rate_pct"]:.1f} |')


def cmd_samesize(args):
    records, copies, devices = load(args.files)
    rows = [r for r in records if r.get("status") == "ok" and keep(r, args) and "copy_same_size_gbps" in r]
    if not rows:
        sys.exit("report.py: no record with a same-size copy (run bench with --same-size-copy) matches the selection")
    print(f"*{caption(copies, devices)} Same-size copy: cudaMemcpy of the record's output bytes in the same "
          f"run (bench --same-size-copy), median of 15.*\n")
    print("| op | variant | type | R | size | params | ms | GB/s | % copy | same-size copy GB/s | % same-size copy |")
    print("|---|---|---|---:|---|---|---:|---:|---:|---:|---:|")
    for r in rows:
        params = ", ".join(f"{k}={v}" for k, v in r["params"].items())
        print(f'| {r["op"]} | {r["variant"]} | {r["dtype"]} | {r["radius"]} | {size(r)} | {params} | '
              f'{r["median_ms"]:.4f} | {r["effective_gbps"]:.0f} | {r["pct_of_copy"]:.1f} | '
              f'{r["copy_same_size_gbps"]:.0f} | {r["pct_of_same_size_copy"]:.1f} |')


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    v = sub.add_parser("variants", help="one row per record")
    v.add_argument("files", nargs="+")
    v.add_argument("--variant", help="comma-separated variants to keep")
    pv = sub.add_parser("pivot", help="rows x columns of GB/s (%% of copy)")
    pv.add_argument("files", nargs="+")
    pv.add_argument("--rows", default="size", choices=["size", "plane_mb", "variant", "variant+dtype", "dtype", "radius", "op"])
    pv.add_argument("--cols", default="variant", choices=["size", "variant", "variant+dtype", "dtype", "radius", "op"])
    pv.add_argument("--dtype")
    pv.add_argument("--variant")
    pp = sub.add_parser("param", help="one column per value of a parameter")
    pp.add_argument("files", nargs="+")
    pp.add_argument("--param", required=True)
    pb = sub.add_parser("best", help="the best record per R")
    pb.add_argument("files", nargs="+")
    pa = sub.add_parser("passes", help="one pass against 2 and 3 passes")
    pa.add_argument("files", nargs="+")
    pc = sub.add_parser("counters", help="bench --profile's counters, one row per record")
    pc.add_argument("files", nargs="+")
    pc.add_argument("--best", action="store_true", help="only the fastest record per operator, size, type and R")
    pc.add_argument("--variant")
    pc.add_argument("--dtype")
    ps = sub.add_parser("samesize", help="records against the reference copy and a copy of their own bytes")
    ps.add_argument("files", nargs="+")
    pd = sub.add_parser("defaults", help="docs/defaults.md from src/plan/defaults.cpp and the results it names")
    pd.add_argument("--check", action="store_true", help="exit 1 where docs/defaults.md is out of date")
    for sp in (pv, pp, pb, pc, ps):
        sp.add_argument("--op")
        sp.add_argument("--radius")
    args = p.parse_args()
    if args.cmd == "defaults":
        import defaults_table  # bench/defaults_table.py, beside this file
        sys.exit(defaults_table.write(args.check))
    {"variants": cmd_variants, "pivot": cmd_pivot, "param": cmd_param, "best": cmd_best,
     "passes": cmd_passes, "counters": cmd_counters,
     "samesize": cmd_samesize}[args.cmd](args)


if __name__ == "__main__":
    main()
