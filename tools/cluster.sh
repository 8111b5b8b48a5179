#!/usr/bin/env bash
# A local Kubernetes cluster on loopback for tests and the demo: etcd, kube-apiserver (RBAC, service-account
# keys, client-certificate admin), kube-controller-manager (garbage collector on), kube-scheduler, and kwok
# managing simulated "IPU host" nodes; with --real-node also a real kubelet + containerd node and CoreDNS,
# its pods' cluster DNS (tools/cluster/real-node.sh). Every port is free-picked unless given; everything lives in one directory;
# `down` leaves nothing running, mounted or attached.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)

usage() {
  cat <<USAGE
Usage: tools/cluster.sh <command> [options]

Commands:
  up       start a cluster (fails if one already runs in --dir)
  down     stop the cluster in --dir and delete its state (logs are kept in <dir>/logs)
  status   say which components of the cluster in --dir run
  env      print shell exports for the cluster in --dir (eval "\$(tools/cluster.sh env)")
  restart COMPONENT
           stop one component (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok, and with
           a real node coredns and kube-proxy) and start it again as it was, waiting until the cluster is healthy: for tests
           of clients that must survive it
  stop COMPONENT, start COMPONENT
           the two halves of restart, for tests that act while the component is down (starting
           kube-apiserver restarts kwok too: kwok does not always resume its pods after an outage)

Options:
  --dir DIR             cluster directory (default: $repo/.cluster)
  --nodes N             simulated IPU host nodes, 1-500 (default: 4)
  --ipu-pods LIST       comma-separated IPU-POD names the nodes reach, nodes spread over them
                        round-robin (default: pod64)
  --apiserver-port P    kube-apiserver port (default: a free port)
  --etcd-port P         etcd client port (default: a free port)
  --bin-dir DIR         where kube-apiserver, etcd, kwok... are (default: built by tools/build-tools.sh)
  --timeout S           seconds to wait for each component (default: 120)
  --real-node           also start a real node, real-node-0: kubelet + a private containerd + runc, pods on a
                        CNI bridge of their own; label and taint ipu-operator.dev/real-node=true (NoSchedule),
                        so only pods that tolerate and select it run there; CoreDNS on the node IP port 53
                        answers cluster.local for its pods; kube-proxy (iptables) gives them the Services'
                        IPs, the API server included: it listens on the node IP (the bridge's address)
                        instead of 127.0.0.1, so in-cluster clients (an operator installed with Helm)
                        reach it as pods do in a real cluster. Needs root
  --images LIST         with --real-node: comma-separated images built by tools/images/build-<name>.sh and
                        imported into the node, named in cluster.env as IPU_CLUSTER_IMAGE_<NAME> (a dash
                        becomes an underscore: IPU_CLUSTER_IMAGE_IPU_RUNTIME) (default: busybox; also
                        busybox-notar (busybox without tar),
                        debian-mpi, debian-mpi-ssh (debian-mpi with sshd, for the MPI Operator), debian-notebook
                        (a Jupyter Notebook server), and from this build's
                        binaries: ipu-runtime (\$IPU_RUNTIME_BINARY or build/runtime/ipu-runtime),
                        ipu-operator (\$IPU_OPERATOR_BINARY or build/operator/ipu-operator), vipu-sim
                        (\$VIPU_SIM_BINARY or build/vipu-sim/vipu-sim); the pause image is always there)
  --kueue               also run Kueue (tools/cluster/kueue.sh): its CRDs, the kueue process with IPUJob as an
                        external framework and its webhooks for Kueue's own kinds; extra Configuration
                        lines (a multiKueue section, feature gates) from \$IPU_CLUSTER_KUEUE_CONFIG
  --audit-all           the audit log records every client's requests (metadata only), not only service
                        accounts': for benchmarks that count each controller's requests by user agent
  -h, --help            this help
USAGE
}

die_usage() { echo "cluster: $*" >&2; echo "Run 'tools/cluster.sh --help' for usage." >&2; exit 2; }

command=${1:-}
[[ -n $command ]] || { usage >&2; exit 2; }
shift
restart_component=""
case $command in
  up | down | status | env) ;;
  restart | stop | start)
    restart_component=${1:-}
    [[ -n $restart_component && $restart_component != -* ]] || die_usage "$command needs a component name"
    shift
    ;;
  -h | --help) usage; exit 0 ;;
  *) die_usage "unknown command '$command'" ;;
