#!/usr/bin/env bash
# Builds the Go tools behind the local test cluster from the Go module proxy, with pinned versions
# (tools/versions.env and each wrapper module's go.mod/go.sum), into a cache outside the repository:
#   $IPU_OPERATOR_CACHE/bin/<tool>-<version>-<hash of its wrapper module>/
# A warm cache costs a few file checks. Prints the directory that holds links to all binaries.
#
# Usage: tools/build-tools.sh [--quiet] [--peers]
#   --peers  also build the benchmarks' peer, the Kubeflow MPI Operator (only `ctest -L bench` needs it)
# Env:   IPU_OPERATOR_CACHE (default ${XDG_CACHE_HOME:-$HOME/.cache}/ipu-operator)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
quiet=0 peers=0
for arg in "$@"; do
  case $arg in
    --quiet) quiet=1 ;;
    --peers) peers=1 ;;
    *) echo "build-tools.sh: unknown option '$arg' (accepted: --quiet, --peers)" >&2; exit 2 ;;
  esac
done
say() { [[ $quiet == 1 ]] || echo "build-tools: $*" >&2; }

# shellcheck source=versions.env
source "$here/versions.env"
cache=${IPU_OPERATOR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ipu-operator}
bin_root=$cache/bin
links=$bin_root/current
mkdir -p "$bin_root" "$links"
# One build at a time (the integration and e2e clusters start at once): a second caller waits, then finds
# the binaries built.
exec 9> "$bin_root/.lock"
if ! flock -n 9; then
  say "another build-tools.sh is building; waiting for it"
  flock 9
fi
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="-mod=readonly -trimpath -buildvcs=false"

module_key() { cat "$here/$1/go.mod" "$here/$1/go.sum" | sha256sum | cut -c1-12; }

