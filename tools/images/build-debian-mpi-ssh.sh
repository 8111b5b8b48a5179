#!/usr/bin/env bash
# Builds localhost/ipu-operator/debian-mpi-ssh:<key>: debian-mpi's content (Debian 12 minbase, python3,
# OpenMPI 4.1, mpi4py) plus OpenSSH's server and client, configured as the Kubeflow MPI Operator's images are:
# its workers run `sshd -De` as root on port 22 and its launcher's mpirun starts the ranks' daemons over ssh
# with the job's key, which the operator mounts read-only at /root/.ssh. Hence, as in the MPI Operator's own
# base image: sshd's StrictModes off (the mount is not root's own directory), and ssh without host-key
# checking or a known_hosts file (the mount is read-only, the workers' host keys are the image's). The
# privilege-separation directory /run/sshd is made here (no init system makes it in a container).
# Bookworm's OpenMPI 4.1 reads the operator's OMPI_MCA_orte_* variables; OpenMPI 5 ignores them.
# For the start-latency benchmark against the MPI Operator (tests/bench/launch). Made like build-debian-mpi.sh;
# cached in $IPU_OPERATOR_CACHE/images/debian-mpi-ssh-<key>.tar.
# Cold: a few minutes.
#
# Usage: tools/images/build-debian-mpi-ssh.sh [--quiet]   (as root; prints "<image reference> <archive>")
set -euo pipefail
source "$(dirname "$0")/lib.sh"
image_parse_args "$@"

image_name=debian-mpi-ssh
image_begin_debian bookworm python3 openmpi-bin python3-mpi4py openssh-server openssh-client

configure_ssh() {
  # Both files Include their *.d/*.conf first, and the first value of an option wins.
  printf 'StrictModes no\n' > "$rootfs/etc/ssh/sshd_config.d/mpi.conf"
  printf 'StrictHostKeyChecking no\nUserKnownHostsFile /dev/null\nLogLevel ERROR\n' \
    > "$rootfs/etc/ssh/ssh_config.d/mpi.conf"
  mkdir -p "$rootfs/run/sshd"
  # The package's postinst made the host keys; an image without them would have every sshd exit at start.
  ls "$rootfs"/etc/ssh/ssh_host_*_key > /dev/null
  chroot "$rootfs" mpirun --version > /dev/null
  chroot "$rootfs" /usr/sbin/sshd -t
  chroot "$rootfs" python3 -c 'import mpi4py; mpi4py.rc.initialize = False; from mpi4py import MPI'
}
[[ $image_cached == true ]] || image_debian_rootfs configure_ssh
# OpenMPI refuses to run as root (the containers' default user) unless told it may: the MPI Operator's
# examples pass --allow-run-as-root to mpirun, these variables say the same.
image_finish '{"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin","LANG=C.UTF-8",
"OMPI_ALLOW_RUN_AS_ROOT=1","OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"],"Cmd":["bash"]}'
