#!/usr/bin/env bash
# fresh-root.sh [REPO] [CMD]: runs CMD (default ./run.sh test) on a clone of REPO's committed
# HEAD inside a brand-new minimal Debian 12 root, as a new user's machine would: nothing there
# but debootstrap's minbase, so every dependency must come from the repo's own scripts.
#
# It does what a bare debootstrap check does, plus what such a check leaves out of this machine's
# package set-up (it fails every pip call in the new root):
#   - pip's configuration *and the files it names* (/etc/xdg/pip/constraints.txt: fresh-check
#     copies pip.conf only, so pip stops with "Could not open requirements file");
#   - the local package indexes of pip's configuration (file:// extra-index-url folders, here
#     /opt/pypi and /opt/pypi-more) besides the find-links folders, bound read-only;
#   - /dev/shm (a plain bind of /dev does not bring the tmpfs mounted on it: --rbind here);
#   - /etc/hosts, which every installed Debian has (localhost, and the host name on 127.0.1.1)
#     and debootstrap's minbase lacks: without it neither resolves, and torchrun --standalone
#     (which rendezvouses on localhost and hands the ranks the host name) never starts a job.
# FRESH_ROOT_BIND=DIR (optional): DIR bound read-only at the same path inside the root (what a
# test hands in: tests/wheel-bare-root.sh's wheel, data and script).
# Run as root. The minimal root is cached in /var/cache/stoker-fresh (shared with fresh-check);
# the new root itself is removed afterwards.
set -euo pipefail
repo=$(cd "${1:-.}" && git rev-parse --show-toplevel)
cmd=${2:-./run.sh test}
[ "$(id -u)" -eq 0 ] || { echo "fresh-root.sh: run as root" >&2; exit 2; }

cache=/var/cache/stoker-fresh
mkdir -p "$cache"
if [ ! -s "$cache/bookworm-minbase.tar" ]; then
  command -v debootstrap >/dev/null || { apt-get update -qq && apt-get install -y -qq debootstrap; }
  mirror=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources)
  rm -rf "$cache/root.tmp"
  debootstrap --variant=minbase bookworm "$cache/root.tmp" "$mirror" >"$cache/debootstrap.log"
  tar -C "$cache/root.tmp" -cf "$cache/bookworm-minbase.tar" .
  rm -rf --one-file-system "$cache/root.tmp"
fi

root=$(mktemp -d /tmp/fresh-root.XXXXXX)
mounts=()
cleanup() {
  local i
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -R -l "${mounts[$i]}" 2>/dev/null || true; done
  # And what the tests mounted inside (`ip netns add` binds /run/netns onto itself): left
  # mounted, the root could not be removed and every run would keep its gigabytes.
  local m
  for m in $(awk -v r="$root/" 'index($2, r) == 1 {print $2}' /proc/mounts | sort -r); do
    umount -l "$m" 2>/dev/null || true
  done
  if ! grep -q " $root/" /proc/mounts; then rm -rf --one-file-system "$root"; fi
}
trap cleanup EXIT
# bind SRC [OPTIONS]: SRC at the same path inside the new root.
bind() {
  mkdir -p "$root$1"
  mount --bind "$1" "$root$1"
  mounts+=("$root$1")
  if [ "${2:-}" = ro ]; then mount -o remount,bind,ro "$root$1"; fi
}

tar -C "$root" -xf "$cache/bookworm-minbase.tar"
[ -s "$root/etc/hosts" ] ||
  printf '127.0.0.1\tlocalhost\n127.0.1.1\t%s\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' \
    "$(hostname)" >"$root/etc/hosts"
# apt: this machine's sources and settings.
rm -f "$root/etc/apt/sources.list"
cp /etc/apt/sources.list.d/*.sources "$root/etc/apt/sources.list.d/" 2>/dev/null || true
cp /etc/apt/sources.list "$root/etc/apt/" 2>/dev/null || true
cp /etc/apt/apt.conf.d/99* "$root/etc/apt/apt.conf.d/" 2>/dev/null || true
# pip: every configuration file with the files it names, and the local indexes.
pip_configs=()
for f in /etc/pip.conf /etc/xdg/pip/pip.conf; do [ -f "$f" ] && pip_configs+=("$f"); done
for f in "${pip_configs[@]}"; do
  mkdir -p "$root$(dirname "$f")"
  cp "$f" "$root$f"
done
[ -d /etc/xdg/pip ] && cp -r /etc/xdg/pip/. "$root/etc/xdg/pip/"
named=$(cat "${pip_configs[@]}" /dev/null | sed -n 's/^[[:space:]]*constraint[[:space:]]*=[[:space:]]*//p')
for f in $named; do
  [ -f "$f" ] && { mkdir -p "$root$(dirname "$f")"; cp "$f" "$root$f"; }
done
indexes=$( (cat "${pip_configs[@]}" /dev/null; printf '%s\n' "${PIP_EXTRA_INDEX_URL:-}" \
  "${PIP_FIND_LINKS:-}") | grep -o 'file://[^ ]*\|/opt/[^ ]*' | sed 's|^file://||' |
  sed 's|/simple/*$||' | sort -u)
for d in $indexes /opt/wheels; do
  [ -d "$d" ] && bind "$d" ro
done
mkdir -p "$root/etc/ssl/certs" "$root/usr/local/share/ca-certificates"
cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/" 2>/dev/null || true
cp -r /usr/local/share/ca-certificates/. "$root/usr/local/share/ca-certificates/" 2>/dev/null || true

pass_env=()
while IFS='=' read -r name _; do
  case "$name" in PIP_* | *_CA_BUNDLE | *CA_CERTS* | SSL_CERT_* | *_proxy | *_PROXY) pass_env+=("$name=${!name}") ;; esac
done < <(env)

[ -n "${FRESH_ROOT_BIND:-}" ] && bind "$FRESH_ROOT_BIND" ro
git clone -q "$repo" "$root/work/project"
[ -d "$repo/../shared" ] && cp -r "$repo/../shared" "$root/work/shared"
mkdir -p "$root/proc" "$root/sys" "$root/dev"
mount -t proc proc "$root/proc" && mounts+=("$root/proc")
mount -t sysfs sys "$root/sys" && mounts+=("$root/sys")
# /dev with what is mounted below it (pts, shm), as a slave: nothing propagates back.
mount --rbind /dev "$root/dev" && mount --make-rslave "$root/dev" && mounts+=("$root/dev")

echo "fresh-root: running '$cmd' in a new Debian root (clone of $(git -C "$repo" rev-parse --short HEAD))"
set +e
chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb CI=true LANG=C.UTF-8 "${pass_env[@]}" \
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  bash -c "cd /work/project && $cmd"
rc=$?
echo "fresh-root: exit status $rc"
exit $rc
