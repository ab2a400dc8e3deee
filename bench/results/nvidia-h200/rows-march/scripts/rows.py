# Session 68: the 2D march with each row's x neighbours loaded a row ahead (march_rows) against the
# march before it (FDSTENCIL_ROWS=0, experiment switch), alternated in one binary. JSON list of runs.
import json, os, subprocess, sys, tempfile
out, reps = sys.argv[1], int(sys.argv[2])
cases = []
for n in (1000, 1400, 2000, 4000):
    for r in (1, 2, 4, 8):
        cases.append((n, r, 10, ""))
for n in (1000, 2000, 4000):
    for r in (2, 4, 8):
        cases.append((n, r, 0, ""))
cases += [(2000, 4, 20, ""), (2000, 8, 10, '{"side": 1}'), (1000, 4, 20, "")]
records = []
for n, r, cpml, kp in cases:
    for rep in range(reps):
        for mode in ("0", "1"):
            d = tempfile.mkdtemp()
            cmd = ["./build/fdstencil", "wave", "--backend", "cuda", "--quiet", "--constant", "2000", "--spacing", "10",
                   "--steps", "2000", "--ricker", "8", "--no-final", "--shape", f"{n},{n}", "--source", f"{5*n},{5*n}",
                   "--radius", str(r), "--cpml", str(cpml), "--output", d + "/o"]
            if kp: cmd += ["--kernel-params", kp]
            p = subprocess.run(cmd, env=os.environ | {"FDSTENCIL_ROWS": mode}, capture_output=True, text=True)
            rec = {"shape": n, "radius": r, "cpml": cpml, "kernel_params": kp, "rows": int(mode), "rep": rep, "rc": p.returncode}
            if p.returncode == 0:
                s = json.load(open(d + "/o/summary.json"))
                t = s["timing"]
                rec |= {"kernel": s["kernel"], "gpts": t["gpts"], "percent_of_bound": t["percent_of_bound"],
                        "copy_gbps": t["copy_gbps"], "loop_s": t["loop_s"]}
            else:
                rec["stderr"] = p.stderr[-500:]
            records.append(rec)
            print(n, r, cpml, kp, mode, rec.get("gpts"), rec.get("percent_of_bound"), rec.get("copy_gbps"), flush=True)
            json.dump(records, open(out, "w"), indent=1)
