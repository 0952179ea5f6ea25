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
#
#   tests/gpu/prepare.sh [--dali]
#     also, always: nvJPEG's header and library from the nvidia-nvjpeg wheel (build-gpu-deps/
#       nvjpeg, 6 MB: the GPU decode), and, where Debian's wallpaper packages are installed, 256
#       real photographs (build-gpu-deps/photos, bench/make_photo_set.py: the "folder photos"
#       of the GPU decode targets);
#     --dali: DALI for CUDA 13 and the wheels it needs for Python 3.12, which together are far
#       over one call's 64 MiB: split into parts under .dali/1, .dali/2, ... (git-ignored),
#       each carried by one call of tests/gpu/stage_dali.sh (README.md, "DALI").
set -euo pipefail
cd "$(dirname "$0")/../.."
out=build-gpu-deps
step() { printf '[prepare %s] %s\n' "$(date +%T)" "$*"; }
dali=0
for arg in "$@"; do
  case "$arg" in
    --dali) dali=1 ;;
    *) echo "prepare.sh: unknown argument $arg" >&2; exit 2 ;;
  esac
done
nvjpeg_wheel=nvidia-nvjpeg==13.3.2.43
dali_wheels=(nvidia-dali-cuda130==2.4.0 nvidia-nvimgcodec-cu13==0.9.0.20
  nvidia-libnvcomp-cu13==5.3.0.16 astunparse==1.6.3 gast==0.7.0 optree==0.20.0 nvtx==0.2.17
  makefun==1.16.0 libcst==1.9.0 "$nvjpeg_wheel")
pip_312=(download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp
  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64
  --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64)
python=python3
[ -x .venv/bin/python ] && python=.venv/bin/python

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
step "nvJPEG ($nvjpeg_wheel): header and library into $out/nvjpeg"
tmp=$(mktemp -d)
"$python" -m pip "${pip_312[@]}" -q -d "$tmp" "$nvjpeg_wheel" 2>&1 | { grep -v '^WARNING' || true; }
mkdir -p "$out/nvjpeg"
(cd "$tmp" && unzip -q -o ./*.whl 'nvidia/cu13/*')
cp -a "$tmp"/nvidia/cu13/include "$tmp"/nvidia/cu13/lib "$out/nvjpeg/"
rm -rf "$tmp"

if [ -d /usr/share/backgrounds/mate ] || [ -d /usr/share/wallpapers ]; then
  step "256 photographs (bench/make_photo_set.py) into $out/photos"
  "$python" bench/make_photo_set.py --out "$out/photos" --count 256 >/dev/null
  rm -f "$out/photos/.stamp.json"
else
  step "no wallpaper packages here: no photographs (the GPU run uses synthetic JPEGs only)"
fi

if [ "$dali" = 1 ]; then
  step "DALI and its wheels for Python 3.12, split into parts of 50 MiB under .dali/"
  rm -rf .dali
  mkdir -p .dali/wheels
  "$python" -m pip "${pip_312[@]}" -q -d .dali/wheels "${dali_wheels[@]}" 2>&1 |
    { grep -v '^WARNING' || true; }
  tar -C .dali -cf .dali/dali.tar wheels
  rm -rf .dali/wheels
  split -b 50M -d -a 1 .dali/dali.tar .dali/part
  n=0
  for part in .dali/part*; do
    n=$((n + 1))
    mkdir -p ".dali/$n"
    mv "$part" ".dali/$n/"
  done
  (cd .dali && sha256sum dali.tar > SHA256SUMS && echo "$n" > PARTS && rm dali.tar)
  grep -qx '/.dali/' .git/info/exclude 2>/dev/null || echo '/.dali/' >> .git/info/exclude
  step "DALI: $n parts ($(du -sh .dali | cut -f1)); stage each with one call (README.md)"
fi

# The GPU machine gets the working tree without .git: run.sh reads the commit from here.
git describe --always --dirty 2>/dev/null > "$out/COMMIT" || echo "?" > "$out/COMMIT"
step "done: $(du -sh "$out" | cut -f1) in $out (commit $(cat "$out/COMMIT"))"
find "$libdir" -maxdepth 1 \( -name '*.a' -o -name '*.so*' \) -printf '  %f\n' | sort
# Every .so link must resolve inside the folder (a dangling one would send the build to the
# system's copy, or to none on the GPU machine).
for so in "$libdir"/*.so; do
  [ -e "$so" ] || { echo "prepare.sh: dangling $so" >&2; exit 1; }
done
