#!/usr/bin/env bash
# launch.sh N CMD [ARGS...]: runs N ranks of CMD on this machine, a stand-in for
#   torchrun --standalone --nproc_per_node N CMD [ARGS...]
# (Debian's torchrun does not start under Python 3.11).
#
# Each rank gets the environment torchrun gives it: MASTER_ADDR=127.0.0.1, MASTER_PORT (a free
# port, or $MASTER_PORT when set), RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK=0,
# ROLE_RANK, ROLE_WORLD_SIZE, ROLE_NAME=default, GROUP_WORLD_SIZE=1, and OMP_NUM_THREADS=1 unless
# set (as torchrun does for more than one rank). No TORCHELASTIC_* variable is set. Every line a
# rank writes is prefixed with "[rank R] " (stdout to stdout, stderr to stderr).
#
# As torchrun: the launcher waits for every rank; when one exits non-zero it stops the others
# (SIGTERM, then SIGKILL after LAUNCH_GRACE seconds, default 5) and exits with that rank's
# status. SIGINT and SIGTERM are forwarded to every rank (same escalation); the launcher then
# exits 130 / 143. PYTHONUNBUFFERED=1 is set so that Python ranks' lines come out as written.
set -uo pipefail

usage() {
  echo "usage: $0 NPROC CMD [ARGS...]" >&2
  exit 2
}
[ $# -ge 2 ] || usage
nproc=$1
shift
[[ $nproc =~ ^[1-9][0-9]*$ ]] || usage
grace=${LAUNCH_GRACE:-5}

if [ -z "${MASTER_PORT:-}" ]; then
  # Port 0 lets the kernel pick a free one; it is released at once for rank 0 to bind.
  MASTER_PORT=$(/usr/bin/python3 -c \
    'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])') ||
    {
      echo "launch.sh: could not pick a free port" >&2
      exit 1
    }
fi
export MASTER_ADDR=127.0.0.1 MASTER_PORT
export WORLD_SIZE=$nproc LOCAL_WORLD_SIZE=$nproc GROUP_RANK=0 GROUP_WORLD_SIZE=1
export ROLE_NAME=default ROLE_WORLD_SIZE=$nproc
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} PYTHONUNBUFFERED=1

# Every rank is a job of its own (its own process group), so that a signal reaches the rank and
# whatever it started, and Ctrl-C at the terminal reaches only this launcher, which forwards it.
set -m

# prefix R: copies stdin to stdout with "[rank R] " before each line; immune to INT and TERM so
# that the last lines of a stopping rank still come out (it ends at end of input).
prefix() {
  trap '' INT TERM
  exec sed -u "s/^/[rank $1] /"
}

declare -A rank_of=()  # pid -> rank, for the ranks still running
pids=()
for ((r = 0; r < nproc; r++)); do
  (
    # A trap (not an ignore, which the command would inherit) keeps this subshell alive until
    # the rank itself has ended, so the launcher sees the rank's own exit status.
    trap : INT TERM
    export RANK=$r LOCAL_RANK=$r ROLE_RANK=$r
    { "$@" 2>&1 1>&3 3>&- | prefix "$r" >&2; } 3>&1 | prefix "$r"
  ) &
  rank_of[$!]=$r
  pids+=("$!")
done

running() {
  local p
  for p in "${!rank_of[@]}"; do kill -0 "$p" 2>/dev/null && return 0; done
  return 1
}

# stop SIG: sends SIG to every running rank's process group, waits up to $grace seconds for
# them to end, then SIGKILLs what is left. Reaps them all.
stop() {
  local sig=$1 p ticks=0
  for p in "${!rank_of[@]}"; do kill "-$sig" -- "-$p" 2>/dev/null; done
  while running && [ $ticks -lt $((grace * 10)) ]; do
    sleep 0.1
    ticks=$((ticks + 1))
  done
  if running; then
    echo "launch.sh: ranks still running after ${grace}s, sending SIGKILL" >&2
    for p in "${!rank_of[@]}"; do kill -KILL -- "-$p" 2>/dev/null; done
  fi
  for p in "${!rank_of[@]}"; do wait "$p" 2>/dev/null; done
  rank_of=()
}

# shellcheck disable=SC2317  # called through trap
on_signal() {
  trap '' INT TERM  # a second Ctrl-C does not interrupt the stopping
  echo "launch.sh: got SIG$1, forwarding it to the ranks" >&2
  stop "$1"
  exit "$2"
}
trap 'on_signal INT 130' INT
trap 'on_signal TERM 143' TERM

status=0
while [ ${#rank_of[@]} -gt 0 ]; do
  done_pid=
  wait -n -p done_pid "${!rank_of[@]}"
  rc=$?
  [ -n "$done_pid" ] || continue  # interrupted by a signal whose trap returned
  r=${rank_of[$done_pid]}
  unset "rank_of[$done_pid]"
  if [ "$rc" -ne 0 ]; then
    echo "launch.sh: rank $r (pid $done_pid) exited with status $rc; stopping the other ranks" >&2
    stop TERM
    status=$rc
    break
  fi
done
exit "$status"
