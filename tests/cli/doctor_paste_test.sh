#!/usr/bin/env bash
# `stoker doctor -` on a whole pasted GitHub comment — prose, two logs of one job at different
# scale and an nvidia-smi table — says what `stoker doctor --telemetry` says of the same logs
# given as files (issue 29):
#
#   tests/cli/doctor_paste_test.sh path/to/stoker path/to/tests/fixtures/pasted
set -euo pipefail

STOKER=$(realpath "$1")
PASTED=$(realpath "$2")
base=${STOKER_TEST_TMP:-${TMPDIR:-/tmp}}
mkdir -p "$base"
T=$(mktemp -d "$base/doctor_paste.XXXXXX")
trap 'rm -rf "$T"' EXIT
cd "$T"

fail() { echo "FAIL: $*" >&2; exit 1; }
verdict() { python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["verdict"], round(j["numbers"]["scaling"]["efficiency"], 3) if "scaling" in j["numbers"] else "-")'; }

# Two real runs of tf_cnn_benchmarks (tensorflow#23032): 1 GPU, then 2 GPUs, each a file.
log=$PASTED/tfbench_tensorflow23032-synthetic-1-vs-2-gpu.txt
split=$(grep -n '^2 gpus' "$log" | cut -d: -f1)
head -n $((split - 1)) "$log" | tail -n +4 > one-gpu.log
tail -n +"$split" "$log" > two-gpus.log
grep -q '^ 1 gpu' one-gpu.log || fail "one-gpu.log has no heading"
table=$PASTED/nvidia-smi_caffe842-gtx1080x2-384-unbalanced-memory.txt

apart=$("$STOKER" doctor --telemetry one-gpu.log two-gpus.log "$table" --json | verdict)

{
  echo "Thanks! I tried the benchmark with synthetic data, it works pretty well."
  echo
  echo '```'
  cat one-gpu.log
  echo '```'
  echo "and on both cards:"
  echo '```'
  cat two-gpus.log
  echo '```'
  echo "This is nvidia-smi while it runs:"
  echo
  cat "$table"
  echo
  echo "Any idea why my own training does not scale like this?"
} > comment.md
pasted=$("$STOKER" doctor - --json < comment.md | verdict)

[ "$apart" = "$pasted" ] || fail "files: '$apart', pasted comment: '$pasted'"
case $apart in
  "healthy 0.95"*|"healthy 0.94"*) ;;
  *) fail "expected healthy at ~95 % efficiency, got '$apart'" ;;
esac
# The plain-text form says the same.
"$STOKER" doctor - < comment.md > text.out
grep -q "^verdict: healthy" text.out || { cat text.out >&2; fail "text verdict"; }
grep -q "1 -> 2 GPUs" text.out || { cat text.out >&2; fail "text names the runs"; }
echo "doctor_paste: files and pasted comment agree: $apart"

# A comment with a pasted blob (a base64 line of 60,000 bytes: it crashed the regex reader from
# ~47 KB on, SIGSEGV, issue 30) reads as the comment without it: the blob passed over.
{
  head -c 45000 /dev/urandom | base64 -w 0
  echo
  cat comment.md
} > with-blob.md
blob=$("$STOKER" doctor - --json < with-blob.md | verdict)
[ "$blob" = "$pasted" ] || fail "with a pasted blob: '$blob', without: '$pasted'"
# A paste of nothing but a 10 MB line is a clear error (exit 1), not a crash.
set +e
head -c $((10 << 20)) /dev/zero | tr '\0' a | "$STOKER" doctor - > blob.out 2> blob.err
status=$?
set -e
[ "$status" = 1 ] || { cat blob.err >&2; fail "a 10 MB line: exit $status"; }
grep -q "1 line over 16 KiB was not read" blob.err || { cat blob.err >&2; fail "the error"; }
echo "doctor_paste: a 60 KB blob is passed over, a 10 MB line is a clear error"
