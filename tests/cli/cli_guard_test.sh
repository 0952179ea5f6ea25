#!/usr/bin/env bash
# The command refuses to destroy and says what it wants (issue 16, deliverable 6):
#
#   tests/cli/cli_guard_test.sh path/to/stoker
#
# 1. `pack` into an OUT holding a finished pack made with other options (or from another
#    source) fails naming both and --force; the old pack is intact (verify passes, same
#    manifest); with --force it is replaced; the same options again: "already complete".
# 2. `pack --mode raw` without a size warns with the size it will write.
# 3. range errors read "--batch must be ≥ 1 (got 0)", "--quality must be in [1, 100] (got 101)".
# 4. --help shows ranges, enum values and defaults plainly.
# 5. `bench` on a set smaller than two batches says the rate is not measured (JSON: null).
# 6. a file named with a newline and an ANSI escape cannot forge a warning line or repaint the
#    terminal: warnings print it as \n and \x1b (issue 18).
# 7. the storage flags reach the config and its checks; a STOKER_* variable is only their
#    default, and a malformed one fails naming it (issue 28).
set -euo pipefail

STOKER=$(realpath "$1")
base=${STOKER_TEST_TMP:-${TMPDIR:-/tmp}}
mkdir -p "$base"
T=$(mktemp -d "$base/cli_guard.XXXXXX")
trap 'rm -rf "$T"' EXIT
cd "$T"

fail() { echo "FAIL: $*" >&2; exit 1; }
expect_in() {  # expect_in FILE TEXT
  grep -qF -- "$2" "$1" || { echo "--- $1:" >&2; cat "$1" >&2; fail "expected '$2' in $1"; }
}

"$STOKER" synth src --images 40 --classes 2 --width 64 --height 48 >/dev/null
"$STOKER" synth other --images 30 --classes 2 --width 64 --height 48 --seed 9 >/dev/null

# 1. a finished pack is not replaced by another one unless asked
"$STOKER" pack src out --mode jpeg --max-side 32 >/dev/null 2>&1
cp out/manifest.json manifest.before
if "$STOKER" pack src out --mode raw --max-side 24 >raw.out 2>raw.err; then
  fail "pack over a finished pack with other options succeeded"
fi
expect_in raw.err "holds a finished pack of src made with other options"
expect_in raw.err "--force"
cmp -s out/manifest.json manifest.before || fail "the refused pack changed the manifest"
"$STOKER" verify out >/dev/null 2>&1
if "$STOKER" pack other out --mode jpeg --max-side 32 >/dev/null 2>other.err; then
  fail "pack of another source over a finished pack succeeded"
fi
expect_in other.err "--force"
"$STOKER" pack src out --mode raw --max-side 24 --force >/dev/null 2>&1
"$STOKER" verify out >/dev/null 2>&1
"$STOKER" inspect out --json | grep -q '"mode":"raw"' || fail "--force did not replace the pack"
"$STOKER" pack src out --mode raw --max-side 24 >again.out 2>&1
expect_in again.out "already complete"

# 2. raw without a size: a warning with the size
"$STOKER" pack src raw-full --mode raw >/dev/null 2>rawfull.err
expect_in rawfull.err "warning: --mode raw without --max-side or --short-side"
expect_in rawfull.err "for 40 images"

# 3. range errors as sentences
if "$STOKER" bench src --batch 0 >/dev/null 2>batch.err; then fail "--batch 0 accepted"; fi
expect_in batch.err "stoker: --batch must be ≥ 1 (got 0)"
if "$STOKER" pack src q --mode jpeg --quality 101 >/dev/null 2>quality.err; then
  fail "--quality 101 accepted"
fi
expect_in quality.err "--quality must be in [1, 100] (got 101)"
if "$STOKER" bench src --threads x >/dev/null 2>threads.err; then fail "--threads x accepted"; fi
grep -q "threads" threads.err || fail "no message naming --threads"

