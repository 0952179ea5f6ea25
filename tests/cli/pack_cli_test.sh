#!/usr/bin/env bash
# CLI-level test of `stoker pack / verify / inspect / bench` on packed shards (docs/format.md).
#
#   tests/cli/pack_cli_test.sh path/to/stoker
#
# 1. pack a small synthetic set in every mode; verify passes; inspect shows the record count;
#    bench digests are equal for 1 and 2 threads (and, for `original`, equal to the source
#    folder's).
# 2. crash safety with a real process: SIGKILL `stoker pack` at 3 random points, rerun the same
#    command: it completes, verify passes, and the folder is byte-identical to an
#    uninterrupted pack.
# 3. corruption: a flipped byte, a truncated shard and a deleted shard are each reported,
#    naming the shard (and, for the flipped byte, the record and its byte offset).
# 4. versions: packs written by the version-1 writer (tests/fixtures/packed-v1) verify and
#    give the batch digests the version-1 reader gave; a pack with --fields of a list is
#    version 2 and inspect shows its fields.
#
# Temporary files go under $STOKER_TEST_TMP (else $TMPDIR or /tmp) and are removed at exit.
# Runs in about 10-20 s on a 2-core machine.
set -euo pipefail

if [[ $# -ne 1 ]]; then
  echo "usage: $0 path/to/stoker" >&2
  exit 2
fi
STOKER=$(realpath "$1")
FIXTURES=$(realpath "$(dirname "$0")/../fixtures")
[[ -x $STOKER ]] || { echo "not executable: $STOKER" >&2; exit 2; }

base=${STOKER_TEST_TMP:-${TMPDIR:-/tmp}}
mkdir -p "$base"
T=$(mktemp -d "$base/pack_cli.XXXXXX")
cleanup() {
  local rc=$?
  # Never leave a background pack running.
  if [[ -n ${bg_pid:-} ]]; then kill -KILL "$bg_pid" 2>/dev/null || true; fi
  if [[ $rc -ne 0 && -n ${KEEP_TMP:-} ]]; then
    echo "keeping $T" >&2
  else
    rm -rf "$T"
  fi
}
trap cleanup EXIT
cd "$T"

step() { printf '\n== %s\n' "$*"; }
fail() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
# json_field FIELD: the value of a top-level string or integer FIELD of the JSON line on stdin
# (no python3: a brand-new Debian 12 does not have it).
json_field() {
  grep -Eo "\"$1\":(\"[^\"]*\"|[0-9]+)" | head -1 | sed -E 's/^"[^"]*"://; s/^"(.*)"$/\1/'
}
# u64 FILE OFFSET / u32 FILE OFFSET: little-endian unsigned integers.
u64() { od -An -v --endian=little -t u8 -j "$2" -N 8 "$1" | tr -d ' '; }
u32() { od -An -v --endian=little -t u4 -j "$2" -N 4 "$1" | tr -d ' '; }
# expect_fail LOG CMD...: CMD must exit non-zero; its stdout+stderr go to LOG.
expect_fail() {
  local log=$1
  shift
  if "$@" >"$log" 2>&1; then
    cat "$log" >&2
    fail "expected failure: $*"
  fi
}
# expect_in LOG TEXT...: each TEXT (fixed string) appears in LOG.
expect_in() {
  local log=$1
  shift
  local s
  for s in "$@"; do
    grep -qF -- "$s" "$log" || { cat "$log" >&2; fail "'$s' not in the output of $log"; }
  done
}
# same_tree A B: same file names, byte-identical files.
same_tree() {
  local a=$1 b=$2
  diff <(cd "$a" && ls -A) <(cd "$b" && ls -A) >&2 || fail "$a and $b hold different files"
  local f
  for f in "$a"/*; do
    cmp -s "$f" "$b/$(basename "$f")" || fail "$f differs from $b/$(basename "$f")"
  done
}

t_start=$(now)

# ---------------------------------------------------------------- 1. modes, verify, digests
step "synth + pack in every mode"
"$STOKER" synth small --images 40 --classes 4 --width 160 --height 120 >/dev/null
declare -A MODES=(
  [original]="--mode original"
  [jpeg64]="--mode jpeg --max-side 64"
  [raw64]="--mode raw --max-side 64"
  [rawzstd]="--mode raw --zstd 3"
)
src_digest=$("$STOKER" bench small --batch 16 --threads 1 --digest --json 2>/dev/null | json_field digest)
for name in original jpeg64 raw64 rawzstd; do
  # shellcheck disable=SC2086
  "$STOKER" pack small "p-$name" ${MODES[$name]} --shard-size 64kb >"pack-$name.log" 2>&1 \
    || { cat "pack-$name.log" >&2; fail "pack $name"; }
  [[ -f p-$name/manifest.json && -f p-$name/shard-00000.stk ]] || fail "pack $name: no manifest/shard"
  "$STOKER" verify "p-$name" >"verify-$name.log" 2>&1 || { cat "verify-$name.log" >&2; fail "verify $name"; }
  expect_in "verify-$name.log" "OK"

  records=$("$STOKER" inspect "p-$name" --json | json_field records)
  [[ $records == 40 ]] || fail "inspect --json $name: records = $records, expected 40"
  "$STOKER" inspect "p-$name" >"inspect-$name.log"
  grep -Eq 'records +40 ' "inspect-$name.log" || { cat "inspect-$name.log" >&2; fail "inspect $name: no record count 40"; }

  d1=$("$STOKER" bench "p-$name" --batch 16 --threads 1 --digest --json 2>/dev/null | json_field digest)
  d2=$("$STOKER" bench "p-$name" --batch 16 --threads 2 --digest --json 2>/dev/null | json_field digest)
  [[ -n $d1 && $d1 == "$d2" ]] || fail "bench $name: digest with 1 thread ($d1) != 2 threads ($d2)"
  if [[ $name == original ]]; then
    # original mode stores the source bytes unchanged: the batches equal the folder's.
    [[ $d1 == "$src_digest" ]] || fail "bench original: digest $d1 != source folder's $src_digest"
  fi
  nshards=$(ls "p-$name"/shard-*.stk | wc -l)
  echo "  $name: OK, $nshards shard(s), digest $d1"
done

# --------------------------------------------------------------------------- 2. crash safety
step "crash safety: SIGKILL pack at 3 random points, rerun, compare"
# 200 synthetic images listed 6 times (a file list may repeat a file): 1,200 records, enough
# work (~1.5-2 s on 2 cores) and shards (~400) that a random kill lands mid-pack.
"$STOKER" synth big --images 200 --classes 4 --width 320 --height 240 >/dev/null
for _ in 1 2 3 4 5 6; do
  find big -name '*.jpg' | LC_ALL=C sort | awk -F/ '{ printf "%s\t%d\n", $0, substr($2, 7) }'
done >big.txt
PACK_ARGS=(--mode raw --max-side 256 --zstd 3 --shard-size 400kb --threads 2)

t0=$(now)
"$STOKER" pack big.txt ref "${PACK_ARGS[@]}" >ref.log 2>&1 || { cat ref.log >&2; fail "reference pack"; }
dur=$(elapsed "$t0")
nref=$(ls ref/shard-*.stk | wc -l)
echo "  uninterrupted pack: ${dur} s, $nref shards"
(( nref >= 10 )) || fail "reference pack has only $nref shards; the kill test needs many"
"$STOKER" verify ref >/dev/null 2>&1 || fail "verify ref"

# A rerun over a complete pack reuses everything and rewrites nothing.
cp -a ref ref-again
"$STOKER" pack big.txt ref-again "${PACK_ARGS[@]}" >again.log 2>&1 || { cat again.log >&2; fail "repack"; }
expect_in again.log "already complete" "nothing written"
same_tree ref ref-again
[[ $(stat -c %Y ref-again/manifest.json) == $(stat -c %Y ref/manifest.json) ]] \
  || fail "a pack over a complete identical pack rewrote manifest.json"

# Kill points: one random point in each third of the measured duration (5..95 %).
killed_mid_run=0
for k in 0 1 2; do
  frac=$(awk -v k="$k" -v r="$RANDOM" 'BEGIN { printf "%.3f", 0.05 + 0.30 * k + 0.30 * (r / 32768) }')
  delay=$(awk -v f="$frac" -v d="$dur" 'BEGIN { printf "%.3f", f * d }')
  out=crash-$k
  state="finished before the kill"
  for _ in 1 2 3; do
    rm -rf "$out"
    "$STOKER" pack big.txt "$out" "${PACK_ARGS[@]}" >"$out.killed.log" 2>&1 &
    bg_pid=$!
    sleep "$delay"
    kill -KILL "$bg_pid" 2>/dev/null || true
    st=0
    wait "$bg_pid" 2>/dev/null || st=$?
    bg_pid=
    if (( st == 137 )); then # 128 + SIGKILL: it was still running (a zombie reports 0)
      state="killed"
      killed_mid_run=$((killed_mid_run + 1))
      break
    fi
    (( st == 0 )) || { cat "$out.killed.log" >&2; fail "$out: pack exited with $st before the kill"; }
    delay=$(awk -v d="$delay" 'BEGIN { printf "%.3f", d / 2 }') # it was faster this time
  done
  left=$(find "$out" -maxdepth 1 -name '*.stk' 2>/dev/null | wc -l)
  tmp=$(find "$out" -maxdepth 1 -name '*.tmp' 2>/dev/null | wc -l)
  manifest=no
  if [[ -f $out/manifest.json ]]; then
    manifest=yes
    # Never a manifest beside shards it does not describe.
    "$STOKER" verify "$out" >"$out.verify-killed.log" 2>&1 \
      || { cat "$out.verify-killed.log" >&2; fail "$out: killed pack left a manifest that does not verify"; }
  fi
  "$STOKER" pack big.txt "$out" "${PACK_ARGS[@]}" >"$out.resume.log" 2>&1 \
    || { cat "$out.resume.log" >&2; fail "$out: rerun after the kill failed"; }
  "$STOKER" verify "$out" >"$out.verify.log" 2>&1 \
    || { cat "$out.verify.log" >&2; fail "$out: verify after the resumed pack"; }
  same_tree ref "$out"
  reused=$(grep -Eo '[0-9]+ (complete )?shards( \([0-9]+ samples\))? (kept|reused)' "$out.resume.log" | head -1 || true)
  echo "  kill at ${delay} s (${frac} of ${dur} s): $state; left $left shards, $tmp .tmp, manifest $manifest; rerun: ${reused:-nothing kept}; identical to ref"
done
(( killed_mid_run >= 1 )) || fail "the pack always finished before SIGKILL; nothing was tested"

# ----------------------------------------------------------------------------- 3. corruption
step "corruption: flipped byte, truncated shard, deleted shard"
mid=$(printf 'shard-%05d.stk' $((nref / 2)))

cp -a ref flip
f=flip/$mid
n=$(stat -c %s "$f")
count=$(u64 "$f" $((n - 64)))      # footer: record_count, source_count, index_offset
index_off=$(u64 "$f" $((n - 48)))
pos=$(((64 + index_off) / 2))      # the middle of the record area
rec=-1
for ((j = 0; j < count; j++)); do
  off=$(u64 "$f" $((index_off + 24 * j)))
  len=$(u32 "$f" $((index_off + 24 * j + 8)))
  if ((off <= pos && pos < off + 32 + len)); then rec=$j recoff=$off; break; fi
done
((rec >= 0)) || fail "no record of $f holds byte $pos"
byte=$(od -An -t u1 -j "$pos" -N 1 "$f" | tr -d ' ')
printf "\\x$(printf %02x $((byte ^ 0x5A)))" | dd of="$f" bs=1 seek="$pos" conv=notrunc status=none
expect_fail flip-verify.log "$STOKER" verify flip
expect_in flip-verify.log "flip/$mid" "record $rec " "byte offset"
grep -Eq "byte offset ($recoff|$pos)\b" flip-verify.log \
  || { cat flip-verify.log >&2; fail "verify does not name byte offset $recoff (record $rec) or $pos"; }
echo "  flipped byte $pos of $mid (record $rec at $recoff): $(grep -m1 'FAILED' flip-verify.log)"
expect_fail flip-bench.log "$STOKER" bench flip --threads 1 --batch 32
expect_in flip-bench.log "$mid" "record $rec "
echo "  bench: $(grep -m1 'error' flip-bench.log)"

cp -a ref trunc
size=$(stat -c %s "trunc/$mid")
truncate -s $((size / 2)) "trunc/$mid"
expect_fail trunc-verify.log "$STOKER" verify trunc
expect_in trunc-verify.log "trunc/$mid" "truncated"
echo "  truncated $mid to $((size / 2)) bytes: $(grep -m1 'FAILED' trunc-verify.log)"

cp -a ref del
rm "del/$mid"
expect_fail del-bench.log "$STOKER" bench del --threads 1 --batch 32
expect_in del-bench.log "del/$mid" "missing"
echo "  deleted $mid, bench: $(grep -m1 'error' del-bench.log)"
expect_fail del-verify.log "$STOKER" verify del
expect_in del-verify.log "del/$mid" "missing"

step "format versions: version-1 packs still read; --fields writes version 2"
for pair in jpeg:82ee9bf25acfcf37 raw:888ab15dc5391bb4; do
  v1=$FIXTURES/packed-v1/${pair%%:*}
  "$STOKER" verify "$v1" >v1-verify.log 2>&1 || { cat v1-verify.log >&2; fail "verify $v1"; }
  "$STOKER" inspect "$v1" --json >v1-inspect.json
  [[ $(json_field version <v1-inspect.json) == 1 ]] || fail "$v1 is not version 1"
  got=$("$STOKER" bench "$v1" --batch 2 --threads 1 --size 8 --digest 2>&1 | awk '/digest/ {print $2}')
  [[ $got == "${pair#*:}" ]] || fail "$v1: digest $got, the version-1 reader gave ${pair#*:}"
  echo "  $v1: verify OK, digest $got as before version 2"
done
mkdir -p caps/img
i=0
for f in $(ls small/*/* | head -6); do
  cp "$f" "caps/img/$i.jpg"
  i=$((i + 1))
done
{
  echo "path,caption"
  for k in 0 1 2 3 4 5; do echo "img/$k.jpg,\"picture $k, a caption\""; done
} >caps/list.csv
"$STOKER" pack caps/list.csv caps-pack --fields caption >caps-pack.log 2>&1 \
  || { cat caps-pack.log >&2; fail "pack --fields caption"; }
"$STOKER" verify caps-pack >/dev/null 2>&1 || fail "verify caps-pack"
"$STOKER" inspect caps-pack >caps-inspect.log
expect_in caps-inspect.log "format version 2" "label-free" "caption" "picture 0, a caption"
echo "  $(grep -m1 'caption ' caps-inspect.log | sed 's/^ *//')"

printf '\nPASS pack_cli (%s s)\n' "$(elapsed "$t_start")"
