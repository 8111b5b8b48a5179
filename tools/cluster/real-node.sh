# shellcheck shell=bash
# The real node of the local cluster (sourced by cluster.sh): kubelet + a private containerd (2.x, built by
# tools/build-tools.sh: it mounts images as volumes) + runc + CNI bridge, so that end-to-end tests run real containers and `kubectl logs` shows real output; and CoreDNS on
# the node IP, the cluster DNS of its pods (cluster.local), so that they find each other by name.
#
# kube-proxy (iptables mode) gives its pods the Services' ClusterIPs: their CNI routes send the Service range
# to the node, whose PREROUTING rules turn 10.96.0.1:443 into the API server on the node IP. Nothing is
# forwarded or masqueraded: a Service must have its endpoints on the node itself (the API server) to be
# reachable; pods reach each other directly (headless Services, CoreDNS).
#
# Everything the node starts or mounts lives under <dir>/real-node and is undone by real_node_down. What
# cannot live there is named per cluster directory (bridge, CNI network, cgroup root) and removed on down:
#   - the CNI bridge ipurn-<hash>, which carries the node's address (kubelet refuses a loopback node IP);
#   - the cgroup root /ipu-real-node-<hash> in every cgroup hierarchy (kubepods and the pods below it);
#   - /var/lib/cni/results/*-<sandbox id>-* (libcni's cache; containerd cannot move it);
#   - /run/containerd/s/<hash> (containerd's shim sockets: fixed directory, socket per containerd address);
#   - /var/log/containers/* links into <dir> and /var/lib/kubelet/device-plugins/kubelet.sock, both at
#     paths compiled into the kubelet: one real node per machine (checked on up);
#   - kube-proxy's KUBE-* chains in the machine's iptables (kube-proxy --cleanup on down).
# Directories the node had to create outside <dir> are recorded and removed on down when empty, and the
# kernel settings the kubelet changes at start (kernel.panic...) are put back as soon as the node is Ready.

real_node_name=real-node-0
# shellcheck disable=SC2154 # cluster_dir: a global of tools/cluster.sh, which sources this file
real_node_dir=$cluster_dir/real-node
real_node_label=ipu-operator.dev/real-node
cni_bin_dir=/usr/lib/cni
# Host paths the kubelet or containerd may create; removed on down when we created them and they are empty.
real_node_host_dirs=(/var/lib/kubelet/device-plugins /var/lib/kubelet /var/log/containers /var/lib/cni/results
  /var/lib/cni /run/containerd/s /run/containerd)
# What the kubelet sets at start unless protectKernelDefaults (which would instead refuse to start here).
real_node_sysctls=(vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops kernel.keys.root_maxkeys
  kernel.keys.root_maxbytes)

real_node_ctr() { "$(real_node_bin_dir)/ctr" --address "$real_node_dir/containerd.sock" --namespace k8s.io "$@"; }

