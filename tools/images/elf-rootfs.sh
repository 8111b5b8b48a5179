#!/usr/bin/env bash
# Fills a root filesystem with one dynamically linked program and exactly what it needs to run: a stripped
# copy of the binary, every shared object it loads (the program interpreter included) at the path the loader
# looks for it, /etc/passwd and /etc/group naming the non-root user 65532 ("nonroot", the uid distroless
# images use) and an empty /tmp for an emptyDir. No shell, package manager or compiler: the image's root
# filesystem can be mounted read-only. Used by tools/images/build-*.sh and by deploy/images/Dockerfile.
#
# Usage: tools/images/elf-rootfs.sh BINARY PATH-IN-IMAGE ROOTFS
#        tools/images/elf-rootfs.sh --closure BINARY     (prints the shared objects it loads, sorted)
#        tools/images/elf-rootfs.sh --user-only ROOTFS   (only /etc/passwd and /etc/group)
set -euo pipefail
die() { echo "elf-rootfs: $*" >&2; exit 1; }
for tool in ldd objcopy; do command -v "$tool" > /dev/null || die "$tool is missing (binutils, libc-bin)"; done

# closure <binary>: "libx.so.1 => /lib/.../libx.so.1 (0x...)" lines and the interpreter's
# "/lib64/ld-linux-x86-64.so.2 (0x...)"; the vDSO has no file.
closure() {
  local listing
  # ldd fails on a static binary too, saying so.
  if ! listing=$(ldd "$1" 2>&1); then
    grep -q 'not a dynamic executable' <<< "$listing" && die "$1 is not dynamically linked (copy it alone)"
    die "ldd cannot read $1: $listing"
  fi
  ! grep -q 'not found' <<< "$listing" || die "$1 needs libraries this machine lacks: $(grep 'not found' <<< "$listing" | tr -s ' \t' ' ')"
  sed -n 's/^[[:space:]]*[^ ]* => \(\/[^ ]*\) (0x[0-9a-f]*)$/\1/p; s/^[[:space:]]*\(\/[^ ]*\) (0x[0-9a-f]*)$/\1/p' \
    <<< "$listing" | sort -u
}

user_files() {
  mkdir -p "$1/etc"
  printf '%s\n' 'root:x:0:0:root:/root:/sbin/nologin' 'nonroot:x:65532:65532:nonroot:/nonexistent:/sbin/nologin' \
    > "$1/etc/passwd"
  printf '%s\n' 'root:x:0:' 'nonroot:x:65532:' > "$1/etc/group"
}

case ${1:-} in
  --closure) [[ $# == 2 ]] || die "--closure takes one binary"; closure "$2"; exit 0 ;;
  --user-only) [[ $# == 2 ]] || die "--user-only takes a root filesystem"; user_files "$2"; exit 0 ;;
  -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
esac
[[ $# == 3 ]] || die "usage: elf-rootfs.sh BINARY PATH-IN-IMAGE ROOTFS (see --help)"
binary=$1 target=$2 rootfs=$3
[[ -f $binary ]] || die "no binary at $binary"
[[ $target == /* ]] || die "the path in the image must be absolute, not '$target'"
libraries=$(closure "$binary")
user_files "$rootfs"
install -d -m 1777 "$rootfs/tmp"
mkdir -p "$rootfs$(dirname "$target")"
objcopy --strip-all "$binary" "$rootfs$target"
chmod 755 "$rootfs$target"
for lib in $libraries; do
  mkdir -p "$rootfs$(dirname "$lib")"
  # The file itself, not the host's symlink chain to it; Debian's libraries keep their symbols for
  # backtraces, only debug sections go.
  objcopy --strip-debug "$(readlink -f "$lib")" "$rootfs$lib"
  chmod 755 "$rootfs$lib"
done
