#!/usr/bin/env bash
# wheel-bare-root.sh WHEEL SDIST: the portable wheel (./run.sh wheel) where nothing of stoker's
# was ever installed. In a brand-new minimal Debian 12 root (tests/fresh-root.sh) that gets only
# Python (python3, python3-venv) and then the wheel:
#   - none of stoker's build or runtime libraries is in the root (no lib*-dev, no libjpeg,
#     libpng, libwebp, libcurl, fmt; zstd, xxhash and OpenSSL are there for apt and python3);
#   - ldd of the module and the command: glibc's own libraries (libc, libm, libpthread, libdl,
#     librt, libresolv, ld-linux) and libgcc_s from the system, everything else from the
#     wheel's own stoker.libs/ (libstdc++ and the CUDA runtime are linked in, zlib vendored);
#   - the loader over folder JPEGs, PNGs and WebPs, a pack made there with the wheel's
#     `stoker pack`, and WebDataset shards over HTTP from an nginx on this machine's loopback:
#     every sample once, and the batch digests equal to this build's on the same data;
#   - then, with a compiler and CMake but no -dev package, `pip install SDIST` stops with the one
#     message naming the packages to install (cmake/dependencies.cmake), not a CMake trace.
# Run as root (a chroot); STOKER (this build's command) and HOST_PYTHON (a Python with Pillow)
# make the data and the expected digests. About 3-5 minutes (apt-get and pip in the root).
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 WHEEL SDIST" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "wheel-bare-root.sh: run as root" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
wheel=$(realpath "$1")
sdist=$(realpath "$2")
: "${STOKER:?the stoker command of this build}" "${HOST_PYTHON:?a Python with Pillow}"

T=$(mktemp -d /tmp/wheel-bare-root.XXXXXX)
chmod 755 "$T"
nginx_pid=""
cleanup() {
  [ -n "$nginx_pid" ] && kill "$nginx_pid" 2>/dev/null || true
  rm -rf "$T"
}
trap cleanup EXIT
cp "$wheel" "$sdist" "$T/"

# The data: JPEGs (stoker synth), the same pictures as PNG and WebP, and WebDataset shards of
# them (key.jpg + key.cls) served by nginx.
"$STOKER" synth "$T/data/jpeg" --images 24 --classes 3 --width 64 --height 48 >/dev/null
"$HOST_PYTHON" - "$T" <<'EOF'
import io, pathlib, sys, tarfile
from PIL import Image
root = pathlib.Path(sys.argv[1])
for ext, fmt in (("png", "PNG"), ("webp", "WEBP")):
    for src in sorted((root / "data" / "jpeg").glob("*/*.jpg")):
        out = root / "data" / "mixed" / src.parent.name / f"{src.stem}.{ext}"
        out.parent.mkdir(parents=True, exist_ok=True)
        Image.open(src).save(out, fmt, **({"lossless": True} if fmt == "WEBP" else {}))
for src in sorted((root / "data" / "jpeg").glob("*/*.jpg")):
    out = root / "data" / "mixed" / src.parent.name / src.name
    out.write_bytes(src.read_bytes())
