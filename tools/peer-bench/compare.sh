#!/usr/bin/env bash
# One run of scree, Embree and POV-Ray on the shared peer workload, back to
# back on this machine, then scree and Embree on an exported rock field:
# the figures of README's Performance table.
#
#   tools/peer-bench/compare.sh [SIZE ...]        (default: 1025 2049 4097)
#   ROUNDS=N tools/peer-bench/compare.sh ...      (whole frames: N rounds each, default 5)
#   REPS=N tools/peer-bench/compare.sh ...        (Embree's and scree bench's passes:
#                                       N repetitions each, default 5)
#
# Needs: python3 with numpy (the workload generator), libembree-dev and gcc
# (Embree's program), povray. Generated files go to tools/peer-bench/data/.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
peers=$root/../shared/bench
sizes=("${@:-1025 2049 4097}")
# shellcheck disable=SC2206
sizes=(${sizes[*]})
cargo build --release --quiet
scree=$root/target/release/scree
mkdir -p tools/peer-bench/data tools/peer-bench/out
[ -x tools/peer-bench/out/embree_bench ] ||
  gcc -O3 -march=native -fopenmp "$peers/embree_bench.c" -o tools/peer-bench/out/embree_bench -lembree3 -lm
# The same program with Embree's robust (watertight) triangle test, as
# scree's is: its checksums, not its rates, are what this run compares.
if [ ! -x tools/peer-bench/out/embree_bench_robust ]; then
  sed 's/^\( *\)rtcSetSceneBuildQuality(scene, quality);/&\n\1rtcSetSceneFlags(scene, RTC_SCENE_FLAG_ROBUST);/' \
    "$peers/embree_bench.c" >tools/peer-bench/out/embree_bench_robust.c
  grep -q RTC_SCENE_FLAG_ROBUST tools/peer-bench/out/embree_bench_robust.c ||
    { echo "compare.sh: could not add the robust flag to embree_bench.c" >&2; exit 2; }
  gcc -O3 -march=native -fopenmp tools/peer-bench/out/embree_bench_robust.c -o tools/peer-bench/out/embree_bench_robust -lembree3 -lm
fi
# Passes of Embree's program and of scree bench: $REPS repetitions each (5
# unless set), rates the medians. With three, one slow spell of the host
# in a one- or two-thread pass moved the thread scaling of either program
# by a tenth (1.82 to 2.18 within one run), while a pure compute loop
# and random reads over 32 MB scaled 1.98-1.99 on the same machine.
reps=${REPS:-5}
# scree bench's figures (its arguments: the input), as one JSON line,
# with the copies' control: one-thread copies of the passes at once, whose
# scaling shows what the host gave independent work in the same spells.
scree_bench() { "$scree" bench "$@" --reps "$reps" --copies --json; }
# Embree's figures for a mesh (single rays, 1 and 2 threads), then the
# robust copy's checksums.
embree() {
  echo "--- Embree (single rays)"
  out/embree_bench "$1" --quality medium --threads 1,2 --reps "$reps" 2>&1 | grep -E "RESULT|peak RSS"
  echo "--- Embree, robust test (checksums)"
  out/embree_bench_robust "$1" --quality medium --threads 2 --reps 1 2>&1 |
    grep RESULT | grep -oE "hits=[0-9]+ occluded=[0-9]+"
}
# The generator needs numpy: the first python3 on PATH that has it (a
# pyenv python often lacks it where Debian's python3-numpy is installed).
python=
for candidate in python3 /usr/bin/python3; do
  if "$candidate" -c "import numpy" 2>/dev/null; then python=$candidate; break; fi
done
for size in "${sizes[@]}"; do
  if [ ! -f "tools/peer-bench/data/terrain_$size.png" ]; then
    [ -n "$python" ] || { echo "compare.sh: no python3 with numpy (apt-get install python3-numpy)" >&2; exit 2; }
    "$python" "$peers/gen_terrain.py" --size "$size" --out tools/peer-bench/data
  fi
done
cd tools/peer-bench
cp "$peers/terrain.pov" out/terrain.pov
# Whole frames, POV-Ray's and scree's taking turns for $ROUNDS rounds (5
# unless set), so that a slow spell of the shared host falls on both; then
# the medians of the wall times and their ratio. One frame each moved the
# ratio by up to a third from run to run, and the median of three by up
# to a tenth (a 1025² frame of 0.22 to 0.36 s within one run).
rounds=${ROUNDS:-5}
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
# Runs a command, printing its output, its peak RSS (GNU time) and its wall
# time to the millisecond (GNU time's own is to the hundredth of a second:
# a 4097² frame of 0.38 s could be 1% either side of 10× POV-Ray's).
timed() {
  local TIMEFORMAT='wall %3R s'
  { time /usr/bin/time -f "peak RSS %M KiB" "$@" 2>&1; } 2>&1
}
frames() {
  local size=$1 pov=() ours=() round line
  for ((round = 1; round <= rounds; round++)); do
    echo "--- POV-Ray frame, round $round"
    line=$(timed povray +Iout/terrain.pov +W1920 +H1080 -D -A +FP \
      File_Gamma=1.0 +WT2 "+Oout/pov_$size.ppm" "Declare=SIZE=$size" | grep -E "Trace Time|peak RSS|^wall")
    echo "$line"
    pov+=("$(echo "$line" | sed -n 's/^wall \([0-9.]*\) s.*/\1/p')")
    echo "--- scree frame, round $round"
    line=$(timed "$scree" render "workload-$size.json" -o "out/scree_$size.png")
    echo "$line"
    ours+=("$(echo "$line" | sed -n 's/^wall \([0-9.]*\) s.*/\1/p')")
  done
  local p q
  p=$(printf '%s\n' "${pov[@]}" | median)
  q=$(printf '%s\n' "${ours[@]}" | median)
  echo "--- frames, medians of $rounds: POV-Ray $p s, scree $q s: $(awk -v p="$p" -v q="$q" 'BEGIN {printf "%.2f", p / q}')x"
}
# Whole frames first, for every size: run right after the benches, whose
# mesh runs free up to 5.6 GB, the first rounds of both renderers were
# slow (a 4097² scree frame 0.55-0.72 s against 0.41 s two rounds later,
# POV-Ray's 4.5 against 3.8 s), as if the host had to back that memory
# again.
for size in "${sizes[@]}"; do
  echo "=== $size² samples: frames"
  frames "$size"
done
for size in "${sizes[@]}"; do
  echo "=== $size² samples"
  embree "data/terrain_$size.obj"
  echo "--- scree bench, grid"
  scree_bench --heightmap "data/terrain_$size.png"
  echo "--- scree bench, BVH"
  scree_bench --obj "data/terrain_$size.obj"
done
echo "=== rock field: scenes/boulder-field.json's 400 rocks as one mesh"
"$scree" terrain ../../scenes/boulder-field.json --rocks-obj data/rocks.obj -q
embree data/rocks.obj
echo "--- scree bench, BVH"
scree_bench --obj data/rocks.obj
