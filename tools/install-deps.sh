#!/usr/bin/env bash
# Installs the Debian packages the build and the tests need. Idempotent: only missing packages are
# installed, and nothing is printed when everything is already there. Needs root (or sudo) on Debian 12.
# Usage: tools/install-deps.sh [--fast-lane]   (--fast-lane: only what tools/fast-lane.sh needs, a few MB, so
# that tools/test.sh reports the fast lane before the minutes the rest takes on a fresh machine)
set -euo pipefail
# The fast lane (.ci/run): the format check, the shell scripts' lint, the include-graph check.
fast_lane=(clang-format-14 shellcheck python3 git)
packages=("${fast_lane[@]}"
  # build
  cmake ninja-build g++ pkg-config ccache
  # the ASan+UBSan build is clang's, for libFuzzer (tests/fuzz): the compiler, and compiler-rt with
  # libclang_rt.fuzzer and the sanitizer runtimes
  clang-14 libclang-rt-14-dev
  # libraries (docs/architecture.md): HTTP/TLS client, YAML, JSON, OpenSSL, gRPC + protobuf for the V-IPU API,
  # Prometheus metrics (prometheus-cpp's core), command-line flags (CLI11), tests
  libcpprest-dev libboost-dev libyaml-cpp-dev nlohmann-json3-dev libssl-dev
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc
  prometheus-cpp-dev libcli11-dev
  libgtest-dev libgmock-dev
  # test cluster: certificates, readiness probes, port checks
  openssl curl iproute2 procps
  # its real node (tools/cluster/real-node.sh): runc under a private containerd (2.x, built from the Go module
  # proxy by tools/build-tools.sh, not Debian's 1.6), CNI bridge + host-local + loopback + portmap (which needs
  # iptables for host ports); images built without a registry from busybox-static and debootstrap (tools/images/)
  runc containernetworking-plugins iptables busybox-static debootstrap
  # the POD map page is tested in a real headless Chromium (tests/integration/operator/kubectl_ipu_test.cpp),
  # with a font to draw its text in the screenshot
  chromium fonts-dejavu-core
  # the runtime's integration tests run a real mpirun (with mpi4py's allreduce) on the host, like the
  # debian-mpi image does in pods
  openmpi-bin python3-mpi4py
  # Kueue in the test cluster (tools/cluster/kueue.sh): its webhook configurations are rewritten from its
  # manifests to point at the local process
  python3-yaml
)
[[ ${1:-} == --fast-lane ]] && packages=("${fast_lane[@]}")
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0
sudo=""
[[ $(id -u) -eq 0 ]] || sudo=sudo
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
# A fresh machine may have no package lists yet (or stale ones): refresh once before installing.
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