esac

cluster_dir=$repo/.cluster
nodes=4
ipu_pods=pod64
apiserver_port=""
etcd_port=""
bin_dir=""
start_timeout=120
real_node=false
images=busybox
images_given=false
audit_all=false
kueue=false

need_value() { [[ $# -ge 2 && -n $2 ]] || die_usage "option $1 needs a value"; }
is_port() { [[ $1 =~ ^[0-9]+$ ]] && (($1 >= 1 && $1 <= 65535)); }
while [[ $# -gt 0 ]]; do
  case $1 in
    --dir) need_value "$@"; cluster_dir=$2; shift 2 ;;
    --nodes) need_value "$@"; nodes=$2; shift 2 ;;
    --ipu-pods) need_value "$@"; ipu_pods=$2; shift 2 ;;
    --apiserver-port) need_value "$@"; apiserver_port=$2; shift 2 ;;
    --etcd-port) need_value "$@"; etcd_port=$2; shift 2 ;;
    --bin-dir) need_value "$@"; bin_dir=$2; shift 2 ;;
    --timeout) need_value "$@"; start_timeout=$2; shift 2 ;;
    --real-node) real_node=true; shift ;;
    --images) need_value "$@"; images=$2; images_given=true; shift 2 ;;
    --audit-all) audit_all=true; shift ;;
    --kueue) kueue=true; shift ;;
    -h | --help) usage; exit 0 ;;
    *) die_usage "unknown option '$1'" ;;
  esac
done

{ [[ $nodes =~ ^[0-9]+$ ]] && ((nodes >= 1 && nodes <= 500)); } || die_usage "--nodes must be a number from 1 to 500, not '$nodes'"
[[ $ipu_pods =~ ^[a-z0-9]([-a-z0-9]*[a-z0-9])?(,[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$ ]] ||
  die_usage "--ipu-pods must be comma-separated lower-case names (like pod64,pod16-b), not '$ipu_pods'"
[[ -z $apiserver_port ]] || is_port "$apiserver_port" || die_usage "--apiserver-port must be a port number, not '$apiserver_port'"
[[ -z $etcd_port ]] || is_port "$etcd_port" || die_usage "--etcd-port must be a port number, not '$etcd_port'"
{ [[ $start_timeout =~ ^[0-9]+$ ]] && ((start_timeout > 0)); } || die_usage "--timeout must be a positive number of seconds, not '$start_timeout'"
[[ $images_given == false || $real_node == true ]] || die_usage "--images needs --real-node"
[[ $real_node == false || $command == up ]] || die_usage "--real-node goes with up"
[[ $audit_all == false || $command == up ]] || die_usage "--audit-all goes with up"
[[ $kueue == false || $command == up ]] || die_usage "--kueue goes with up"
IFS=, read -r -a image_list <<< "$images"
for image in "${image_list[@]}"; do
  [[ $image =~ ^[a-z0-9-]+$ && -x $here/images/build-$image.sh ]] ||
    die_usage "--images: no image '$image' (there is tools/images/build-<name>.sh for: $(cd "$here/images" && printf '%s\n' build-*.sh | sed 's/^build-//; s/\.sh$//' | paste -sd, -))"
done
mkdir -p "$cluster_dir"
cluster_dir=$(cd "$cluster_dir" && pwd)

# shellcheck source=cluster/processes.sh
source "$here/cluster/processes.sh"
# shellcheck source=cluster/pki.sh
source "$here/cluster/pki.sh"
# shellcheck source=cluster/real-node.sh
source "$here/cluster/real-node.sh"
# shellcheck source=cluster/kueue.sh
source "$here/cluster/kueue.sh"

port_in_use() { [[ -n $(ss -Hltn "sport = :$1" 2>/dev/null) ]]; }
taken_ports=" "
# pick_port <variable> <component> [requested]: the requested port if it is free (an error if not), else a
# free one. Assigns the variable (no subshell, so ports picked earlier in this run are never picked again).
pick_port() {
  local port=${3:-}
  if [[ -n $port ]]; then
    if port_in_use "$port"; then
      echo "cluster: port $port ($2) is already in use; choose another or omit the option to pick a free one" >&2
      return 1
    fi
  else
    while :; do
      # Below Linux's ephemeral range (32768+), where outgoing connections could take the port between
      # this check and the component's bind.
      port=$((20000 + RANDOM % 12000))
      [[ $taken_ports != *" $port "* ]] && ! port_in_use "$port" && break
    done
  fi
  taken_ports+="$port "
  printf -v "$1" '%s' "$port"
}

cluster_running() { [[ -f $cluster_dir/pids/order ]] && proc_alive kube-apiserver; }

cmd_status() {
  [[ -f $cluster_dir/pids/order ]] || { echo "no cluster in $cluster_dir"; return 3; }
  local name state=0
  while IFS= read -r name; do
    if proc_alive "$name"; then echo "$name: running (pid $(proc_pid "$name"))"; else echo "$name: stopped"; state=3; fi
  done < "$cluster_dir/pids/order"
  return $state
}

cmd_env() {
  [[ -f $cluster_dir/cluster.env ]] || { echo "cluster: no cluster in $cluster_dir (run: tools/cluster.sh up)" >&2; return 1; }
  sed 's/^/export /' "$cluster_dir/cluster.env"
}

# check_component [running]: the component name is valid and the cluster exists (and runs, if asked).
check_component() {
  case $restart_component in
    etcd | kube-apiserver | kube-controller-manager | kube-scheduler | kwok | coredns | kube-proxy | kueue) ;;
    *) die_usage "unknown component '$restart_component' (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok, coredns, kube-proxy, kueue)" ;;
  esac
  if [[ $restart_component == kueue && ! -f $cluster_dir/pids/kueue.cmd ]]; then
    echo "cluster: no kueue in $cluster_dir: it runs only with up --kueue" >&2
    return 1
  fi
  if [[ $restart_component == coredns || $restart_component == kube-proxy ]] &&
    [[ ! -f $cluster_dir/pids/$restart_component.cmd ]]; then
    echo "cluster: no $restart_component in $cluster_dir: it runs only with a real node (up --real-node)" >&2
    return 1
  fi
  if [[ ${1:-} == running ]] && ! cluster_running; then
    echo "cluster: no cluster runs in $cluster_dir" >&2
    return 1
  fi
  [[ -f $cluster_dir/cluster.env ]] || { echo "cluster: no cluster in $cluster_dir" >&2; return 1; }
  # shellcheck disable=SC1091
  source "$cluster_dir/cluster.env"
}

