#!/usr/bin/env bash
# Runs the README's Slurm recipe on a real single-node cluster and checks
# its results byte for byte against local renders:
#   - a still as a tile array (tools/slurm/tiles.sbatch) and its merge
#     (tools/slurm/merge.sbatch, after the array, --kill-on-invalid-dep);
#   - a short sequence as a frame array (tools/slurm/frames.sbatch).
# Installs slurm-wlm and munge with apt-get if they are missing, starts
# munged, slurmctld and slurmd without systemd (as root), and stops them by
# PID at the end, also on failure. Every wait has a timeout.
#
#   tools/slurm-test.sh [SCREE]     (default: target/debug/scree, then target/release/scree)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
scree=${1:-}
if [ -z "$scree" ]; then
  for candidate in target/debug/scree target/release/scree; do
    [ -x "$candidate" ] && scree=$root/$candidate && break
  done
fi
[ -x "${scree:-}" ] || { echo "slurm-test: build scree first (cargo build)" >&2; exit 2; }
scree=$(realpath "$scree")
[ "$(id -u)" = 0 ] || { echo "slurm-test: needs root (it starts the cluster's daemons)" >&2; exit 2; }
start=$(date +%s%N)
say() {
  local ms=$(( ($(date +%s%N) - start) / 1000000 ))
  printf '[%d.%03d s] %s\n' $((ms / 1000)) $((ms % 1000)) "$*"
}

if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
  say "installing slurm-wlm and munge"
  export DEBIAN_FRONTEND=noninteractive
  timeout 600 apt-get update -qq
  timeout 600 apt-get install -y -qq slurm-wlm munge >/dev/null
fi

work=$(mktemp -d /tmp/scree-slurm.XXXXXX)
chmod 755 "$work"
pids=()
cleanup() {
  local status=$?
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  [ -f "$work/munge/munged.pid" ] && kill "$(cat "$work/munge/munged.pid")" 2>/dev/null || true
  for pid in "${pids[@]}"; do timeout 10 tail --pid="$pid" -f /dev/null 2>/dev/null || true; done
  if [ "$status" != 0 ]; then
    echo "slurm-test: failed; logs:" >&2
    tail -n 20 "$work"/*.log "$work"/*.out "$work"/run/logs/* >&2 2>/dev/null || true
  fi
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT

# munge: a fresh key, the daemon as the munge user.
say "starting munged"
mkdir -p "$work/munge" /run/munge /var/log/munge /var/lib/munge /etc/munge
chown munge:munge "$work/munge" /run/munge /var/log/munge /var/lib/munge /etc/munge
[ -f /etc/munge/munge.key ] || mungekey --create --keyfile=/etc/munge/munge.key
chown munge:munge /etc/munge/munge.key
chmod 600 /etc/munge/munge.key
runuser -u munge -- munged --pid-file="$work/munge/munged.pid" --socket=/run/munge/munge.socket.2 \
  --log-file="$work/munge/munged.log" --force
timeout 30 bash -c "until munge -n >/dev/null 2>&1; do sleep 0.2; done"

# One node: this machine, its CPUs and its memory less 1 GiB (a node that
# claims more than it has is marked invalid).
host=$(hostname -s)
cpus=$(nproc)
memory=$(( $(free -m | awk '/^Mem:/ {print $2}') - 1024 ))
mkdir -p "$work/state" "$work/spool"
cat >"$work/slurm.conf" <<EOF
ClusterName=scree
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerParameters=batch_sched_delay=0
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
NodeName=$host CPUs=$cpus RealMemory=$memory State=UNKNOWN
PartitionName=main Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$work/slurm.conf
say "starting slurmctld and slurmd ($host: $cpus CPUs, $memory MiB)"
slurmctld -D -i >"$work/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D >"$work/slurmd.out" 2>&1 &
pids+=($!)
timeout 60 bash -c "until sinfo -h -o %t 2>/dev/null | grep -qx idle; do sleep 0.3; done" ||
  { echo "slurm-test: the node never became idle: $(sinfo -h 2>&1)" >&2; exit 1; }
say "cluster up: $(sinfo -h -o '%P %t %c CPUs')"

# The README's recipe, in a scratch folder, with scree on the PATH.
run=$work/run
mkdir -p "$run"
cp -r scenes textures tools "$run/"
cd "$run"
export PATH=$(dirname "$scree"):$PATH
waitjob() { # job id: waits until it is done; fails unless it COMPLETED
  timeout 300 bash -c "while squeue -h -j $1 2>/dev/null | grep -q .; do sleep 0.3; done" ||
    { echo "slurm-test: job $1 did not finish: $(squeue -j "$1" 2>&1)" >&2; exit 1; }
  local state
  state=$(scontrol show job "$1" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | sort -u | tr '\n' ' ')
  case "$state" in *FAILED*|*CANCELLED*|*TIMEOUT*|*NODE_FAIL*) echo "slurm-test: job $1: $state" >&2; exit 1;; esac
}

# A still as tiles, then the merge.
mkdir -p parts logs
tiles=$(sbatch --parsable --array=0-3 tools/slurm/tiles.sbatch scenes/rocky-valley.json 4 --width 192)
merge=$(sbatch --parsable --dependency=afterok:"$tiles" --kill-on-invalid-dep=yes tools/slurm/merge.sbatch frame.png)
say "submitted tiles $tiles and merge $merge"
waitjob "$tiles"
waitjob "$merge"
[ -f frame.png ] || { echo "slurm-test: the merge wrote no frame.png" >&2; exit 1; }
scree render scenes/rocky-valley.json --width 192 -o direct.png --quiet
cmp frame.png direct.png
say "still: 4 tiles merged by job $merge, byte-identical to a direct render ($(stat -c %s frame.png) bytes)"

# A short sequence as a frame array.
mkdir -p frames
frames=$(sbatch --parsable --array=0-3 tools/slurm/frames.sbatch scenes/flyover.json --width 96)
say "submitted frames $frames"
waitjob "$frames"
mkdir -p local
scree render scenes/flyover.json --width 96 --frames 0..3 -o "local/frame-####.png" --quiet
for k in 0000 0001 0002 0003; do cmp "frames/frame-$k.png" "local/frame-$k.png"; done
say "sequence: frames 0-3 from job array $frames, byte-identical to a local sequence"
say "slurm-test: ok"
