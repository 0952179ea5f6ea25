#!/usr/bin/env bash
# Thousands of shards under a descriptor limit (issue 18): a dataset must not hold one open
# file per shard. Under `ulimit -n 32`, 150 packed shards (mapped: the descriptor is closed
# once a shard is mapped) and 300 WebDataset tar shards written by GNU tar (opened per read)
# are read whole, with the same batch digest as the folder they came from.
#
#   tests/cli/fd_limit_test.sh path/to/stoker
set -euo pipefail

STOKER=$(realpath "$1")
base=${STOKER_TEST_TMP:-${TMPDIR:-/tmp}}
mkdir -p "$base"
T=$(mktemp -d "$base/fd_limit.XXXXXX")
trap 'rm -rf "$T"' EXIT
cd "$T"
export STOKER_CACHE_DIR=$T/cache

fail() { echo "FAIL: $*" >&2; exit 1; }
digest() { grep -Eo 'digest [0-9a-f]{16}' "$1" || { cat "$1" >&2; fail "no digest in $1"; }; }

"$STOKER" synth src --images 300 --classes 3 --width 40 --height 30 >/dev/null
# Packed: a shard per ~2 records (the smallest shard size that holds one).
"$STOKER" pack src packed --mode jpeg --max-side 32 --shard-size 4kb >/dev/null 2>&1
shards=$(ls packed/*.stk | wc -l)
[ "$shards" -ge 64 ] || fail "only $shards packed shards"
# WebDataset: one GNU tar per sample, in the folder's order (classes sorted, then paths).
i=0
for f in $(cd src && ls -d */* | sort); do
  label=${f%%/*}; label=$((10#${label#class_}))
  mkdir -p "w/$i" && cp "src/$f" "w/$i/$(printf %06d $i).jpg" && echo "$label" >"w/$i/$(printf %06d $i).cls"
  tar -C "w/$i" -cf "$(printf 'shard-%06d.tar' $i)" "$(printf %06d $i).jpg" "$(printf %06d $i).cls"
  i=$((i + 1))
done

"$STOKER" bench src --batch 10 --transform eval --size 16 --digest >src.out 2>&1
"$STOKER" bench packed --batch 10 --transform eval --size 16 --digest >packed0.out 2>&1
# The packed pixels differ from the folder's (re-encoded at 32 px): compared with themselves.
( ulimit -n 32; "$STOKER" bench packed --batch 10 --transform eval --size 16 --digest ) \
  >packed.out 2>&1 || { cat packed.out >&2; fail "packed shards under ulimit -n 32"; }
[ "$(digest packed.out)" = "$(digest packed0.out)" ] || fail "packed digest changed"
( ulimit -n 32; "$STOKER" bench 'shard-{000000..000299}.tar' --batch 10 --transform eval \
  --size 16 --digest ) >wds.out 2>&1 || { cat wds.out >&2; fail "tar shards under ulimit -n 32"; }
[ "$(digest wds.out)" = "$(digest src.out)" ] || fail "tar shards differ from the folder"
echo "fd_limit: OK ($shards packed shards, 300 tar shards, ulimit -n 32)"