# 4. --help: ranges, enums and defaults
"$STOKER" bench --help >bench.help
expect_in bench.help "--batch INT >= 1 [default: 256]"
expect_in bench.help "--transform {train,eval} [default: train]"
expect_in bench.help "--threads INT >= 0 "  # its description states its default
"$STOKER" pack --help >pack.help
expect_in pack.help "--quality INT in [1, 100] [default: 90]"
expect_in pack.help "--mode {original,jpeg,raw} [default: original]"
if grep -q "179769313486231570814527423731704356798070567525844996598917476803157260780028538760589558632766878171540458953514382464234321326889464182768467546703537516986049910576551282076245490090389328944075868508455133942304583236903222948165808559332123348274797826204144723168738177180919299881250404026184124858368" bench.help pack.help batch.err; then
  fail "CLI11's raw range in the output"
fi

# 5. bench on too small a set
"$STOKER" bench src --batch 64 >small.out 2>&1
expect_in small.out "images/s: not measured: the run delivered 1 batch(es)"
"$STOKER" bench src --batch 64 --json >small.json 2>/dev/null
expect_in small.json '"images_per_second":null'
"$STOKER" bench src --batch 8 >ok.out 2>&1
grep -Eq "^  [0-9]+ images/s" ok.out || fail "a measurable run gave no rate"

# 6. names from the data are printed escaped
mkdir -p evil/class_a
cp src/class_00/img_00000.jpg evil/class_a/good.jpg
printf 'not an image' > "evil/class_a/x"$'\n'"stoker warning: forged"$'\e'"[2J.jpg"
"$STOKER" bench evil --batch 1 --bad-samples skip >evil.out 2>evil.err
expect_in evil.err 'x\nstoker warning: forged\x1b[2J.jpg: not a JPEG, PNG or WebP image'
if grep -q "^stoker warning: forged" evil.err || grep -q $'\e' evil.err; then
  fail "a file name forged a line or an escape"
fi
# 7. storage flags and their environment defaults
if "$STOKER" bench src --batch 8 --io-attempts 0 >/dev/null 2>attempts.err; then
  fail "--io-attempts 0 accepted"
fi
expect_in attempts.err "io retries: attempts must be in [1, 100] (got 0)"
if "$STOKER" bench src --batch 8 --close-timeout -1 >/dev/null 2>close.err; then
  fail "--close-timeout -1 accepted"
fi
expect_in close.err "close_timeout_seconds must be in [0, 86400] (got -1)"
if STOKER_CLOSE_TIMEOUT=1O "$STOKER" bench src --batch 8 >/dev/null 2>env.err; then
  fail "STOKER_CLOSE_TIMEOUT=1O accepted"
fi
expect_in env.err "STOKER_CLOSE_TIMEOUT=1O: expected a number in [0, 86400]"
if STOKER_PACKED_IO=pread2 "$STOKER" bench out --batch 8 >/dev/null 2>packed.err; then
  fail "STOKER_PACKED_IO=pread2 accepted"
fi
expect_in packed.err "STOKER_PACKED_IO=pread2: expected mmap or pread"
mapped=$("$STOKER" bench out --batch 8 --digest --json 2>/dev/null)
pread=$("$STOKER" bench out --batch 8 --digest --json --packed-io pread 2>/dev/null)
[ "$(echo "$mapped" | grep -o '"digest":"[0-9a-f]*"')" = \
  "$(echo "$pread" | grep -o '"digest":"[0-9a-f]*"')" ] || fail "--packed-io pread changed the batches"
# bench's stats lines through the one writer: --stats-file at --stats-interval, the last at the end
"$STOKER" bench src --batch 8 --stats --stats-file stats.jsonl --stats-interval 0 \
  --no-measure-fixes >/dev/null 2>&1
[ "$(grep -c '"stoker_stats":1' stats.jsonl)" -ge 5 ] || fail "fewer stats lines than batches"
tail -n 1 stats.jsonl | grep -q '"images":40' || fail "the last stats line is not the end's"
echo "cli_guard: OK"
