#!/usr/bin/env bash
# Puts the DALI parts this call carries onto the warm GPU machine, under /tmp/stoker-dali, where
# tests/gpu/run.sh reassembles and installs them once all are there (README.md, "DALI"). The
# parts come from `tests/gpu/prepare.sh --dali`; one call carries one or two of them (64 MiB a
# call): carry [".dali/SHA256SUMS", ".dali/PARTS", ".dali/K"].
set -euo pipefail
cd "$(dirname "$0")/../.."
dest=/tmp/stoker-dali
mkdir -p "$dest"
cp .dali/SHA256SUMS .dali/PARTS "$dest/"
for d in .dali/[0-9]*; do
  [ -d "$d" ] && cp "$d"/part* "$dest/"
done
echo "staged: $(find "$dest" -name 'part*' | wc -l) of $(cat "$dest/PARTS") parts"
ls -l "$dest"
