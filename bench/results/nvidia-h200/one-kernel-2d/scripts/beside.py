# Session 66: the 2D step with its layers beside the march, in modes set by environment switches
# (not committed): P = FDSTENCIL_PDL, B = FDSTENCIL_BESIDE (1: one kernel), S = FDSTENCIL_SIDE_POINTS.
# Modes alternate within each repeat. Writes a JSON list of runs.
import json, os, subprocess, sys, tempfile
out, reps, modes = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(",")
which = sys.argv[4] if len(sys.argv) > 4 else "main"
cases = []
if which == "main":
    for n in (1000, 2000):
        for r in (2, 4, 8):
            cases.append((f"{n},{n}", f"{5*n},{5*n}", r, 10, []))
    cases.append(("4000,4000", "20000,20000", 4, 10, []))
    cases.append(("2000,2000", "10000,10000", 4, 10, ["--receiver-line", "50,0:50,19990:100"]))
    cases.append(("1000,1000", "5000,5000", 4, 10, ["--receiver-line", "50,0:50,9990:100"]))
    cases.append(("2000,2000", "10000,10000", 4, 20, []))
    cases.append(("1000,1000", "5000,5000", 1, 10, []))
else:
    for n in (1000, 2000):
        cases.append((f"{n},{n}", f"{5*n},{5*n}", 4, 10, []))
def env_of(mode):
    e = {}
    for part in (mode[i:i+2] if mode[i] != "S" else mode[i:] for i in range(0, len(mode), 2)):
        pass
    e["FDSTENCIL_PDL"] = "1" if "P1" in mode else "0"
    e["FDSTENCIL_BESIDE"] = "1" if "B1" in mode else "0"
    if "S" in mode: e["FDSTENCIL_SIDE_POINTS"] = mode.split("S")[1]
    return e
records = []
for shape, src, r, cpml, extra in cases:
    for rep in range(reps):
        for mode in modes:
            d = tempfile.mkdtemp()
            cmd = ["./build/fdstencil", "wave", "--backend", "cuda", "--quiet", "--constant", "2000", "--spacing", "10",
                   "--steps", "2000", "--ricker", "8", "--no-final", "--shape", shape, "--source", src,
                   "--radius", str(r), "--cpml", str(cpml), *extra, "--output", d + "/o"]
            p = subprocess.run(cmd, env=os.environ | env_of(mode), capture_output=True, text=True)
            rec = {"shape": shape, "radius": r, "cpml": cpml, "receivers": bool(extra), "mode": mode, "rep": rep, "rc": p.returncode}
            if p.returncode == 0:
                s = json.load(open(d + "/o/summary.json"))
                t = s["timing"]
                rec |= {"kernel": s["kernel"], "gpts": t["gpts"], "percent_of_bound": t["percent_of_bound"],
                        "copy_gbps": t["copy_gbps"], "loop_s": t["loop_s"]}
            else:
                rec["stderr"] = p.stderr[-500:]
            records.append(rec)
            print(shape, r, cpml, int(bool(extra)), mode, rec.get("gpts"), rec.get("percent_of_bound"), rec.get("copy_gbps"), flush=True)
            json.dump(records, open(out, "w"), indent=1)
