#!/usr/bin/env bash
# Prepares what tests/gpu/run.sh needs on a GPU machine that has no package access: the Debian
# packages of stoker's build dependencies, downloaded here (`apt-get download`, no root) and
# unpacked (`dpkg -x`) into build-gpu-deps/root (git-ignored), then trimmed:
#   * the shared libraries (with their runtime packages: the Python module is a shared object,
#     and Debian's static libraries are not position-independent), found at run time through
#     the build's RPATH; they need glibc >= 2.34 (Ubuntu 22.04 and newer have it);
#   * header-only CLI11 and nlohmann-json; GoogleTest/GoogleMock static libraries;
#   * pkgconf (+ libpkgconf3), used when the GPU machine has no pkg-config;
#   * .pc files rewritten to be relocatable (prefix=${pcfiledir}/...); docs and man pages
#     removed.
# Prints each step; idempotent (starts from scratch each time). Size: about 10 MB; the device
# tool carries at most 64 MiB. Usage (from the repository root): tests/gpu/prepare.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
out=build-gpu-deps
step() { printf '[prepare %s] %s\n' "$(date +%T)" "$*"; }

packages=(
  libjpeg62-turbo-dev libpng-dev zlib1g-dev libwebp-dev libzstd-dev libxxhash-dev
  libjpeg62-turbo libpng16-16 zlib1g libwebp7 libzstd1 libxxhash0
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
step "runtime libraries of /lib moved beside the others (one RPATH folder)"
if [ -d "$root/lib/x86_64-linux-gnu" ]; then
  cp -a "$root"/lib/x86_64-linux-gnu/. "$libdir"/
  rm -rf "$root/lib"
fi
step "static libraries of the C dependencies removed (unused; the links are shared)"
rm -f "$libdir"/libjpeg.a "$libdir"/libpng*.a "$libdir"/libz.a "$libdir"/libwebp*.a \
  "$libdir"/libzstd.a "$libdir"/libxxhash.a
# stoker links libwebp only; the demux/mux links would dangle (their runtimes are not fetched).
rm -f "$libdir"/libwebpdemux.so "$libdir"/libwebpmux.so

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
# The GPU machine gets the working tree without .git: run.sh reads the commit from here.
git describe --always --dirty 2>/dev/null > "$out/COMMIT" || echo "?" > "$out/COMMIT"
step "done: $(du -sh "$out" | cut -f1) in $out (commit $(cat "$out/COMMIT"))"
find "$libdir" -maxdepth 1 \( -name '*.a' -o -name '*.so*' \) -printf '  %f\n' | sort
# Every .so link must resolve inside the folder (a dangling one would send the build to the
# system's copy, or to none on the GPU machine).
for so in "$libdir"/*.so; do
  [ -e "$so" ] || { echo "prepare.sh: dangling $so" >&2; exit 1; }
done
