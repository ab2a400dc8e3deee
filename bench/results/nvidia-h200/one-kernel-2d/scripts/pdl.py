# Session 66: the step's kernels launched one after another (FDSTENCIL_PDL=0) against programmatic
# dependent launches (FDSTENCIL_PDL=1), alternated, in one binary. Writes a JSON list of runs.
import json, os, subprocess, sys, tempfile
out = sys.argv[1]
reps = int(sys.argv[2]) if len(sys.argv) > 2 else 2
modes = sys.argv[3].split(",") if len(sys.argv) > 3 else ["0", "1"]
cases = []
for n in (1000, 2000):
    for r in (2, 4, 8):
        cases.append(([f"{n},{n}"], [f"{5*n},{5*n}"], r, 10, 2000))
cases.append((["4000,4000"], ["20000,20000"], 4, 10, 2000))
for n in (128,):
    for r in (2, 4):
        cases.append(([f"{n},{n},{n}"], [f"{5*n},{5*n},{5*n}"], r, 10, 1000))
cases.append((["2000,2000"], ["10000,10000"], 4, 0, 2000))
cases.append((["1000,1000"], ["5000,5000"], 4, 0, 2000))
records = []
for shape, src, r, cpml, steps in cases:
    for rep in range(reps):
        for pdl in modes:
            d = tempfile.mkdtemp()
            cmd = ["./build/fdstencil", "wave", "--backend", "cuda", "--quiet", "--constant", "2000", "--spacing", "10",
                   "--steps", str(steps), "--ricker", "8", "--no-final", "--shape", shape[0], "--source", src[0],
                   "--radius", str(r), "--cpml", str(cpml), "--output", d + "/o"]
            p = subprocess.run(cmd, env=os.environ | {"FDSTENCIL_PDL": pdl}, capture_output=True, text=True)
            rec = {"shape": shape[0], "radius": r, "cpml": cpml, "steps": steps, "pdl": int(pdl), "rep": rep, "rc": p.returncode, "stderr_tail": p.stderr[-300:]}
            if p.returncode == 0:
                s = json.load(open(d + "/o/summary.json"))
                t = s["timing"]
                rec |= {"kernel": s["kernel"], "gpts": t["gpts"], "percent_of_bound": t["percent_of_bound"],
                        "copy_gbps": t["copy_gbps"], "loop_s": t["loop_s"]}
            else:
                rec["stderr"] = p.stderr[-500:]
            records.append(rec)
            print(shape[0], r, cpml, pdl, rec.get("gpts"), rec.get("percent_of_bound"), rec.get("copy_gbps"), flush=True)
            json.dump(records, open(out, "w"), indent=1)
