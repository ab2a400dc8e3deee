#!/usr/bin/env python3
"""Markdown tables of the library's runs (docs/library.md), from committed files only:

  python3 bench/report_plans.py tune TUNE.json [...]                 what fdstencil tune chose, per case
  python3 bench/report_plans.py tuned PLAN.json --best FILE.json [...] the plan's choice from the cache
                                      against the best earlier record of the same case in FILE(s)
  python3 bench/report_plans.py defaults PLAN.json [...] --tuned TUNE.json [...]
                                      the plan's built-in defaults against the tuned figure, per case
  python3 bench/report_plans.py overhead OVERHEAD.json                Plan::apply against the bare launch

TUNE files are `fdstencil tune --json` output ({"cases": [...]}); PLAN and FILE are `fdstencil bench
--json` results, PLAN holding the plan's rows (variant "plan"). A case is (op, size, type, R); the
size is the series' own (laplacian7 counts the boundary).
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report import load, size  # noqa: E402


def read(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        sys.exit(f"report_plans.py: cannot read {path}: {e}")


def params_text(p):
    return ", ".join(f"{k}={v}" for k, v in sorted(p.items()))


def tune_cases(paths):
    cases = {}
    for path in paths:
        doc = read(path)
        if "cases" not in doc:
            sys.exit(f"report_plans.py: {path} is not fdstencil tune --json output (no 'cases')")
        for c in doc["cases"]:
            key = (c["op"], "x".join(str(n) for n in c["size"]), c["dtype"], c["radius"])
            cases[key] = c
    return cases


def plan_rows(paths):
    records, copies, devices = load(paths)
    rows = {}
    for r in records:
        if r["variant"] == "plan" and r.get("status") == "ok":
            rows[(r["op"], size(r), r["dtype"], r["radius"])] = r
    if not rows:
        sys.exit("report_plans.py: no plan rows (variant 'plan', status ok) in " + ", ".join(paths))
    return rows, copies, devices


def copy_span(copies):
    lo, hi = min(copies), max(copies)
    return f"{lo:.0f}" if abs(hi - lo) < 1 else f"{lo:.0f}-{hi:.0f}"


def order(key):
    op, sz, dtype, radius = key
    n = [int(x) for x in sz.split("x")]
    return (n[0] * n[1] * n[2], sz, ["laplacian7", "d2x", "d2y", "d2z", "d2xy", "d2xyz"].index(op), dtype, radius)


def cmd_tune(args):
    cases = tune_cases(args.files)
    devices = sorted({c["device"] for c in cases.values()})
    copies = [c["copy_gbps"] for c in cases.values()]
    print(f"*{', '.join(devices)}; cudaMemcpy device-to-device measured in the same run: {copy_span(copies)} GB/s. "
          f"The winner of each case, its median time, its share of the copy bandwidth, the candidates timed "
          f"(verified first) and the wall time of the whole tuning run.*\n")
    print("| op | size | type | R | variant | parameters | ms | GB/s | % copy | timed | failed | seconds |")
    print("|---|---|---|---:|---|---|---:|---:|---:|---:|---:|---:|")
    for key in sorted(cases, key=order):
        c = cases[key]
        print(f'| {c["op"]} | {key[1]} | {c["dtype"]} | {c["radius"]} | {c["variant"]} | {params_text(c["params"])} | '
              f'{c["median_ms"]:.4f} | {c["effective_gbps"]:.0f} | {c["pct_of_copy"]:.1f} | {c["timed"]} | '
              f'{c["failed"]} | {c["seconds"]:.1f} |')


def cmd_tuned(args):
    rows, copies, devices = plan_rows(args.files)
    earlier, _, _ = load(args.best)
    best = {}
    for r in earlier:
        if r.get("status") != "ok" or r["variant"] == "plan":
            continue
        key = (r["op"], size(r), r["dtype"], r["radius"])
        if key not in best or r["pct_of_copy"] > best[key]["pct_of_copy"]:
            best[key] = r
    print(f"*{', '.join(sorted(devices))}; cudaMemcpy device-to-device measured in the same run: {copy_span(copies)} "
          f"GB/s. The plan's choice from the tuning cache against the fastest earlier record of the same case; "
          f"the difference is in points of the copy bandwidth.*\n")
    print("| op | size | type | R | plan's variant | parameters | % copy | best before | % copy | difference |")
    print("|---|---|---|---:|---|---|---:|---|---:|---:|")
    for key in sorted(rows, key=order):
        r = rows[key]
        b = best.get(key)
        before = f'{b["variant"]} | {b["pct_of_copy"]:.1f} | {r["pct_of_copy"] - b["pct_of_copy"]:+.1f}' if b else "none | | "
        print(f'| {r["op"]} | {key[1]} | {r["dtype"]} | {r["radius"]} | {r.get("plan_variant", "?")} | '
              f'{params_text(r["params"])} | {r["pct_of_copy"]:.1f} | {before} |')


def cmd_defaults(args):
    rows, copies, devices = plan_rows(args.files)
    tuned = tune_cases(args.tuned)
    print(f"*{', '.join(sorted(devices))}; cudaMemcpy device-to-device measured in the same run: {copy_span(copies)} "
          f"GB/s. The plan with no cache (the built-in defaults) against the winner of fdstencil tune for the same "
          f"case; the last column is the defaults' time as a share of the tuned figure (100 % = as fast).*\n")
    print("| op | size | type | R | default | parameters | % copy | tuned | % copy | defaults / tuned |")
    print("|---|---|---|---:|---|---|---:|---|---:|---:|")
    worst = None
    for key in sorted(rows, key=order):
        r = rows[key]
        t = tuned.get(key)
        if t:
            share = 100.0 * r["pct_of_copy"] / t["pct_of_copy"]
            worst = share if worst is None else min(worst, share)
            against = f'{t["variant"]} | {t["pct_of_copy"]:.1f} | {share:.1f} %'
        else:
            against = "not tuned | | "
        print(f'| {r["op"]} | {key[1]} | {r["dtype"]} | {r["radius"]} | {r.get("plan_variant", "?")} | '
              f'{params_text(r["params"])} | {r["pct_of_copy"]:.1f} | {against} |')
    if worst is not None:
        print(f"\nThe lowest share: {worst:.1f} %.")


def cmd_overhead(args):
    doc = read(args.file)
    name = doc.get("device", {}).get("name", "?")
    recs = doc.get("records", [])
    if not recs:
        sys.exit(f"report_plans.py: no records in {args.file}")
    print(f"*{name}; per call, the median over {recs[0]['rounds']} alternating rounds of {recs[0]['calls']} "
          f"back-to-back calls: the host's time to enqueue one (before synchronising) and the time per call "
          f"including the synchronisation.*\n")
    print("| op | size | type | R | variant | bare launch, enqueue µs | Plan::apply, enqueue µs | ratio | "
          "bare, total µs | apply, total µs | ratio |")
    print("|---|---|---|---:|---|---:|---:|---:|---:|---:|---:|")
    for r in recs:
        print(f'| {r["op"]} | {r["nx"]}x{r["ny"]}x{r["nz"]} | {r["dtype"]} | {r["radius"]} | {r["plan_variant"]} | '
              f'{r["bare_enqueue_us"]:.2f} | {r["plan_enqueue_us"]:.2f} | {r["enqueue_ratio"]:.3f} | '
              f'{r["bare_total_us"]:.2f} | {r["plan_total_us"]:.2f} | {r["total_ratio"]:.3f} |')
    print(f'\nThe largest ratio: {max(max(r["enqueue_ratio"], r["total_ratio"]) for r in recs):.3f}.')


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("tune", help="what fdstencil tune chose, per case")
    t.add_argument("files", nargs="+")
    u = sub.add_parser("tuned", help="the plan's cached choice against the best earlier record")
    u.add_argument("files", nargs="+")
    u.add_argument("--best", nargs="+", required=True)
    d = sub.add_parser("defaults", help="the built-in defaults against the tuned figure")
    d.add_argument("files", nargs="+")
    d.add_argument("--tuned", nargs="+", required=True)
    o = sub.add_parser("overhead", help="Plan::apply against the bare launch")
    o.add_argument("file")
    args = p.parse_args()
    {"tune": cmd_tune, "tuned": cmd_tuned, "defaults": cmd_defaults, "overhead": cmd_overhead}[args.cmd](args)


if __name__ == "__main__":
    main()