# build_module <wrapper dir> <version> <ldflags> <package | name=package ...>: builds each package's binary
# into the cache dir, named after the package or as given.
build_module() {
  local dir=$1 version=$2 ldflags=$3; shift 3
  local out
  out="$bin_root/$dir-$version-$(module_key "$dir")"
  if [[ ! -f $out/.complete ]]; then
    say "building $dir $version (cold: this takes minutes; later runs reuse $out)"
    local started=$SECONDS
    rm -rf "$out.tmp" && mkdir -p "$out.tmp"
    local packages=() named
    for named in "$@"; do [[ $named == *=* ]] || packages+=("$named"); done
    (cd "$here/$dir" && go build -ldflags "$ldflags" -o "$out.tmp/" "${packages[@]}")
    for named in "$@"; do
      [[ $named == *=* ]] && (cd "$here/$dir" && go build -ldflags "$ldflags" -o "$out.tmp/${named%%=*}" "${named#*=}")
    done
    touch "$out.tmp/.complete"
    rm -rf "$out" && mv "$out.tmp" "$out"
    say "built $dir $version in $((SECONDS - started)) s"
    echo "$dir $version $((SECONDS - started))" >> "$bin_root/build-times.log"
  fi
  local f
  for f in "$out"/*; do ln -sfn "$f" "$links/$(basename "$f")"; done
}

k8s_minor=${KUBERNETES_VERSION#v1.}; k8s_minor=${k8s_minor%%.*}
k8s_ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$KUBERNETES_VERSION \
-X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$k8s_minor \
-X k8s.io/component-base/version.gitTreeState=clean \
-X k8s.io/client-go/pkg/version.gitVersion=$KUBERNETES_VERSION \
-X k8s.io/client-go/pkg/version.gitMajor=1 -X k8s.io/client-go/pkg/version.gitMinor=$k8s_minor"
grep -q "k8s.io/kubernetes $KUBERNETES_VERSION" "$here/kubernetes/go.mod" || {
  echo "build-tools: tools/kubernetes/go.mod is not for $KUBERNETES_VERSION: run tools/kubernetes/update-go-mod.sh $KUBERNETES_VERSION" >&2
  exit 1
}

build_module kubernetes "$KUBERNETES_VERSION" "$k8s_ldflags" \
  k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kubectl \
  k8s.io/kubernetes/cmd/kube-proxy
# go would name the binary of go.etcd.io/etcd/server/v3 "server".
build_module etcd "$ETCD_VERSION" "-s -w" etcd=go.etcd.io/etcd/server/v3 go.etcd.io/etcd/etcdctl/v3
build_module kwok "$KWOK_VERSION" "-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=${KWOK_VERSION#v}" \
  sigs.k8s.io/kwok/cmd/kwok sigs.k8s.io/kwok/cmd/kwokctl
build_module helm "$HELM_VERSION" "-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION" \
  helm.sh/helm/v3/cmd/helm
# The real node's cluster DNS. CoreDNS's version is a constant in its source (coremain.CoreVersion); only
# the commit is a variable, stamped with the tag since the module proxy has no commit.
grep -q "github.com/coredns/coredns $COREDNS_VERSION" "$here/coredns/go.mod" || {
  echo "build-tools: tools/coredns/go.mod is not for $COREDNS_VERSION: in tools/coredns run" \
    "go get -tool github.com/coredns/coredns@$COREDNS_VERSION && go mod tidy" >&2
  exit 1
}
build_module coredns "$COREDNS_VERSION" "-s -w -X github.com/coredns/coredns/coremain.GitCommit=$COREDNS_VERSION" \
  github.com/coredns/coredns

# The real node's container runtime (tools/cluster/real-node.sh): containerd, its runc shim and ctr. Without
# cgo (no btrfs snapshotter: the node uses overlayfs).
grep -q "github.com/containerd/containerd/v2 $CONTAINERD_VERSION" "$here/containerd/go.mod" || {
  echo "build-tools: tools/containerd/go.mod is not for $CONTAINERD_VERSION: in tools/containerd run" \
    "go get -tool github.com/containerd/containerd/v2/cmd/{containerd,containerd-shim-runc-v2,ctr}@$CONTAINERD_VERSION" \
    "&& go mod tidy" >&2
  exit 1
}
GOFLAGS="$GOFLAGS -tags=no_btrfs" build_module containerd "$CONTAINERD_VERSION" \
  "-s -w -X github.com/containerd/containerd/v2/version.Version=$CONTAINERD_VERSION" \
  github.com/containerd/containerd/v2/cmd/containerd github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2 \
  github.com/containerd/containerd/v2/cmd/ctr

# Kueue (tools/cluster.sh up --kueue): the binary, and its CRDs from the module's tree.
grep -q "sigs.k8s.io/kueue $KUEUE_VERSION" "$here/kueue/go.mod" || {
  echo "build-tools: tools/kueue/go.mod is not for $KUEUE_VERSION: in tools/kueue run" \
    "go get -tool sigs.k8s.io/kueue/cmd/kueue@$KUEUE_VERSION && go mod tidy" >&2
  exit 1
}
build_module kueue "$KUEUE_VERSION" "-s -w -X sigs.k8s.io/kueue/pkg/version.GitVersion=$KUEUE_VERSION" \
  sigs.k8s.io/kueue/cmd/kueue
ln -sfn "$(cd "$here/kueue" && go list -m -f '{{.Dir}}' sigs.k8s.io/kueue)/config/components/crd/bases" "$links/kueue-crds"

# The benchmarks' peer (tests/bench/compare): the Kubeflow MPI Operator, whose CRD the benchmark reads from
# the module's tree (printed by `go list -m` in tools/mpi-operator).
if [[ $peers == 1 ]]; then
  grep -q "github.com/kubeflow/mpi-operator $MPI_OPERATOR_VERSION" "$here/mpi-operator/go.mod" || {
    echo "build-tools: tools/mpi-operator/go.mod is not for $MPI_OPERATOR_VERSION: in tools/mpi-operator run" \
      "go get -tool github.com/kubeflow/mpi-operator/cmd/mpi-operator@$MPI_OPERATOR_VERSION && go mod tidy" >&2
    exit 1
  }
  build_module mpi-operator "$MPI_OPERATOR_VERSION" \
    "-s -w -X github.com/kubeflow/mpi-operator/pkg/version.Version=$MPI_OPERATOR_VERSION" \
    github.com/kubeflow/mpi-operator/cmd/mpi-operator
  crd=$(cd "$here/mpi-operator" && go list -m -f '{{.Dir}}' github.com/kubeflow/mpi-operator)/manifests/base/kubeflow.org_mpijobs.yaml
  ln -sfn "$crd" "$links/kubeflow.org_mpijobs.yaml"
fi

echo "$links"
