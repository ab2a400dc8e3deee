#!/usr/bin/env bash
# Runs each reader's fuzzer (fuzz/build.sh builds them) for SECONDS, one after the other on one
# core, then merges what it found into the committed corpus, minimized:
#   fuzz/run.sh SECONDS [npy segy survey checkpoint]
# Each fuzzer starts from fuzz/seeds/<reader> and fuzz/corpus/<reader>; its new inputs go to
# build-fuzz/work/<reader>, its crashes to build-fuzz/artifacts/, its log to
# build-fuzz/logs/<reader>-<time>.log, and libFuzzer's final figures (executions, coverage,
# crashes) to build-fuzz/logs/summary.txt. A crash ends a libFuzzer run: the reader's run then
# starts again for the time left, at most three times, so one bug does not end the whole run.
set -uo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] && [[ $1 =~ ^[0-9]+$ ]] || { echo "usage: fuzz/run.sh SECONDS [READER...]" >&2; exit 2; }
seconds=$1
shift
readers=("$@")
[ ${#readers[@]} -gt 0 ] || readers=(npy segy survey checkpoint)
build=build-fuzz
mkdir -p "$build/logs" "$build/artifacts"
summary=$build/logs/summary.txt

# The longest input per reader: room for a few traces of SEG-Y (3600 bytes of headers) and for
# deeply nested survey JSON; the others' files are headers and a few values.
max_len() { case $1 in segy | survey) echo 16384 ;; *) echo 8192 ;; esac; }

# One libFuzzer run; its exit status.
fuzz_once() {
  local reader=$1 left=$2 log=$3
  # One process fuzzing in place (no -jobs or -workers), one OpenMP thread, a low priority: the
  # fuzzer takes one core of a shared machine.
  OMP_NUM_THREADS=1 nice -n 10 "$build/fuzz/fuzz_$reader" -max_total_time="$left" -print_final_stats=1 \
    -max_len="$(max_len "$reader")" -timeout=30 -rss_limit_mb=2048 \
    -artifact_prefix="$build/artifacts/$reader-" \
    "$build/work/$reader" "fuzz/corpus/$reader" "fuzz/seeds/$reader" >>"$log" 2>&1
}

# The committed corpus made again from itself and the new inputs: the fewest inputs that reach every
# edge the seeds do not (-use_counters=0: running an edge more often earns no place), so it stays at
# a few hundred small files however long the fuzzers ran.
merge_corpus() {
  local reader=$1 log=$2 fresh=$build/merge/$1 seed
  rm -rf "$fresh"
  mkdir -p "$fresh"
  cp "fuzz/seeds/$reader"/* "$fresh"/
  OMP_NUM_THREADS=1 nice -n 10 "$build/fuzz/fuzz_$reader" -merge=1 -use_counters=0 \
    -max_len="$(max_len "$reader")" "$fresh" "fuzz/corpus/$reader" "$build/work/$reader" >>"$log" 2>&1 ||
    return 1
  for seed in "fuzz/seeds/$reader"/*; do rm -f "$fresh/$(basename "$seed")"; done
  rm -rf "fuzz/corpus/$reader"
  mv "$fresh" "fuzz/corpus/$reader"
}

fuzz_reader() {
  local reader=$1 log start crashes=0 left
  log=$build/logs/$reader-$(date -u +%Y%m%dT%H%M%S).log
  mkdir -p "$build/work/$reader" "fuzz/corpus/$reader"
  start=$(date +%s)
  while :; do
    left=$((seconds - ($(date +%s) - start)))
    [ "$left" -gt 0 ] || break
    fuzz_once "$reader" "$left" "$log" && break
    crashes=$((crashes + 1))
    [ "$crashes" -lt 3 ] || break
  done
  {
    echo "== $reader: $(($(date +%s) - start)) s wall, $crashes libFuzzer run(s) ended by a crash"
    grep -E '^#[0-9]+[[:space:]]+DONE|^stat::(number_of_executed_units|new_units_added)|^SUMMARY|^artifact_prefix' \
      "$log"
  } | tee -a "$summary"
  merge_corpus "$reader" "$log"
  echo "   corpus: $(find "fuzz/corpus/$reader" -type f | wc -l) files," \
    "$(cat "fuzz/corpus/$reader"/* | wc -c) bytes" | tee -a "$summary"
}

echo "== $(date -u +%FT%TZ): ${readers[*]}, $seconds s each" | tee -a "$summary"
for reader in "${readers[@]}"; do
  [ -x "$build/fuzz/fuzz_$reader" ] || { echo "no $build/fuzz/fuzz_$reader: run fuzz/build.sh" >&2; exit 1; }
  fuzz_reader "$reader"
done