www = root / "www"
www.mkdir()
photos = sorted((root / "data" / "jpeg").glob("*/*.jpg"))
for shard in range(2):
    with tarfile.open(www / f"shard-{shard}.tar", "w", format=tarfile.USTAR_FORMAT) as tar:
        for k, src in enumerate(photos[shard::2]):
            for name, data in ((f"s{shard}_{k:03d}.jpg", src.read_bytes()),
                               (f"s{shard}_{k:03d}.cls", src.parent.name[-1].encode())):
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
EOF
port=$("$HOST_PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$T/nginx"
cat >"$T/nginx/nginx.conf" <<EOF
daemon off;
pid $T/nginx/nginx.pid;
error_log $T/nginx/error.log;
events {}
http {
  access_log off;
  client_body_temp_path $T/nginx; proxy_temp_path $T/nginx; fastcgi_temp_path $T/nginx;
  uwsgi_temp_path $T/nginx; scgi_temp_path $T/nginx;
  server { listen 127.0.0.1:$port; root $T/www; }
}
EOF
/usr/sbin/nginx -c "$T/nginx/nginx.conf" &
nginx_pid=$!
url="http://127.0.0.1:$port/shard-{0..1}.tar"

digest() { "$STOKER" bench "$@" --batch 8 --threads 2 --size 32 --digest 2>&1 | awk '/digest/ {print $2}'; }
want_mixed=$(digest "$T/data/mixed")
want_http=$(digest "$url")
[ -n "$want_mixed" ] && [ -n "$want_http" ] || { echo "FAIL: no digest from this build" >&2; exit 1; }

cat >"$T/inside.sh" <<EOF
set -euo pipefail
fail() { echo "FAIL: \$*" >&2; exit 1; }
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends python3 python3-venv >/dev/null
echo "bare root: \$(. /etc/os-release; echo \$PRETTY_NAME), python3 only"
# (apt needs libzstd1 and libxxhash0, python3 libssl3, so the root has them: ldd below shows the
# wheel uses its own copies.)
found=\$(dpkg-query -W -f='\${Package}\n' | grep -E -- '-dev$|^lib(jpeg|png|webp|curl|fmt|nghttp)' || true)
[ -z "\$found" ] || fail "stoker's libraries in the bare root: \$found"
python3 -m venv /opt/venv
/opt/venv/bin/pip install -q "$T/$(basename "$wheel")" 2>&1 | grep -v "^WARNING: Location" || true
site=\$(/opt/venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
# (auditwheel moves the command's binary to stoker.scripts/, bin/stoker being a launcher.)
for f in "\$site"/stoker/_stoker*.so "\$site"/stoker.scripts/stoker; do
  ldd "\$f" >/tmp/ldd.txt
  ! grep -q "not found" /tmp/ldd.txt || { cat /tmp/ldd.txt; fail "\$f: a library is missing"; }
  outside=\$(awk '\$3 ~ /^\// {print \$3} \$1 ~ /^\// {print \$1}' /tmp/ldd.txt |
    xargs -r realpath -m | grep -v "^\$site/stoker.libs/" |
    grep -Ev '/(libc|libm|libpthread|libdl|librt|libresolv|ld-linux-x86-64|libgcc_s)\.so' || true)
  [ -z "\$outside" ] || { cat /tmp/ldd.txt; fail "\$f links outside the wheel: \$outside"; }
  echo "ldd \$(basename "\$f"): \$(grep -c "stoker.libs/" /tmp/ldd.txt) from the wheel, the rest glibc and libgcc_s"
done
export PATH=/opt/venv/bin:\$PATH
got=\$(stoker bench "$T/data/mixed" --batch 8 --threads 2 --size 32 --digest 2>&1 | awk '/digest/ {print \$2}')
[ "\$got" = "$want_mixed" ] || fail "folder of JPEG/PNG/WebP: digest \$got, this build gives $want_mixed"
stoker pack "$T/data/mixed" /tmp/packed --mode jpeg --max-side 48 >/dev/null 2>&1 || fail "stoker pack"
stoker verify /tmp/packed >/dev/null 2>&1 || fail "stoker verify"
got=\$(stoker bench "$url" --batch 8 --threads 2 --size 32 --digest 2>&1 | awk '/digest/ {print \$2}')
[ "\$got" = "$want_http" ] || fail "WebDataset over HTTP: digest \$got, this build gives $want_http"
/opt/venv/bin/python - <<'PY'
import stoker
for source, n in (("$T/data/mixed", 72), ("/tmp/packed", 72), ("$url", 24)):
    seen = []
    with stoker.Loader(source, 8, size=32, threads=2, shuffle=True) as loader:
        for b in loader:
            seen += [int(i) for i, v in zip(b.indices, b.valid) if v]
    assert sorted(seen) == list(range(n)), (source, len(seen))
    print(f"loader: {source}: each of {n} samples once")
PY
echo "the sdist where a compiler and CMake are, but no -dev package:"
apt-get install -y -qq --no-install-recommends g++ make cmake ninja-build python3-dev >/dev/null
set +e
/opt/venv/bin/pip install "$T/$(basename "$sdist")" >/tmp/sdist.log 2>&1
rc=\$?
set -e
[ \$rc -ne 0 ] || fail "the sdist built without the -dev packages?"
grep -q "these libraries (with their development files) are missing" /tmp/sdist.log ||
  { tail -40 /tmp/sdist.log; fail "no message naming the missing libraries"; }
grep -q "sudo apt-get install .*libjpeg-dev" /tmp/sdist.log || fail "the message lacks the Debian packages"
grep -A1 "these libraries" /tmp/sdist.log | head -2
echo "PASS wheel-bare-root"
EOF
FRESH_ROOT_BIND=$T "$here/fresh-root.sh" "$here/.." "bash $T/inside.sh"
