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

image_name=debian-mpi
image_begin_debian bookworm python3 openmpi-bin python3-mpi4py

checks() {
  chroot "$rootfs" mpirun --version > /dev/null
  chroot "$rootfs" python3 -c 'import sys; assert sys.version_info >= (3, 11)'
  # mpi4py loads against the image's OpenMPI (not initialised: a chroot is no place for an MPI world).
  chroot "$rootfs" python3 -c 'import mpi4py; mpi4py.rc.initialize = False; from mpi4py import MPI'
}
[[ $image_cached == true ]] || image_debian_rootfs checks
# OpenMPI refuses to run as root (the containers' default user) unless told it may.
image_finish '{"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin","LANG=C.UTF-8",
"OMPI_ALLOW_RUN_AS_ROOT=1","OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"],"Cmd":["bash"]}'