cmd_stop() {
  check_component running
  proc_stop "$restart_component"
  echo "cluster: stopped $restart_component" >&2
}

cmd_start() {
  check_component
  local started=$SECONDS pki=$cluster_dir/pki
  proc_alive "$restart_component" || proc_restart "$restart_component"
  case $restart_component in
    etcd) proc_wait_until etcd "etcd to be healthy" curl -sf "$IPU_CLUSTER_ETCD/health" ;;
    coredns) proc_wait_until coredns "CoreDNS to be ready" curl -sf "$IPU_CLUSTER_COREDNS_READY" ;;
    kueue) proc_wait_until kueue "Kueue to be ready" curl -sf "$IPU_CLUSTER_KUEUE_HEALTH/readyz" ;;
    *) proc_wait_until "$restart_component" "$restart_component to serve" true ;;
  esac
  proc_wait_until kube-apiserver "kube-apiserver to be ready" \
    curl -sf --cacert "$pki/ca.crt" --cert "$pki/admin.crt" --key "$pki/admin.key" "$IPU_CLUSTER_APISERVER/readyz"
  # Controllers reconnect with backoff after an outage: the cluster is back only when they act again,
  # e.g. the service-account controller fills a new namespace.
  local kubectl=("$IPU_CLUSTER_BIN_DIR/kubectl" --kubeconfig "$KUBECONFIG") probe="restart-probe-$RANDOM"
  "${kubectl[@]}" create namespace "$probe" > /dev/null
  proc_wait_until kube-controller-manager "controllers to act again" "${kubectl[@]}" -n "$probe" get serviceaccount default
  "${kubectl[@]}" delete namespace "$probe" --wait=false > /dev/null
  # kwok, the stand-in for the kubelets, does not always go on playing its pods' stages once the API server is
  # back (v0.8.0: after one restart it patched no pod for the three minutes that followed, while it kept
  # renewing its node leases); kubelets reconnect. So it starts again with the API server.
  if [[ $restart_component == kube-apiserver ]] && proc_alive kwok; then
    proc_restart kwok
    proc_wait_until kwok "kwok to serve" true
  fi
  echo "cluster: started $restart_component; the cluster was healthy again after $((SECONDS - started)) s" >&2
}

