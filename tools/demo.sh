#!/usr/bin/env bash
# The demo (README): builds the operator, starts the built-in local cluster with vipu-sim (a simulated POD64)
# and ipu-operator, applies a real user's IPUJob unchanged (examples/ipujobs/bert-training-multi-ipu.yaml) and
# shows what happened: the job, its worker pod with what the operator injected, and its V-IPU partition.
# As root it also starts the real node (kubelet + containerd) and runs one job for real: one instance of two
# worker pods on the debian-mpi image, whose ranks do an MPI allreduce across the two pods, started by the
# ipu-runtime the operator injected; then `kubectl logs <job>-worker-0` shows every rank.
# Everything keeps running so you can explore; `tools/cluster.sh down` stops all of it.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
phase() { printf '\n==> %s\n' "$*" >&2; }

phase "dependencies and tools (the first run builds Kubernetes, etcd, kwok, helm and CoreDNS from source: about 20 minutes on 2 cores)"
tools/install-deps.sh
bin=$(tools/build-tools.sh)

phase "build ipu-operator, vipu-sim, vipu-ctl, ipu-runtime"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo > /dev/null
cmake --build build -j "$(nproc)" --target ipu-operator vipu-sim vipu-ctl ipu-runtime > /dev/null

real_node=false
[[ $(id -u) == 0 ]] && real_node=true
if [[ $real_node == true ]]; then
  phase "local cluster with the real node (the first run builds its images: a few minutes)"
  tools/cluster.sh status > /dev/null 2>&1 ||
    tools/cluster.sh up --real-node --images busybox,debian-mpi,ipu-runtime
else
  phase "local cluster (not root: simulated nodes only, no container runs)"
  tools/cluster.sh status > /dev/null 2>&1 || tools/cluster.sh up
fi
eval "$(tools/cluster.sh env)"
kubectl=("$bin/kubectl" --kubeconfig "$KUBECONFIG")

# vipu-sim and the operator join the cluster's processes (same log and pid files), so that
# `tools/cluster.sh down` stops them too.
cluster_dir=$IPU_CLUSTER_DIR
# shellcheck source=cluster/processes.sh
source tools/cluster/processes.sh
vipu_port_file=$cluster_dir/vipu-sim/port
if ! proc_alive vipu-sim; then
  # A new vipu-sim goes with the cluster it serves: partitions kept from an earlier cluster (whose etcd, and so
  # whose jobs, are gone) would hold IPUs that nothing will ever release.
  rm -rf "$cluster_dir/vipu-sim"
  mkdir -p "$cluster_dir/vipu-sim"
  proc_start vipu-sim "$repo/build/vipu-sim/vipu-sim" --pod pod64 --listen 127.0.0.1:0 \
    --port-file "$vipu_port_file" --state-file "$cluster_dir/vipu-sim/state.json" --activation-delay-ms 500
  for _ in $(seq 100); do [[ -s $vipu_port_file ]] && break; sleep 0.1; done
  [[ -s $vipu_port_file ]] || { echo "demo: vipu-sim did not start; see $cluster_dir/logs/vipu-sim.log" >&2; exit 1; }
fi
vipu=127.0.0.1:$(cat "$vipu_port_file")
echo "vipu-sim (POD64: 64 IPUs) serves the V-IPU API on $vipu" >&2

"${kubectl[@]}" apply -f crds/ > /dev/null
# kubectl wait fails at once on a CRD whose status has no conditions yet: asked again for up to a minute.
for ((tries = 0; ; tries++)); do
  "${kubectl[@]}" wait --for condition=established crd/ipujobs.graphcore.ai --timeout 10s > /dev/null 2>&1 && break
  ((tries < 30)) || { echo "demo: the IPUJob CRD was not established within a minute" >&2; exit 1; }
  sleep 2
done
runtime_flags=()
[[ -n ${IPU_CLUSTER_IMAGE_IPU_RUNTIME:-} ]] &&
  runtime_flags=(--runtime-image "$IPU_CLUSTER_IMAGE_IPU_RUNTIME" --runtime-image-pull-policy Never)
if ! proc_alive ipu-operator; then
  proc_start ipu-operator "$repo/build/operator/ipu-operator" --kubeconfig "$KUBECONFIG" \
    --vipu-controller "pod64=$vipu" --metrics-bind-address 0 --health-probe-bind-address 0 "${runtime_flags[@]}"
fi
echo "ipu-operator runs (logs: $cluster_dir/logs/ipu-operator.log)" >&2

