#!/usr/bin/env python3
"""Compare two fdstencil result files: for every case present in both (same op, variant, type,
radius, size and parameters), the change in median time and in % of the same-run copy bandwidth,
and whether it exceeds the run-to-run noise.

The verdict uses % of the same-run copy bandwidth, which cancels a device running faster or slower
as a whole (the H200's copy rate moved 1.4 % between two runs an hour apart). A change counts as
real when it exceeds the noise: the larger of the two runs' own spreads ((max - min) / median over
their repeats) plus the change of the copy reference between the runs (the two add: a kernel whose
time did not move still changes its % of copy when the copy rate moves).

  python3 bench/compare.py OLD.json NEW.json [--only-changed]

Exit code 0 when it compared something, 2 for unreadable files or no case in common.
"""
import argparse
import json
import sys


def load(path):
    try:
        with open(path) as f:
            doc = json.load(f)
        return doc, [r for r in doc["records"] if r.get("status") == "ok"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"compare.py: error: cannot read results file {path}: {e}", file=sys.stderr)
        sys.exit(2)


def key(r):
    return (r["op"], r["variant"], r["dtype"], r["radius"], r["nx"], r["ny"], r["nz"],
            json.dumps(r.get("params", {}), sort_keys=True))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("old")
    p.add_argument("new")
    p.add_argument("--only-changed", action="store_true", help="list only differences beyond the noise")
    args = p.parse_args()
    old_doc, old = load(args.old)
    new_doc, new = load(args.new)
    old_by_key = {key(r): r for r in old}
    pairs = [(old_by_key[key(r)], r) for r in new if key(r) in old_by_key]
    if not pairs:
        print("compare.py: error: the two files have no case in common", file=sys.stderr)
        sys.exit(2)
    print(f"# old: {old_doc['device']['name']}, copy {old_doc['copy_gbps']:.0f} GB/s ({args.old})")
    print(f"# new: {new_doc['device']['name']}, copy {new_doc['copy_gbps']:.0f} GB/s ({args.new})")
    print(f"# noise: the larger timing spread of each case plus the copy reference's change "
          f"({100 * abs(new_doc['copy_gbps'] / old_doc['copy_gbps'] - 1):.1f} %)")
    print(f"{'case':<58} {'old ms':>9} {'new ms':>9} {'time':>7} {'old %':>6} {'new %':>6}  verdict")
    faster = slower = same = 0
    copy_change = abs(new_doc["copy_gbps"] / old_doc["copy_gbps"] - 1.0)
    for a, b in pairs:
        change = b["median_ms"] / a["median_ms"] - 1.0
        gain = b["pct_of_copy"] / a["pct_of_copy"] - 1.0  # positive: closer to the copy rate
        spread = lambda r: (r["max_ms"] - r["min_ms"]) / r["median_ms"]
        noise = max(spread(a), spread(b)) + copy_change
        within = abs(gain) <= noise
        if within:
            verdict, same = "within noise", same + 1
        elif gain > 0:
            verdict, faster = "faster", faster + 1
        else:
            verdict, slower = "slower", slower + 1
        if args.only_changed and within:
            continue
        params = ",".join(f"{k}={v}" for k, v in sorted(a.get("params", {}).items()))
        case = f'{a["op"]} {a["variant"]} {a["dtype"]} R{a["radius"]} {a["nx"]}x{a["ny"]}x{a["nz"]} {params}'
        print(f"{case[:58]:<58} {a['median_ms']:9.4f} {b['median_ms']:9.4f} {100 * change:+6.1f}% "
              f"{a['pct_of_copy']:6.1f} {b['pct_of_copy']:6.1f}  {verdict}")
    print(f"# {len(pairs)} cases in common: {faster} faster, {slower} slower, {same} within noise; "
          f"{len(new) - len(pairs)} only in new, {len(old) - len(pairs)} only in old")


if __name__ == "__main__":
    main()
