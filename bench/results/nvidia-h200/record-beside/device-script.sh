#!/bin/bash
# Issue 35: the receivers sampled beside the march (2D, the layers' side stream): its bits, then
# its timing against the run's stream (FDS_EXP_RECORD_MAIN=1) in the same binary, alternated.
set -u
mkdir -p $OUT/g6
trap 'cd $OUT && tar czf g6.tgz g6 2>/dev/null' EXIT
export FDSTENCIL_TUNING_CACHE=$PWD/build/no-cache.json
t0=$(date +%s)
(cmake --preset default > /dev/null 2>&1 && cmake --build build -j16 --target fdstencil test_cuda > $OUT/g6/build.txt 2>&1) || { echo BUILD FAILED; grep -B2 -A12 error $OUT/g6/build.txt | head -60; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
timeout 120 ./build/tests/test_cuda --gtest_filter='WaveGpu.CpmlBeside*:WaveGpu.Graphs*:WaveGpu.AKeptState*:WaveGpu.MatchesTheCpu*:WaveGpu.ResumesFrom*:GpuModel.*' > $OUT/g6/test_cuda.txt 2>&1; echo "test_cuda rc=$? $(( $(date +%s) - t0 )) s"
grep -E "^\[  (PASSED|FAILED)|FAILED  \]|Failure" $OUT/g6/test_cuda.txt | head
W=$(mktemp -d)
one() { tag=$1; n=$2; r=$3; shift 3
  rm -rf $W/o
  ./build/fdstencil wave --backend cuda --quiet --constant 2000 --shape $n,$n --spacing 10 --radius $r --cpml 10 --steps 2000 --source $(( n * 5 )),$(( n * 5 )) --ricker 8 --no-final --receiver-line 20,0:20,$(( (n - 1) * 10 )):100 -o $W/o > /dev/null 2>$W/err || { echo "$tag failed $(cat $W/err)"; return; }
  python3 -c "import json; s=json.load(open('$W/o/summary.json')); t=s['timing']; print(json.dumps({'tag':'$tag','size':$n,'radius':$r,'gpts':t['gpts'],'pct':t.get('percent_of_bound'),'copy_gbps':t.get('copy_gbps'),'kernel':s['kernel']}))" >> $OUT/g6/runs.jsonl
}
for round in 1 2 3; do
  for n in 1000 2000; do for r in 2 4; do
    one beside $n $r
    FDS_EXP_RECORD_MAIN=1 one main $n $r
  done; done
  echo "round $round $(( $(date +%s) - t0 )) s"
done
python3 - <<'PY'
import json, os, statistics as st
rows = [json.loads(l) for l in open(os.path.join(os.environ["OUT"], "g6", "runs.jsonl"))]
for n in (1000, 2000):
    for r in (2, 4):
        b = [x["gpts"] for x in rows if x["tag"] == "beside" and x["size"] == n and x["radius"] == r]
        m = [x["gpts"] for x in rows if x["tag"] == "main" and x["size"] == n and x["radius"] == r]
        print(n, r, "beside", [round(x, 1) for x in b], "main", [round(x, 1) for x in m], "median ratio", round(st.median(b) / st.median(m), 3))
print("copy", sorted(round(x["copy_gbps"]) for x in rows)[::6])
PY
timeout 70 compute-sanitizer --tool memcheck ./build/tests/test_cuda --gtest_filter='WaveGpu.CpmlBeside*' > $OUT/g6/memcheck.txt 2>&1; echo "memcheck rc=$? $(( $(date +%s) - t0 )) s"
grep -E "ERROR SUMMARY|PASSED|FAILED" $OUT/g6/memcheck.txt | head -3
echo "total $(( $(date +%s) - t0 )) s"