phase "kubectl create -f examples/ipujobs/bert-training-multi-ipu.yaml   (a user's manifest, unchanged)"
job=$("${kubectl[@]}" create -f examples/ipujobs/bert-training-multi-ipu.yaml -o name)
job=${job#*/}
echo "created ipujob/$job" >&2
for _ in $(seq 120); do
  phase_now=$("${kubectl[@]}" get ipujob "$job" -o jsonpath='{.status.phase}')
  [[ $phase_now == Running || $phase_now == Failed ]] && break
  sleep 0.5
done

phase "kubectl get ipujobs"
"${kubectl[@]}" get ipujobs
phase "kubectl get pods -o wide"
"${kubectl[@]}" get pods -o wide
pod=$job-worker-0
phase "what the operator put into $pod"
"${kubectl[@]}" get pod "$pod" -o jsonpath='hostIPC: {.spec.hostIPC}
volumes: {.spec.volumes}
/dev/shm mounts: {.spec.containers[0].volumeMounts}
capabilities: {.spec.containers[0].securityContext.capabilities}
{range .spec.containers[0].env[*]}  {.name}={.value}
{end}'
phase "the job's partition, as the V-IPU controller (vipu-sim) reports it"
build/vipu-ctl/vipu-ctl --endpoint "$vipu" list
phase "status.conditions of ipujob/$job"
"${kubectl[@]}" get ipujob "$job" -o jsonpath='{range .status.conditions[*]}  {.type}={.status} ({.reason}): {.message}
{end}'

phase "kubectl create -f examples/ipujobs/bert-poprun-64ipus.yaml   (needs all 64 IPUs: it waits its turn)"
big=$("${kubectl[@]}" create -f examples/ipujobs/bert-poprun-64ipus.yaml -o name)
big=${big#*/}
for _ in $(seq 60); do
  [[ $("${kubectl[@]}" get ipujob "$big" -o jsonpath='{.status.phase}') == Queued ]] && break
  sleep 0.5
done
"${kubectl[@]}" get ipujobs
phase "kubectl delete ipujob $job   (its partition is released; the 64-IPU job is admitted)"
"${kubectl[@]}" delete ipujob "$job" --wait=false
for _ in $(seq 120); do
  [[ $("${kubectl[@]}" get ipujob "$big" -o jsonpath='{.status.phase}') == Running ]] && break
  sleep 0.5
done
"${kubectl[@]}" get ipujobs
[[ $("${kubectl[@]}" get ipujob "$big" -o jsonpath='{.status.phase}') == Running ]] ||
  { echo "demo: ipujob/$big did not start; see kubectl describe ipujob $big" >&2; exit 1; }
build/vipu-ctl/vipu-ctl --endpoint "$vipu" list
job=$big

if [[ $real_node == true && -n ${IPU_CLUSTER_IMAGE_DEBIAN_MPI:-} && -n ${IPU_CLUSTER_IMAGE_IPU_RUNTIME:-} ]]; then
  phase "a job for real: one instance, two worker pods on the real node, an MPI allreduce across them"
  "${kubectl[@]}" delete ipujob "$big" --wait=false > /dev/null  # the real job needs IPUs of the POD64
  mpi_job=$("${kubectl[@]}" create -o name -f - <<MANIFEST
apiVersion: graphcore.ai/v1alpha1
kind: IPUJob
metadata:
  generateName: allreduce-
spec:
  jobInstances: 1
  ipusPerJobInstance: "4"
  workersPerJobInstance: "2"
  modelReplicasPerWorker: "2"
  workers:
    template:
      spec:
        nodeSelector: {ipu-operator.dev/real-node: "true"}
        tolerations: [{key: ipu-operator.dev/real-node, operator: Exists, effect: NoSchedule}]
        terminationGracePeriodSeconds: 1
        containers:
        - name: train
          image: $IPU_CLUSTER_IMAGE_DEBIAN_MPI
          imagePullPolicy: Never
          command:
          - python3
          - -c
          - |
            import os, socket
            from mpi4py import MPI
            comm = MPI.COMM_WORLD
            total = comm.allreduce(comm.Get_rank() + 1)
            print("rank %d of %d on %s: allreduce(rank+1) = %d; POPDIST replicas %s-%s of %s, %s IPU(s) each, partition %s" % (
                comm.Get_rank(), comm.Get_size(), socket.gethostname(), total,
                os.environ["POPDIST_REPLICA_INDEX_OFFSET"],
                int(os.environ["POPDIST_REPLICA_INDEX_OFFSET"]) + int(os.environ["POPDIST_NUM_LOCAL_REPLICAS"]) - 1,
                os.environ["POPDIST_NUM_TOTAL_REPLICAS"], os.environ["POPDIST_NUM_IPUS_PER_REPLICA"],
                os.environ["IPUOF_VIPU_API_PARTITION_ID"]))
MANIFEST
)
  mpi_job=${mpi_job#*/}
  echo "created ipujob/$mpi_job" >&2
  for _ in $(seq 360); do
    phase_now=$("${kubectl[@]}" get ipujob "$mpi_job" -o jsonpath='{.status.phase}')
    [[ $phase_now == Succeeded || $phase_now == Failed ]] && break
    sleep 0.5
  done
  "${kubectl[@]}" get ipujob "$mpi_job"
  "${kubectl[@]}" get pods -l "graphcore.ai/ipujob=$mpi_job" -o wide
  phase "kubectl logs $mpi_job-worker-0   (every rank of the instance, tagged [job,rank] by mpirun)"
  "${kubectl[@]}" logs "$mpi_job-worker-0"
  phase "kubectl logs $mpi_job-worker-1   (the peer: what its agent served)"
  "${kubectl[@]}" logs "$mpi_job-worker-1"
  [[ $phase_now == Succeeded ]] ||
    { echo "demo: ipujob/$mpi_job ended $phase_now; see kubectl describe ipujob $mpi_job" >&2; exit 1; }
  job=$mpi_job
fi

cat >&2 <<DONE

Everything keeps running. Pods on the simulated nodes (kwok) run no container, so 'kubectl logs' says no
program ran there; pods on the real node (as root) run for real. Explore with:
  export KUBECONFIG=$KUBECONFIG PATH=$bin:$repo/build/vipu-ctl:\$PATH
  kubectl get ipuj -o wide; kubectl describe ipujob $job; vipu-ctl --endpoint $vipu list
  kubectl delete ipujob $job        # the operator releases the partition
Stop everything with: tools/cluster.sh down
DONE
