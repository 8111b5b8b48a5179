#!/usr/bin/env bash
# Builds localhost/ipu-operator/debian-notebook:<key>: Debian 12 (minbase) with python3 and Debian's Jupyter
# Notebook server (package jupyter-notebook, notebook 6, its ipykernel), for tests of worker pods that serve
# something: a notebook reached with kubectl port-forward. Made like build-debian-mpi.sh (debootstrap, apt-get
# in a chroot, the shared .deb cache: image_debian_rootfs in lib.sh); cached in
# $IPU_OPERATOR_CACHE/images/debian-notebook-<key>.tar, the key being a hash of this script, tools/images/lib.sh,
# the mirror, the suite and the packages.
# Cold: about 4 minutes (137 MB archive).
#
# The default command serves on port 8888 of every address, as root (--allow-root), with a random token (in
# its log; GET /api, the version, needs none), and fails rather than take another port when 8888 is taken.
# With HOME unset it writes under /root (the passwd entry); when that is read-only (readOnlyRootFilesystem)
# give HOME=/tmp, or it exits at once. Without a token: --NotebookApp.token= (notebook 6: NotebookApp, not
# ServerApp).
#
# Usage: tools/images/build-debian-notebook.sh [--quiet]   (as root; prints "<image reference> <archive>")
set -euo pipefail
source "$(dirname "$0")/lib.sh"
image_parse_args "$@"

image_name=debian-notebook
image_begin_debian bookworm python3 jupyter-notebook

checks() {
  chroot "$rootfs" python3 -c 'import notebook, ipykernel'
  chroot "$rootfs" jupyter-notebook --version > /dev/null
}
[[ $image_cached == true ]] || image_debian_rootfs checks
image_finish '{"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin","LANG=C.UTF-8"],
"Cmd":["jupyter-notebook","--no-browser","--allow-root","--ip=0.0.0.0","--port=8888",
"--NotebookApp.port_retries=0"]}'
