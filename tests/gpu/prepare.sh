#!/usr/bin/env bash
# Prepares what tests/gpu/run.sh needs on a GPU machine that has no package access: the Debian
# packages of stoker's build dependencies, downloaded here (`apt-get download`, no root) and
# unpacked (`dpkg -x`) into build-gpu-deps/root (git-ignored), then trimmed:
#   * static libraries only for the C libraries (jpeg, png, zlib, webp, zstd, xxhash): their
#     .so links are removed, so the GPU build links them in and needs nothing at run time;
#   * fmt ships only a shared library (libfmt9), found at run time through the build's RPATH;
#   * header-only CLI11 and nlohmann-json; GoogleTest/GoogleMock static libraries;
#   * pkgconf (+ libpkgconf3), used when the GPU machine has no pkg-config;
#   * .pc files rewritten to be relocatable (prefix=${pcfiledir}/...); docs and man pages
#     removed.
# Prints each step; idempotent (starts from scratch each time). Size: about 20 MB; the device
# tool carries at most 64 MiB. Usage (from the repository root): tests/gpu/prepare.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
out=build-gpu-deps
step() { printf '[prepare %s] %s\n' "$(date +%T)" "$*"; }

packages=(
  libjpeg62-turbo-dev libpng-dev zlib1g-dev libwebp-dev libzstd-dev libxxhash-dev
  libfmt-dev libfmt9 libcli11-dev nlohmann-json3-dev libgtest-dev libgmock-dev
  pkgconf-bin libpkgconf3
)

step "removing the previous $out"
rm -rf "$out"
mkdir -p "$out/debs" "$out/root"

step "apt-get download ${packages[*]}"
(cd "$out/debs" && apt-get download "${packages[@]}")

for deb in "$out"/debs/*.deb; do
  step "dpkg -x $(basename "$deb")"
  dpkg -x "$deb" "$out/root"
done

root=$out/root
libdir=$root/usr/lib/x86_64-linux-gnu
step "static C libraries only: removing their .so links"
for lib in libjpeg libpng libpng16 libz libwebp libwebpdemux libwebpmux libsharpyuv libzstd \
  libxxhash; do
  rm -f "$libdir/$lib.so" "$libdir/$lib".so.*
done

step "relocatable pkg-config files"
for pc in "$libdir"/pkgconfig/*.pc "$root"/usr/share/pkgconfig/*.pc; do
  [ -f "$pc" ] || continue
  case "$pc" in
    */lib/x86_64-linux-gnu/pkgconfig/*) rel='${pcfiledir}/../../..' ;;
    *) rel='${pcfiledir}/../..' ;;
  esac
  sed -i -e "s|^prefix=/usr\$|prefix=$rel|" "$pc"
done

step "removing docs, man pages and the .deb files"
rm -rf "$root/usr/share/doc" "$root/usr/share/man" "$root/usr/share/lintian" "$out/debs"

cat > "$out/README" <<TXT
Made by tests/gpu/prepare.sh on $(date -u +%FT%TZ) from Debian $(cat /etc/debian_version 2>/dev/null || echo '?').
Packages: ${packages[*]}
Carry this folder to the GPU machine (device tool: carry ["build-gpu-deps"]).
TXT
step "done: $(du -sh "$out" | cut -f1) in $out"
find "$libdir" -maxdepth 1 -name '*.a' -printf '  %f\n' | sort