cmd_restart() {
  cmd_stop
  cmd_start
}

# stop_everything: the real node first (its pods are deleted through the API server), then the rest.
stop_everything() {
  real_node_down
  proc_stop_all
}

cmd_down() {
  stop_everything
  rm -rf "$cluster_dir/etcd" "$cluster_dir/pki" "$cluster_dir"/*.kubeconfig "$cluster_dir/kubeconfig" \
    "$cluster_dir/cluster.env" "$cluster_dir/kwok" "$cluster_dir/audit-policy.yaml" "$cluster_dir/kueue"
  echo "cluster: stopped; logs kept in $cluster_dir/logs" >&2
}

# The Services' ClusterIP range (the kubernetes Service is its first address, 10.96.0.1).
service_cidr=10.96.0.0/16

# write_audit_policy: the API server's audit log (logs/audit.log, one JSON event per request, metadata only)
# records what service accounts outside kube-system do: an operator installed in the cluster, whose requests
# tests compare with the roles its chart grants. The cluster's own components are left out (they would fill
# the disk with heartbeats). With --audit-all it records every request. The log is never rotated (the API
# server's default rotates at 100 MB, which a benchmark of thousands of pods passes, and counts read one file).
write_audit_policy() {
  if [[ $audit_all == true ]]; then
    printf '%s\n' "apiVersion: audit.k8s.io/v1" "kind: Policy" "omitStages: [RequestReceived]" \
      "rules:" "- level: Metadata" > "$cluster_dir/audit-policy.yaml"
    return
  fi
  cat > "$cluster_dir/audit-policy.yaml" <<'POLICY'
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: None
  userGroups: ["system:serviceaccounts:kube-system"]
- level: Metadata
  userGroups: ["system:serviceaccounts"]
- level: None
POLICY
}

# Whether every simulated node is Ready, counted from one list (`kubectl wait` takes a node at a time, and a
# hundred of them outlast any short timeout). Uses the caller's kubectl array.
simulated_nodes_ready() {
  local ready
  ready=$("${kubectl[@]}" get nodes --selector ipu.graphcore.ai/host=true \
    -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' | grep -c '^True$')
  ((ready == nodes))
}

write_nodes_manifest() {
  local i pods pod
  IFS=, read -r -a pods <<< "$ipu_pods"
  for ((i = 0; i < nodes; i++)); do
    pod=${pods[i % ${#pods[@]}]}
    cat <<NODE
---
apiVersion: v1
kind: Node
metadata:
  name: ipu-host-$i
  annotations:
    kwok.x-k8s.io/node: fake
  labels:
    kubernetes.io/hostname: ipu-host-$i
    kubernetes.io/os: linux
    kubernetes.io/arch: amd64
    type: kwok
    ipu.graphcore.ai/host: "true"
    ipu.graphcore.ai/ipu-pod: $pod
    ipu.graphcore.ai/vipu-controller: $pod
status:
  allocatable: {cpu: "96", memory: 512Gi, pods: "110"}
  capacity: {cpu: "96", memory: 512Gi, pods: "110"}
NODE
  done
}

cmd_up() {
  if cluster_running; then
    echo "cluster: a cluster already runs in $cluster_dir (stop it with: tools/cluster.sh down --dir $cluster_dir)" >&2
    return 1
  fi
  local started=$SECONDS
  if [[ -z $bin_dir ]]; then
    bin_dir=$("$here/build-tools.sh" --quiet)
  fi
  local b
  for b in etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok; do
    [[ -x $bin_dir/$b ]] || { echo "cluster: $bin_dir/$b is missing or not executable" >&2; return 1; }
  done
  [[ $real_node == false ]] || real_node_preflight

  pick_port apiserver_port kube-apiserver "$apiserver_port"
  pick_port etcd_port etcd "$etcd_port"
  local etcd_peer_port cm_port scheduler_port kwok_port
  pick_port etcd_peer_port "etcd peer"
  pick_port cm_port kube-controller-manager
  pick_port scheduler_port kube-scheduler
  pick_port kwok_port kwok

  # Fresh state; the previous run's logs stay one generation.
  stop_everything
  rm -rf "$cluster_dir/etcd" "$cluster_dir/pki" "$cluster_dir/kwok" "$cluster_dir/logs.previous"
  [[ -d $cluster_dir/logs ]] && mv "$cluster_dir/logs" "$cluster_dir/logs.previous"
  mkdir -p "$cluster_dir/logs" "$cluster_dir/pids" "$cluster_dir/kwok"
  : > "$cluster_dir/pids/order"
  # From here on a failure stops whatever was started.
  trap 'status=$?; if ((status != 0)); then echo "cluster: start failed; stopping what was started (logs in $cluster_dir/logs)" >&2; stop_everything; fi' EXIT

  # The API server's address: loopback, or with a real node the node's bridge address, where its pods
  # reach it (through the kubernetes Service) and nothing beyond the machine does.
  apiserver_address=127.0.0.1
  if [[ $real_node == true ]]; then
    real_node_network_up
    apiserver_address=$node_ip
  fi
  pki_create
  local pki=$cluster_dir/pki apiserver_url=https://$apiserver_address:$apiserver_port
  write_audit_policy
  kubeconfig_write "$cluster_dir/kubeconfig" admin embed
  kubeconfig_write "$cluster_dir/controller-manager.kubeconfig" controller-manager
  kubeconfig_write "$cluster_dir/scheduler.kubeconfig" scheduler
  kubeconfig_write "$cluster_dir/kwok.kubeconfig" kwok

  proc_start etcd "$bin_dir/etcd" --name local --data-dir "$cluster_dir/etcd" \
    --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
    --listen-peer-urls "http://127.0.0.1:$etcd_peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer_port" \
    --initial-cluster "local=http://127.0.0.1:$etcd_peer_port" --unsafe-no-fsync --log-level warn
  proc_wait_until etcd "etcd to be healthy" curl -sf "http://127.0.0.1:$etcd_port/health"

  # podtemplates bypass the watch cache so that tests can force a 410 Gone by compacting etcd (a cached
  # resource answers old versions from memory).
  # The kubernetes Service's endpoint is kept by the API server (lease reconciler) only where pods can
  # use it: an endpoint on loopback is refused.
  local endpoint_reconciler=none
  [[ $real_node == false ]] || endpoint_reconciler=lease
  # OwnerReferencesPermissionEnforcement, as hardened clusters run it: an owner reference that blocks the
  # owner's deletion needs update on the owner's finalizers, which an operator's roles must then grant.
  proc_start kube-apiserver "$bin_dir/kube-apiserver" --etcd-servers "http://127.0.0.1:$etcd_port" \
    --bind-address "$apiserver_address" --advertise-address "$apiserver_address" --secure-port "$apiserver_port" \
    --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" --client-ca-file "$pki/ca.crt" \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-account-key-file "$pki/service-account.pub" --service-account-signing-key-file "$pki/service-account.key" \
    --service-cluster-ip-range "$service_cidr" --authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction,OwnerReferencesPermissionEnforcement \
    --allow-privileged=true --kubelet-client-certificate "$pki/apiserver-kubelet-client.crt" \
    --kubelet-client-key "$pki/apiserver-kubelet-client.key" --profiling=false --cert-dir "$cluster_dir/pki" \
    --endpoint-reconciler-type "$endpoint_reconciler" --kubelet-preferred-address-types InternalIP,Hostname \
    --watch-cache-sizes podtemplates#0 --audit-policy-file "$cluster_dir/audit-policy.yaml" \
    --audit-log-path "$cluster_dir/logs/audit.log" --audit-log-format json --audit-log-maxsize 100000
  proc_wait_until kube-apiserver "kube-apiserver to be ready" \
    curl -sf --cacert "$pki/ca.crt" --cert "$pki/admin.crt" --key "$pki/admin.key" "$apiserver_url/readyz"

  proc_start kube-controller-manager "$bin_dir/kube-controller-manager" \
    --kubeconfig "$cluster_dir/controller-manager.kubeconfig" --authentication-kubeconfig "$cluster_dir/controller-manager.kubeconfig" \
    --authorization-kubeconfig "$cluster_dir/controller-manager.kubeconfig" --leader-elect=false \
    --root-ca-file "$pki/ca.crt" --service-account-private-key-file "$pki/service-account.key" \
    --use-service-account-credentials --bind-address 127.0.0.1 --secure-port "$cm_port" --cert-dir "$cluster_dir/pki" \
    --controllers '*' --profiling=false
  proc_start kube-scheduler "$bin_dir/kube-scheduler" --kubeconfig "$cluster_dir/scheduler.kubeconfig" \
    --authentication-kubeconfig "$cluster_dir/scheduler.kubeconfig" --authorization-kubeconfig "$cluster_dir/scheduler.kubeconfig" \
    --leader-elect=false --bind-address 127.0.0.1 --secure-port "$scheduler_port" --cert-dir "$cluster_dir/pki" --profiling=false

  # kwok: stages from the repo and canned logs that say plainly that no container ran. Its nodes renew
  # Leases as kubelets do (40 s): without them the node lifecycle controller finds every node silent after
  # its grace period, marks them NotReady and all their pods not Ready, and kwok makes the nodes Ready again
  # — a change of every pod that a cluster of real kubelets never sees, and that controllers watching pods
  # would pay for in what should be an idle cluster.
  printf '%s stdout F %s\n' "$(date -u +%Y-%m-%dT%H:%M:%S.000000000Z)" \
    "simulated IPU host node (kwok): no container runs here, so there is no program output to show" \
    > "$cluster_dir/kwok/simulated-node.log"
  {
    cat "$here/cluster/kwok-stages.yaml"
    cat <<KWOKLOGS
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterLogs
metadata:
  name: simulated-node-logs
spec:
  selector: {}
  logs:
  - logsFile: $cluster_dir/kwok/simulated-node.log
KWOKLOGS
  } > "$cluster_dir/kwok/kwok.yaml"
  proc_start kwok "$bin_dir/kwok" --kubeconfig "$cluster_dir/kwok.kubeconfig" --config "$cluster_dir/kwok/kwok.yaml" \
    --manage-nodes-with-annotation-selector kwok.x-k8s.io/node=fake --node-ip 127.0.0.1 --node-port "$kwok_port" \
    --server-address "127.0.0.1:$kwok_port" --tls-cert-file "$pki/kwok-serving.crt" \
    --tls-private-key-file "$pki/kwok-serving.key" --cidr 10.244.0.0/16 --node-lease-duration-seconds 40

  local kubectl=("$bin_dir/kubectl" --kubeconfig "$cluster_dir/kubeconfig")
  proc_wait_until kube-controller-manager "kube-controller-manager to be healthy" \
    curl -sfk "https://127.0.0.1:$cm_port/healthz"
  proc_wait_until kube-scheduler "kube-scheduler to be healthy" curl -sfk "https://127.0.0.1:$scheduler_port/healthz"
  write_nodes_manifest | "${kubectl[@]}" apply -f - > /dev/null
  proc_wait_until kwok "the simulated nodes to be Ready" simulated_nodes_ready
  # Pods cannot be created in a namespace before its default service account exists.
  proc_wait_until kube-controller-manager "the default service account" "${kubectl[@]}" get serviceaccount default
  local control_plane_time=$((SECONDS - started)) real_node_env=""
  [[ $real_node == false ]] || real_node_up "${image_list[@]}"
  local kueue_env=""
  if [[ $kueue == true ]]; then
    kueue_extra_config=${IPU_CLUSTER_KUEUE_CONFIG:-}
    kueue_up
  fi

  cat > "$cluster_dir/cluster.env" <<ENV
KUBECONFIG=$cluster_dir/kubeconfig
IPU_CLUSTER_DIR=$cluster_dir
IPU_CLUSTER_BIN_DIR=$bin_dir
IPU_CLUSTER_APISERVER=$apiserver_url
IPU_CLUSTER_ETCD=http://127.0.0.1:$etcd_port
IPU_CLUSTER_AUDIT_LOG=$cluster_dir/logs/audit.log
ENV
  printf '%s' "$real_node_env" "$kueue_env" >> "$cluster_dir/cluster.env"
  trap - EXIT
  local what="$nodes simulated IPU host node(s) ($ipu_pods)"
  [[ $real_node == false ]] || what+=" and the real node $real_node_name (control plane after $control_plane_time s)"
  [[ $kueue == false ]] || what+=", Kueue"
  echo "cluster: up in $((SECONDS - started)) s: $apiserver_url, $what" >&2
  echo "cluster: export KUBECONFIG=$cluster_dir/kubeconfig   (or: eval \"\$(tools/cluster.sh env --dir $cluster_dir)\")" >&2
}

"cmd_$command"
