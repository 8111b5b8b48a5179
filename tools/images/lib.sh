# shellcheck shell=bash
# Shared by the image build scripts (sourced): the cache, and writing a single-layer OCI image archive from a
# root filesystem without a registry, a daemon or umoci. Same rootfs in, same bytes out: file times, owners'
# names and compression headers are fixed, tar entries are sorted.
#
# A build script sets image_name, calls image_begin with every input that decides its content (a script
# change, a package version...), fills "$rootfs" when image_cached is false, then calls image_finish.
# It prints "<image reference> <archive>" on stdout; the archive imports with `ctr images import`.

images_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
image_cache=${IPU_OPERATOR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ipu-operator}/images
# 2000-01-01T00:00:00Z: every file's mtime and the image's creation time.
image_epoch=946684800
image_quiet=0

image_say() { [[ $image_quiet == 1 ]] || echo "images: $*" >&2; }

image_parse_args() {
  local arg
  for arg in "$@"; do
    case $arg in
      --quiet) image_quiet=1 ;;
      -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 0 ;;
      *) echo "$(basename "$0"): unknown option '$arg' (accepted: --quiet)" >&2; exit 2 ;;
    esac
  done
}

# image_parse_binary_args <variable> <args...>: the options of a script that packs a binary built here:
# --binary PATH (sets the variable) plus image_parse_args' own.
image_parse_binary_args() {
  local variable=$1 library_args=()
  shift
  while [[ $# -gt 0 ]]; do
    case $1 in
      --binary)
        [[ $# -ge 2 && -n $2 ]] || { echo "$(basename "$0"): --binary needs a path" >&2; exit 2; }
        printf -v "$variable" '%s' "$2"
        shift 2
        ;;
      --quiet | -h | --help) library_args+=("$1"); shift ;;
      *) echo "$(basename "$0"): unknown option '$1' (accepted: --binary PATH, --quiet)" >&2; exit 2 ;;
    esac
  done
  image_parse_args "${library_args[@]}"
}

# image_begin_from_busybox_static: image_begin keyed by Debian's static busybox (package version and binary),
# which the image is built from, and $image_variant when set (what else shapes it); fails clearly when the
# package is missing. Sets busybox to its path.
image_begin_from_busybox_static() {
  busybox=/bin/busybox
  # shellcheck disable=SC2154 # image_name: set by the build script that sources this file
  dpkg-query -W -f='${Status}' busybox-static 2>/dev/null | grep -q 'install ok installed' ||
    { echo "build-$image_name: the busybox-static package is missing (run tools/install-deps.sh)" >&2; exit 1; }
  image_begin "$(dpkg-query -W -f='${Version}' busybox-static)" "$(sha256sum < "$busybox")" \
    ${image_variant:+"$image_variant"}
}

# image_begin_debian <suite> <packages...>: image_begin keyed by the Debian mirror (the one this machine's apt
# uses for the suite, or $IPU_DEBIAN_MIRROR), the suite and the packages, for image_debian_rootfs; fails
# clearly when debootstrap is missing. Sets image_debian_suite, image_debian_mirror, image_debian_packages.
image_begin_debian() {
  image_debian_suite=$1
  shift
  image_debian_packages=("$@")
  local default_mirror
  # shellcheck disable=SC2016 # $(REPO_URI) is apt-get's own placeholder for --format, not a shell expansion
  default_mirror=$(apt-get indextargets --format '$(REPO_URI)' 'Created-By: Packages' \
    "Codename: $image_debian_suite" 2>/dev/null | grep -m1 '/debian/$' || true)
  image_debian_mirror=${IPU_DEBIAN_MIRROR:-${default_mirror:-http://deb.debian.org/debian/}}
  # shellcheck disable=SC2154 # image_name: set by the build script that sources this file
  command -v debootstrap > /dev/null ||
    { echo "build-$image_name: debootstrap is missing (run tools/install-deps.sh)" >&2; exit 1; }
  image_begin "$image_debian_mirror" "$image_debian_suite" "${image_debian_packages[*]}"
}

# image_debian_rootfs <check command...>: fills "$rootfs" (image_begin_debian's suite, minbase) by debootstrap,
# then apt-get install --no-install-recommends of the packages in a chroot, with the .debs kept in
# $image_cache/debs (shared by the images and runs, so a rebuild downloads little) and /proc mounted; runs the
# check command (the script's own: `chroot "$rootfs" ...`) while they are mounted, unmounts them (image_cleanup
# does if anything fails), and removes what changes from one build to the next without saying anything about
# the image. No service may start.
image_debian_rootfs() {
  local debs=$image_cache/debs
  mkdir -p "$debs"
  image_say "debootstrap $image_debian_suite from $image_debian_mirror"
  debootstrap --variant=minbase --cache-dir="$debs" "$image_debian_suite" "$rootfs" "$image_debian_mirror" \
    > "$image_work/debootstrap.log" 2>&1 || { tail -n 20 "$image_work/debootstrap.log" >&2; exit 1; }

  printf '#!/bin/sh\nexit 101\n' > "$rootfs/usr/sbin/policy-rc.d"
  chmod 755 "$rootfs/usr/sbin/policy-rc.d"
  mount --bind "$debs" "$rootfs/var/cache/apt/archives"
  mount -t proc proc "$rootfs/proc"
  image_say "installing ${image_debian_packages[*]}"
  chroot "$rootfs" env DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 sh -c \
    "apt-get update -qq && apt-get install -y -qq --no-install-recommends ${image_debian_packages[*]}" \
    > "$image_work/apt.log" 2>&1 || { tail -n 20 "$image_work/apt.log" >&2; exit 1; }
  "$@"
  umount "$rootfs/proc"
  umount "$rootfs/var/cache/apt/archives"

  rm -f "$rootfs/usr/sbin/policy-rc.d" "$rootfs/etc/resolv.conf" "$rootfs/var/cache/ldconfig/aux-cache" \
    "$rootfs"/var/lib/dpkg/*-old "$rootfs"/var/cache/debconf/*-old
  rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/log/* "$rootfs"/tmp/* \
    "$rootfs"/var/cache/apt/archives/*
  : > "$rootfs/etc/machine-id"
}

# image_begin <inputs...>: the cache key is a hash of this library, the calling script and the inputs; the
# key is also the image's tag. Sets image_ref, image_archive, image_cached and (when not cached) rootfs, a
# fresh directory that is removed on exit.
image_begin() {
  [[ $(id -u) == 0 ]] || { echo "images: run as root (the root filesystem keeps its owners)" >&2; exit 1; }
  local key
  key=$( { cat "$images_dir/lib.sh" "$0"; printf '%s\n' "$@"; } | sha256sum | cut -c1-12)
  image_ref=localhost/ipu-operator/$image_name:$key
  image_archive=$image_cache/$image_name-$key.tar
  image_cached=false
  [[ -f $image_archive ]] && { image_cached=true; return 0; }
  mkdir -p "$image_cache"
  image_work=$(mktemp -d "$image_cache/.build-$image_name.XXXXXX")
  rootfs=$image_work/rootfs
  mkdir -p "$rootfs"
  image_started=$SECONDS
  trap image_cleanup EXIT
  image_say "building $image_ref (later runs reuse $image_archive)"
}

# Unmounts whatever a build left mounted in its work directory (chroot /proc...), then removes it.
image_cleanup() {
  [[ -n ${image_work:-} && -d $image_work ]] || return 0
  local target
  # Deepest first. findmnt escapes blanks in paths; the work directory has none.
  for target in $(findmnt -rn -o TARGET | grep -F "$image_work/" | sort -r || true); do
    umount "$target" 2>/dev/null || umount -l "$target" || true
  done
  rm -rf --one-file-system "$image_work"
}

# image_finish <image config JSON object>: writes "$rootfs" as a one-layer OCI image archive into the cache
# (atomically: a concurrent or interrupted build never leaves half an archive) and prints ref and path.
image_finish() {
  local config=$1
  if [[ $image_cached == true ]]; then
    echo "$image_ref $image_archive"
    return 0
  fi
  local layout=$image_work/layout blobs=$image_work/layout/blobs/sha256
  mkdir -p "$blobs"
  # The layer: sorted entries, fixed times, numeric owners (the rootfs keeps its uids). GNU format without
  # --xattrs: that would add pax headers carrying atime/ctime (and no image here needs file capabilities).
  tar --sort=name --mtime="@$image_epoch" --numeric-owner --format=gnu \
    -C "$rootfs" -cf "$image_work/layer.tar" .
  local diff_id layer_digest layer_size
  diff_id=$(sha256sum < "$image_work/layer.tar" | cut -d' ' -f1)
  gzip -n -6 < "$image_work/layer.tar" > "$image_work/layer.tar.gz"
  rm -f "$image_work/layer.tar"
  layer_digest=$(sha256sum < "$image_work/layer.tar.gz" | cut -d' ' -f1)
  layer_size=$(stat -c %s "$image_work/layer.tar.gz")
  mv "$image_work/layer.tar.gz" "$blobs/$layer_digest"

  local created config_digest config_size manifest_digest manifest_size # the last four: set by image_blob
  created=$(date -u -d "@$image_epoch" +%Y-%m-%dT%H:%M:%SZ)
  image_blob config "{\"created\":\"$created\",\"architecture\":\"amd64\",\"os\":\"linux\",\"config\":$config,\
\"rootfs\":{\"type\":\"layers\",\"diff_ids\":[\"sha256:$diff_id\"]},\
\"history\":[{\"created\":\"$created\",\"created_by\":\"tools/images/$(basename "$0")\"}]}"
  image_blob manifest "{\"schemaVersion\":2,\"mediaType\":\"application/vnd.oci.image.manifest.v1+json\",\
\"config\":{\"mediaType\":\"application/vnd.oci.image.config.v1+json\",\"digest\":\"sha256:$config_digest\",\"size\":$config_size},\
\"layers\":[{\"mediaType\":\"application/vnd.oci.image.layer.v1.tar+gzip\",\"digest\":\"sha256:$layer_digest\",\"size\":$layer_size}]}"
  # ctr names the image after io.containerd.image.name; other tools read the OCI ref.name (the tag).
  printf '%s' "{\"schemaVersion\":2,\"mediaType\":\"application/vnd.oci.image.index.v1+json\",\"manifests\":[\
{\"mediaType\":\"application/vnd.oci.image.manifest.v1+json\",\"digest\":\"sha256:$manifest_digest\",\"size\":$manifest_size,\
\"annotations\":{\"io.containerd.image.name\":\"$image_ref\",\"org.opencontainers.image.ref.name\":\"${image_ref##*:}\"}}]}" \
    > "$layout/index.json"
  printf '%s' '{"imageLayoutVersion":"1.0.0"}' > "$layout/oci-layout"

  tar --sort=name --mtime="@$image_epoch" --owner=0 --group=0 --numeric-owner --format=gnu \
    -C "$layout" -cf "$image_work/image.tar" oci-layout index.json blobs
  mv "$image_work/image.tar" "$image_archive"
  image_say "built $image_ref in $((SECONDS - image_started)) s ($(du -h "$image_archive" | cut -f1))"
  echo "$image_name $((SECONDS - image_started))" >> "$image_cache/build-times.log"
  echo "$image_ref $image_archive"
}

# image_blob <kind> <json>: stores the JSON as a blob; sets <kind>_digest and <kind>_size.
image_blob() {
  local kind=$1 json=$2 digest
  digest=$(printf '%s' "$json" | sha256sum | cut -d' ' -f1)
  printf '%s' "$json" > "$image_work/layout/blobs/sha256/$digest"
  printf -v "${kind}_digest" '%s' "$digest"
  printf -v "${kind}_size" '%s' "${#json}"
}

# image_begin_from_elf <binary> [inputs...]: image_begin keyed by a dynamically linked binary and every
# shared object it loads (their contents, so a Debian security update makes a new image), plus the strip
# tool's version.
image_begin_from_elf() {
  local binary=$1; shift
  [[ -f $binary ]] || { echo "build-$image_name: no binary at $binary (build it first)" >&2; exit 1; }
  local closure
  closure=$("$images_dir/elf-rootfs.sh" --closure "$binary")
  # shellcheck disable=SC2086
  image_begin "$(sha256sum < "$binary")" "$(objcopy --version | head -n 1)" "$(sha256sum $closure)" \
    "$(sha256sum < "$images_dir/elf-rootfs.sh")" "$@"
}

# image_nonroot_user: /etc/passwd and /etc/group naming the non-root user images run as.
image_nonroot_user() { "$images_dir/elf-rootfs.sh" --user-only "$rootfs"; }
