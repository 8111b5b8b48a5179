#!/usr/bin/env bash
# Builds localhost/ipu-operator/debian-mpi:<key>: Debian 12 (minbase) with python3, OpenMPI and mpi4py, for
# tests of the distributed runtime (mpirun across worker pods, a real allreduce from Python). debootstrap from
# the Debian mirror this machine's apt uses (or $IPU_DEBIAN_MIRROR), then apt-get in a chroot; .debs are kept
# in $IPU_OPERATOR_CACHE/images/debs so a rebuild downloads little. Cached in
# $IPU_OPERATOR_CACHE/images/debian-mpi-<key>.tar, the key being a hash of this script, tools/images/lib.sh,
# the mirror, the suite and the packages. File times are fixed, but the mirror moves: a rebuild months later
# gets the newer package versions (delete the archive to rebuild).
# Cold: a few minutes.
#
# Usage: tools/images/build-debian-mpi.sh [--quiet]   (as root; prints "<image reference> <archive>")
set -euo pipefail
source "$(dirname "$0")/lib.sh"
image_parse_args "$@"

suite=bookworm
packages=(python3 openmpi-bin python3-mpi4py)
# shellcheck disable=SC2016 # $(REPO_URI) is apt-get's own placeholder for --format, not a shell expansion
default_mirror=$(apt-get indextargets --format '$(REPO_URI)' 'Created-By: Packages' "Codename: $suite" 2>/dev/null |
  grep -m1 '/debian/$' || true)
mirror=${IPU_DEBIAN_MIRROR:-${default_mirror:-http://deb.debian.org/debian/}}
command -v debootstrap > /dev/null ||
  { echo "build-debian-mpi: debootstrap is missing (run tools/install-deps.sh)" >&2; exit 1; }
image_name=debian-mpi
image_begin "$mirror" "$suite" "${packages[*]}"

if [[ $image_cached == false ]]; then
  debs=$image_cache/debs
  mkdir -p "$debs"
  image_say "debootstrap $suite from $mirror"
  debootstrap --variant=minbase --cache-dir="$debs" "$suite" "$rootfs" "$mirror" > "$image_work/debootstrap.log" 2>&1 ||
    { tail -n 20 "$image_work/debootstrap.log" >&2; exit 1; }

  # apt-get in the chroot, with the shared .deb cache and /proc mounted only for it (image_cleanup unmounts
  # both if anything fails); no service may start.
  printf '#!/bin/sh\nexit 101\n' > "$rootfs/usr/sbin/policy-rc.d"
  chmod 755 "$rootfs/usr/sbin/policy-rc.d"
  mount --bind "$debs" "$rootfs/var/cache/apt/archives"
  mount -t proc proc "$rootfs/proc"
  image_say "installing ${packages[*]}"
  chroot "$rootfs" env DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 sh -c \
    "apt-get update -qq && apt-get install -y -qq --no-install-recommends ${packages[*]}" \
    > "$image_work/apt.log" 2>&1 || { tail -n 20 "$image_work/apt.log" >&2; exit 1; }
  chroot "$rootfs" mpirun --version > /dev/null
  chroot "$rootfs" python3 -c 'import sys; assert sys.version_info >= (3, 11)'
  # mpi4py loads against the image's OpenMPI (not initialised: a chroot is no place for an MPI world).
  chroot "$rootfs" python3 -c 'import mpi4py; mpi4py.rc.initialize = False; from mpi4py import MPI'
  umount "$rootfs/proc"
  umount "$rootfs/var/cache/apt/archives"

  # What changes from one build to the next without saying anything about the image.
  rm -f "$rootfs/usr/sbin/policy-rc.d" "$rootfs/etc/resolv.conf" "$rootfs/var/cache/ldconfig/aux-cache" \
    "$rootfs"/var/lib/dpkg/*-old "$rootfs"/var/cache/debconf/*-old
  rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/log/* "$rootfs"/tmp/* \
    "$rootfs"/var/cache/apt/archives/*
  : > "$rootfs/etc/machine-id"
fi
# OpenMPI refuses to run as root (the containers' default user) unless told it may.
image_finish '{"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin","LANG=C.UTF-8",
"OMPI_ALLOW_RUN_AS_ROOT=1","OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"],"Cmd":["bash"]}'
