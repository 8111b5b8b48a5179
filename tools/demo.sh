#!/usr/bin/env bash
# The demo (README): starts the built-in local cluster and shows it, ready for IPUJobs.
# Leaves the cluster running so you can explore it; stop it with: tools/cluster.sh down
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
phase() { printf '\n==> %s\n' "$*" >&2; }

phase "dependencies and tools (the first run builds Kubernetes from source: about 8 minutes)"
tools/install-deps.sh
bin=$(tools/build-tools.sh)

phase "local cluster"
if tools/cluster.sh status > /dev/null 2>&1; then
  echo "reusing the cluster already running in .cluster" >&2
else
  tools/cluster.sh up
fi
eval "$(tools/cluster.sh env)"
kubectl=("$bin/kubectl" --kubeconfig "$KUBECONFIG")

phase "kubectl version"
"${kubectl[@]}" version
phase "kubectl get nodes (simulated IPU hosts, by IPU-POD)"
"${kubectl[@]}" get nodes -L ipu.graphcore.ai/ipu-pod -L ipu.graphcore.ai/vipu-controller
phase "kubectl get pods -A"
"${kubectl[@]}" get pods -A

cat >&2 <<DONE

The cluster keeps running. Use it with:
  export KUBECONFIG=$KUBECONFIG PATH=$bin:\$PATH
  kubectl get nodes
Stop it with: tools/cluster.sh down
DONE