# real_node_names: names and addresses derived from the cluster directory, so that clusters in different
# directories never share a bridge, subnet, CNI network or cgroup.
real_node_names() {
  local hash
  hash=$(printf '%s' "$cluster_dir" | sha256sum | cut -c1-8)
  bridge=ipurn-$hash
  bridge_mac=02:1b:${hash:0:2}:${hash:2:2}:${hash:4:2}:${hash:6:2}
  cni_network=ipu-real-node-$hash
  cgroup_root=/ipu-real-node-$hash
  # A /24 in 10.200.0.0-10.239.255.0: clear of kwok's 10.244.0.0/16, the services' 10.96.0.0/16 and
  # containerd's default 10.88.0.0/16; the next one if a route on this machine covers it already.
  local n=$((16#${hash:0:6} % 10240)) tries routes
  for ((tries = 0; tries < 64; tries++)); do
    pod_subnet=10.$((200 + n / 256 % 40)).$((n % 256)).0/24
    routes=$( { ip -4 route show match "$pod_subnet"; ip -4 route show root "$pod_subnet"; } | grep -v '^default' || true)
    [[ -z $routes ]] && break
    n=$((n + 1))
  done
  node_ip=${pod_subnet%.0/24}.1
}

# A cgroup v1 hierarchy per controller (plus the v2 "unified" one in hybrid mode), or the v2 root.
real_node_cgroup_mounts() { findmnt -rn -t cgroup,cgroup2 -o TARGET; }

real_node_preflight() {
  [[ $(id -u) == 0 ]] || { echo "cluster: --real-node needs root (containers, mounts, a bridge)" >&2; return 1; }
  local b missing=()
  for b in runc ip findmnt iptables-restore; do command -v "$b" > /dev/null || missing+=("$b"); done
  for b in bridge host-local loopback portmap; do [[ -x $cni_bin_dir/$b ]] || missing+=("$cni_bin_dir/$b"); done
  # shellcheck disable=SC2154 # bin_dir: a global of tools/cluster.sh, which sources this file
  for b in kubelet containerd containerd-shim-runc-v2 ctr; do [[ -x $bin_dir/$b ]] || missing+=("$bin_dir/$b"); done
  [[ -x $bin_dir/coredns ]] || missing+=("$bin_dir/coredns")
  [[ -x $bin_dir/kube-proxy ]] || missing+=("$bin_dir/kube-proxy")
  if ((${#missing[@]} > 0)); then
    echo "cluster: --real-node needs ${missing[*]} (run tools/install-deps.sh)" >&2
    return 1
  fi
  # Unix socket paths are limited to 107 bytes.
  if ((${#real_node_dir} + 22 > 107)); then
    echo "cluster: --dir is too long for containerd's socket path ($real_node_dir/containerd.sock.ttrpc): use a shorter one" >&2
    return 1
  fi
  local pid cmdline
  for pid in $(pgrep -x kubelet || true); do
    # An exited kubelet that its parent has not reaped yet has an empty command line: it holds nothing.
    cmdline=$(tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null || true)
    [[ -z $cmdline || $cmdline == *"$cluster_dir"* ]] && continue
    echo "cluster: another kubelet runs on this machine (pid $pid); a real node needs the machine's fixed kubelet paths (/var/lib/kubelet/device-plugins, /var/log/containers) to itself" >&2
    return 1
  done
}

real_node_write_containerd_config() {
  local ctrd=$real_node_dir/containerd
  cat > "$ctrd/config.toml" <<TOML
# containerd for the real node of $cluster_dir only: its own root, state, sockets and runc root, so that a
# system containerd (/run/containerd, /var/lib/containerd) is neither used nor disturbed.
version = 3
root = "$ctrd/root"
state = "$ctrd/state"
# Not the machine's /etc/containerd/conf.d.
imports = []
# Snapshotters that cannot work here only log errors; NRI would listen on a fixed host socket.
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.blockfile", "io.containerd.snapshotter.v1.erofs",
  "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing", "io.containerd.nri.v1.nri"]

[grpc]
  address = "$real_node_dir/containerd.sock"
[ttrpc]
  address = "$real_node_dir/containerd.sock.ttrpc"

[plugins."io.containerd.internal.v1.opt"]
  path = "$ctrd/opt"

[plugins."io.containerd.grpc.v1.cri"]
  # exec/attach/port-forward streams, proxied by the kubelet.
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"

[plugins."io.containerd.cri.v1.images"]
  snapshotter = "overlayfs"
  # No registry: the sandbox image is built and imported locally.
  [plugins."io.containerd.cri.v1.images".pinned_images]
    sandbox = "$pause_image"

[plugins."io.containerd.cri.v1.runtime"]
  # Pods' network namespaces under the state directory, not /var/run/netns.
  netns_mounts_under_state_dir = true
  # Root here lacks CAP_SYS_RESOURCE (not in its bounding set), so runc cannot lower a process's
  # oom_score_adj (the kubelet asks -998 for sandboxes): clamp to containerd's own score instead.
  restrict_oom_score_adj = true
  [plugins."io.containerd.cri.v1.runtime".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
        # cgroupfs, like the kubelet: no systemd on these machines.
        SystemdCgroup = false
        Root = "$ctrd/runc"
  [plugins."io.containerd.cri.v1.runtime".cni]
    bin_dirs = ["$cni_bin_dir"]
    conf_dir = "$real_node_dir/cni"
    max_conf_num = 1
TOML
}

# One bridge that we create (it must exist before the kubelet, whose node IP is its address); no default
# route, masquerading or IP forwarding: pods talk to each other and to the node, never beyond.
# containerd runs the loopback plugin itself for each pod's lo.
real_node_write_cni_config() {
  # shellcheck disable=SC2154 # service_cidr: a global of tools/cluster.sh, which sources this file
  cat > "$real_node_dir/cni/10-$cni_network.conflist" <<JSON
{
  "cniVersion": "1.0.0",
  "name": "$cni_network",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$bridge",
      "isGateway": false,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [[{"subnet": "$pod_subnet", "gateway": "$node_ip"}]],
        "routes": [{"dst": "$service_cidr", "gw": "$node_ip"}],
        "dataDir": "$real_node_dir/cni-ipam"
      }
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
JSON
}

real_node_write_kubelet_config() {
  local pki=$cluster_dir/pki kubelet=$real_node_dir/kubelet
  # shellcheck disable=SC2154 # kubelet_port, kubelet_healthz_port: globals of tools/cluster.sh, which sources this file
  cat > "$kubelet/config.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# Served on the node IP (the bridge's address), where the API server reaches it for logs and exec.
address: $node_ip
port: $kubelet_port
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $kubelet_healthz_port
tlsCertFile: $pki/kubelet-serving.crt
tlsPrivateKeyFile: $pki/kubelet-serving.key
# Only clients with a certificate from the cluster CA (the API server's kubelet client, the admin) get in;
# they may do anything: acceptable for a throw-away local test node, and no SubjectAccessReview round trip.
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: $pki/ca.crt}
authorization:
  mode: AlwaysAllow
# Certificates are issued by tools/cluster/pki.sh: no TLS bootstrap, no rotation.
rotateCertificates: false
serverTLSBootstrap: false
containerRuntimeEndpoint: unix://$real_node_dir/containerd.sock
imageServiceEndpoint: unix://$real_node_dir/containerd.sock
# cgroup v1 (these VMs' hierarchy) is refused by default since 1.35; cgroupfs because there is no systemd
# (the kubelet's default, and what containerd is configured with above).
failCgroupV1: false
cgroupDriver: cgroupfs
# Our own cgroup root, created by cluster.sh and removed on down, so no kubepods cgroup is left behind.
cgroupRoot: $cgroup_root
failSwapOn: false
# Keep everything under the cluster directory: logs, volume plugins; no static pods, no iptables chains.
podLogsDir: $kubelet/pod-logs
volumePluginDir: $kubelet/volume-plugins
staticPodPath: ""
makeIPTablesUtilChains: false
# Cluster DNS (CoreDNS on the node IP, real_node_start_coredns): pods get "nameserver <node IP>" and the
# search path <namespace>.svc.cluster.local svc.cluster.local cluster.local.
clusterDNS: [$node_ip]
clusterDomain: cluster.local
# At most 512 processes per pod, as a shared cluster's nodes limit them: a pod that forks without bound fails
# itself, not the node (the e2e tests flood a worker's agent with connections under this limit).
podPidsLimit: 512
# Images cannot be pulled again: never garbage-collect them, and evict only when a disk is really full.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: 100Mi, nodefs.available: 2%, imagefs.available: 2%, nodefs.inodesFree: 2%}
# Tests' other pods never land here: e2e pods tolerate this taint and select the label.
registerWithTaints:
- {key: $real_node_label, value: "true", effect: NoSchedule}
YAML
}

# real_node_start_coredns: CoreDNS serving cluster.local from the API server on the node IP, port 53 (UDP and
# TCP), where the pods reach it and nothing beyond the bridge does. There is no forward (this machine has no
# way out, and tests must not take one): names outside the cluster's zones get REFUSED at once, since no
# server block holds them; unknown names inside them get NXDOMAIN. health and ready listen on loopback; up
# waits for ready, i.e. until the kubernetes plugin has listed the API. Its identity may only list and watch
# what the plugin reads (without "pods verified" it never reads pods). Adds to real_node_env.
real_node_start_coredns() {
  local kubectl=("$bin_dir/kubectl" --kubeconfig "$cluster_dir/kubeconfig") dns_dir=$real_node_dir/coredns
  local health_port ready_port
  mkdir -p "$dns_dir"
  pki_issue coredns "/CN=ipu-operator:coredns" "extendedKeyUsage=clientAuth"
  kubeconfig_write "$cluster_dir/coredns.kubeconfig" coredns
  "${kubectl[@]}" apply -f - > /dev/null <<YAML
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "ipu-operator:coredns"}
rules:
- {apiGroups: [""], resources: [services, namespaces], verbs: [list, watch]}
- {apiGroups: [discovery.k8s.io], resources: [endpointslices], verbs: [list, watch]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "ipu-operator:coredns"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "ipu-operator:coredns"}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: "ipu-operator:coredns"}
YAML
  pick_port health_port "coredns health"
  pick_port ready_port "coredns ready"
  # in-addr.arpa/ip6.arpa too: PTR records for the pods of headless Services (what MPI prints as host
  # names), NXDOMAIN for other addresses. No cache: a test that asks right after a pod starts must not get
  # a stale NXDOMAIN.
  cat > "$dns_dir/Corefile" <<COREFILE
cluster.local:53 in-addr.arpa:53 ip6.arpa:53 {
    bind $node_ip
    errors
    log
    health 127.0.0.1:$health_port
    ready 127.0.0.1:$ready_port
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig $cluster_dir/coredns.kubeconfig ipu-local
        ttl 5
    }
}
COREFILE
  proc_start coredns "$bin_dir/coredns" -conf "$dns_dir/Corefile"
  proc_wait_until coredns "CoreDNS to be ready" curl -sf "http://127.0.0.1:$ready_port/ready"
  real_node_env+="IPU_CLUSTER_DNS=$node_ip
IPU_CLUSTER_COREDNS_READY=http://127.0.0.1:$ready_port/ready
"
}

# real_node_record_host_dirs: remembers which fixed host directories do not exist yet.
real_node_record_host_dirs() {
  local d
  for d in "${real_node_host_dirs[@]}"; do [[ -e $d ]] || echo "$d"; done > "$real_node_dir/created-host-dirs"
}

real_node_make_cgroups() {
  local mount
  for mount in $(real_node_cgroup_mounts); do
    mkdir -p "$mount$cgroup_root"
    # A new v1 cpuset starts with no CPUs and no memory nodes: give it its parent's.
    if [[ -f $mount/cpuset.cpus && ! -f $mount/cgroup.controllers ]]; then
      cat "$mount/cpuset.cpus" > "$mount$cgroup_root/cpuset.cpus"
      cat "$mount/cpuset.mems" > "$mount$cgroup_root/cpuset.mems"
    fi
  done
}

# real_node_network_up: the node's directory and its bridge, whose address (node_ip) the API server listens
# on: the first thing cluster.sh does for a real node, before the certificates (which name that address).
real_node_network_up() {
  real_node_names
  rm -rf --one-file-system "$real_node_dir"
  mkdir -p "$real_node_dir"/{containerd,cni,cni-ipam,kubelet/root}
  real_node_record_host_dirs
  printf 'bridge=%s\ncni_network=%s\ncgroup_root=%s\npod_subnet=%s\nnode_ip=%s\n' \
    "$bridge" "$cni_network" "$cgroup_root" "$pod_subnet" "$node_ip" > "$real_node_dir/node.env"
  # A bridge without an address of its own takes the lowest of its ports' addresses, so it changes as pods
  # come and go, and every pod's ARP entry for the node IP (cluster DNS, the API server) points at a
  # vanished address until it is probed again: lookups and connections stall for tens of seconds while
  # other pods start or stop. A fixed, locally administered address (02:…) from the node's hash keeps it.
  ip link add "$bridge" address "$bridge_mac" type bridge
  ip addr add "$node_ip/24" dev "$bridge"
  ip link set "$bridge" up
}

# real_node_start_kube_proxy: kube-proxy in iptables mode for this node. NodePorts only on the node IP (never
# the machine's other interfaces, never localhost: that would need route_localnet), and the machine's
# conntrack settings left as they are.
real_node_start_kube_proxy() {
  local health_port metrics_port
  pick_port health_port "kube-proxy healthz"
  pick_port metrics_port "kube-proxy metrics"
  pki_issue kube-proxy "/CN=system:kube-proxy" "extendedKeyUsage=clientAuth"
  kubeconfig_write "$cluster_dir/kube-proxy.kubeconfig" kube-proxy
  cat > "$real_node_dir/kube-proxy.yaml" <<YAML
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $cluster_dir/kube-proxy.kubeconfig}
hostnameOverride: $real_node_name
mode: iptables
healthzBindAddress: 127.0.0.1:$health_port
metricsBindAddress: 127.0.0.1:$metrics_port
nodePortAddresses: ["$node_ip/32"]
iptables: {localhostNodePorts: false, masqueradeAll: false}
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
YAML
  proc_start kube-proxy "$bin_dir/kube-proxy" --config "$real_node_dir/kube-proxy.yaml"
  proc_wait_until kube-proxy "kube-proxy to be healthy" curl -sf "http://127.0.0.1:$health_port/healthz"
}

# real_node_up <images...>: builds and imports the images (pause always), starts containerd, the kubelet and
# kube-proxy, waits for the node to be Ready. Sets real_node_env to the lines cluster.sh adds to cluster.env.
# (cluster.sh runs real_node_preflight first, before anything starts, and real_node_network_up.)
real_node_up() {
  local started=$SECONDS images=("$@") image ref archive
  local s
  for s in "${real_node_sysctls[@]}"; do echo "$s=$(sysctl -n "$s")"; done > "$real_node_dir/sysctls.saved"

  # Images first: a cold build takes a while (and says so), and nothing runs yet.
  real_node_env=""
  local pause_image built
  # shellcheck disable=SC2154 # here (the tools folder): a global of tools/cluster.sh, which sources this file
  built=$("$here/images/build-pause.sh")
  read -r pause_image archive <<< "$built"
  local archives=("$archive")
  for image in "${images[@]}"; do
    built=$("$here/images/build-$image.sh")
    read -r ref archive <<< "$built"
    archives+=("$archive")
    local var=${image//-/_}
    real_node_env+="IPU_CLUSTER_IMAGE_${var^^}=$ref"$'\n'
  done

  real_node_make_cgroups
  real_node_write_containerd_config
  real_node_write_cni_config
  # Before the kubelet, so that the first pod can already resolve names.
  real_node_start_coredns

  # containerd finds its runc shim on PATH: the one built with it first.
  proc_start containerd env PATH="$bin_dir:$PATH" "$bin_dir/containerd" --config "$real_node_dir/containerd/config.toml" \
    --log-level warn
  proc_wait_until containerd "containerd to serve" real_node_ctr version
  # ctr repeats containerd's deprecation notices (cgroup v1 here) on every call: shown only when it fails.
  for archive in "${archives[@]}"; do
    real_node_ctr images import "$archive" > /dev/null 2> "$real_node_dir/ctr-import.err" ||
      { cat "$real_node_dir/ctr-import.err" >&2; return 1; }
  done

  pick_port kubelet_port kubelet
  pick_port kubelet_healthz_port "kubelet healthz"
  pki_issue kubelet "/O=system:nodes/CN=system:node:$real_node_name" "extendedKeyUsage=clientAuth"
  pki_issue kubelet-serving "/CN=system:node:$real_node_name" "extendedKeyUsage=serverAuth
subjectAltName=IP:$node_ip,DNS:$real_node_name"
  kubeconfig_write "$cluster_dir/kubelet.kubeconfig" kubelet
  real_node_write_kubelet_config
  # shellcheck disable=SC2154 # ipu_pods: a global of tools/cluster.sh, which sources this file
  proc_start kubelet "$bin_dir/kubelet" --config "$real_node_dir/kubelet/config.yaml" \
    --kubeconfig "$cluster_dir/kubelet.kubeconfig" --root-dir "$real_node_dir/kubelet/root" \
    --hostname-override "$real_node_name" --node-ip "$node_ip" \
    --node-labels "$real_node_label=true,ipu.graphcore.ai/host=true,ipu.graphcore.ai/ipu-pod=${ipu_pods%%,*},ipu.graphcore.ai/vipu-controller=${ipu_pods%%,*}"
  local kubectl=("$bin_dir/kubectl" --kubeconfig "$cluster_dir/kubeconfig")
  proc_wait_until kubelet "the real node to be Ready" \
    "${kubectl[@]}" wait --for=condition=Ready "node/$real_node_name" --timeout 2s
  real_node_restore_sysctls
  real_node_start_kube_proxy
  real_node_env+="IPU_CLUSTER_REAL_NODE=$real_node_name
IPU_CLUSTER_REAL_NODE_IP=$node_ip
IPU_CLUSTER_IMAGE_PAUSE=$pause_image
IPU_CLUSTER_CONTAINERD=$real_node_dir/containerd.sock
"
  echo "cluster: real node $real_node_name Ready after $((SECONDS - started)) s (pods on $bridge, $pod_subnet; cluster DNS on $node_ip:53)" >&2
}

# The kubelet set these once at start; put the machine's own values back.
real_node_restore_sysctls() {
  local saved=$real_node_dir/sysctls.saved line
  [[ -f $saved ]] || return 0
  while read -r line; do
    [[ $(sysctl -n "${line%%=*}") == "${line#*=}" ]] || sysctl -q -w "$line" || true
  done < "$saved"
  rm -f "$saved"
}

# real_node_bin_dir: where the cluster's binaries are; down has no --bin-dir, but the cluster remembers.
real_node_bin_dir() {
  echo "${bin_dir:-$(sed -n 's/^IPU_CLUSTER_BIN_DIR=//p' "$cluster_dir/cluster.env" 2>/dev/null)}"
}

# real_node_drain: deletes the node's pods through the API so that the kubelet stops them the proper way
# (CNI DEL releases addresses and host ports, volumes are unmounted), waiting at most 30 s.
real_node_drain() {
  proc_alive kubelet && proc_alive kube-apiserver && proc_alive containerd || return 0
  local bin
  bin=$(real_node_bin_dir)
  [[ -x $bin/kubectl ]] || return 0
  local kubectl=("$bin/kubectl" --kubeconfig "$cluster_dir/kubeconfig" --request-timeout 10s)
  "${kubectl[@]}" delete pods --all-namespaces --field-selector "spec.nodeName=$real_node_name" \
    --force --grace-period 0 --wait=false > /dev/null 2>&1 || return 0
  local deadline=$((SECONDS + 30))
  while ((SECONDS < deadline)); do
    [[ -z $(real_node_ctr tasks list --quiet 2>/dev/null) ]] &&
      [[ -z $(findmnt -rn -o TARGET | grep -F "$real_node_dir/containerd/state/" | head -n 1) ]] &&
      [[ -z $(findmnt -rn -o TARGET | grep -F "$real_node_dir/kubelet/root/pods/" | head -n 1) ]] && return 0
    sleep 0.2
  done
  echo "cluster: the real node's pods did not stop within 30 s; killing what is left" >&2
}

# real_node_down: stops the node and removes everything it made, also after a crash or a half-done up.
real_node_down() {
  [[ -f $real_node_dir/node.env ]] || return 0
  # shellcheck disable=SC1091
  source "$real_node_dir/node.env"
  real_node_drain
  proc_stop kubelet
  real_node_stop_kube_proxy
  if proc_alive containerd; then
    local task
    for task in $(real_node_ctr tasks list --quiet 2>/dev/null); do
      real_node_ctr tasks kill --signal SIGKILL "$task" > /dev/null 2>&1 || true
    done
    for task in $(real_node_ctr tasks list --quiet 2>/dev/null); do
      real_node_ctr tasks delete --force "$task" > /dev/null 2>&1 || true
    done
  fi
  proc_stop containerd
  # Before its address goes with the bridge.
  proc_stop coredns
  real_node_kill_leftovers
  real_node_unmount_all
  ip link show "$bridge" > /dev/null 2>&1 && ip link delete "$bridge"
  # Per sandbox: libcni's cache of its results (left when it was not torn down through CNI) and its shim's
  # socket (left when the shim was killed), named sha256(<containerd address>/<namespace>/<sandbox id>).
  local sandbox id
  for sandbox in "$real_node_dir"/containerd/root/io.containerd.grpc.v1.cri/sandboxes/*; do
    [[ -d $sandbox ]] || continue
    id=$(basename "$sandbox")
    rm -f /var/lib/cni/results/*-"$id"-*
    rm -f "/run/containerd/s/$(printf '%s' "$real_node_dir/containerd.sock/k8s.io/$id" | sha256sum | cut -d' ' -f1)"
  done
  rm -f /var/lib/kubelet/device-plugins/kubelet.sock
  local link
  for link in /var/log/containers/*.log; do
    [[ -L $link && $(readlink "$link") == "$real_node_dir/"* ]] && rm -f "$link"
  done
  real_node_remove_cgroups
  local dir
  if [[ -f $real_node_dir/created-host-dirs ]]; then
    while read -r dir; do rmdir "$dir" 2>/dev/null || true; done < "$real_node_dir/created-host-dirs"
  fi
  real_node_restore_sysctls
  rm -rf --one-file-system "$real_node_dir" "$cluster_dir/kubelet.kubeconfig" "$cluster_dir/coredns.kubeconfig" \
    "$cluster_dir/kube-proxy.kubeconfig"
}

# real_node_stop_kube_proxy: stops it and removes its iptables chains (also after a crash: they outlive it).
real_node_stop_kube_proxy() {
  proc_stop kube-proxy
  local bin
  bin=$(real_node_bin_dir)
  # An up killed before it wrote cluster.env: the cached binaries.
  [[ -x $bin/kube-proxy ]] || bin=$("$here/build-tools.sh" --quiet 2>/dev/null || true)
  if [[ -x $bin/kube-proxy ]] && iptables-save 2>/dev/null | grep -q 'KUBE-'; then
    "$bin/kube-proxy" --cleanup >> "$cluster_dir/logs/kube-proxy.log" 2>&1 ||
      echo "cluster: kube-proxy --cleanup failed (see $cluster_dir/logs/kube-proxy.log)" >&2
  fi
  # --cleanup leaves KUBE-FIREWALL (kubelets share it); no other kubelet runs here (preflight), so the
  # KUBE-* chains that remain are this node's.
  local family table chain rule
  for family in iptables ip6tables; do
    for table in filter nat mangle; do
      for chain in $("$family-save" -t "$table" 2>/dev/null | sed -n 's/^:\(KUBE-[^ ]*\) .*/\1/p'); do
        "$family-save" -t "$table" | grep -- "-j $chain\( \|$\)" | grep '^-A ' | while read -r rule; do
          # shellcheck disable=SC2086
          "$family" -t "$table" -D ${rule#-A } 2>/dev/null || true
        done
        "$family" -t "$table" -F "$chain" 2>/dev/null || true
      done
      for chain in $("$family-save" -t "$table" 2>/dev/null | sed -n 's/^:\(KUBE-[^ ]*\) .*/\1/p'); do
        "$family" -t "$table" -X "$chain" 2>/dev/null ||
          echo "cluster: could not remove the $family chain $table/$chain" >&2
      done
    done
  done
}

# Shims (containerd starts them in their own process groups) and container processes that outlived
# containerd: only processes whose command line names this node's containerd socket, or that sit in this
# node's cgroups, are ours.
real_node_kill_leftovers() {
  local mount pids
  mapfile -t pids < <( {
    pgrep -f -- "-address $real_node_dir/containerd.sock" || true
    for mount in $(real_node_cgroup_mounts); do
      [[ -d $mount$cgroup_root ]] && find "$mount$cgroup_root" -name cgroup.procs -exec cat {} + 2>/dev/null
    done
  } | sort -un)
  ((${#pids[@]} > 0)) || return 0
  echo "cluster: killing ${#pids[@]} leftover process(es) of the real node" >&2
  kill -KILL "${pids[@]}" 2>/dev/null || true
  sleep 0.5
}

# Everything mounted under the node's directory (overlay root filesystems, network namespaces, pod volumes,
# the kubelet's bind mount of its own root), deepest first; a busy mount is detached lazily rather than
# left behind. Several passes for mounts stacked on one target.
real_node_unmount_all() {
  local target
  for _ in 1 2 3; do
    for target in $(findmnt -rn -o TARGET | grep -F "$real_node_dir/" | sort -r || true); do
      umount "$target" 2>/dev/null || umount -l "$target" 2>/dev/null || true
    done
  done
  if findmnt -rn -o TARGET | grep -qF "$real_node_dir/"; then
    echo "cluster: could not unmount everything under $real_node_dir:" >&2
    findmnt -rn -o TARGET | grep -F "$real_node_dir/" >&2
  fi
}

real_node_remove_cgroups() {
  local mount
  for mount in $(real_node_cgroup_mounts); do
    [[ -d $mount$cgroup_root ]] || continue
    find "$mount$cgroup_root" -depth -type d -exec rmdir {} + 2>/dev/null ||
      echo "cluster: could not remove cgroup $mount$cgroup_root (processes left in it?)" >&2
  done
}
