# shellcheck shell=bash
# Kueue as a process of the local cluster (sourced by cluster.sh; `up --kueue`): its CRDs applied
# server-side from the module's tree, its Configuration (every port our own, leader election and its
# internal certificate management off, IPUJob registered as an external framework), a serving certificate
# from the cluster's CA for its webhooks, and the webhook configurations of Kueue's own kinds pointing at it.
#
# Kueue reads its metrics certificate from the fixed path /etc/kueue/metrics/certs even with metrics off: it
# runs in a mount namespace of its own where /etc is an overlay on a tmpfs that holds that file, so the
# machine's /etc is never written.
# shellcheck disable=SC2154 # cluster_dir, bin_dir, here: globals of tools/cluster.sh; pki, kubectl: locals of its cmd_up, which calls kueue_up

# kueue_config <webhook port> <health port>: the Configuration (strict: an unknown field stops Kueue).
kueue_config() {
  cat <<CONFIG
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: kueue-system
health:
  healthProbeBindAddress: 127.0.0.1:$2
metrics:
  bindAddress: "0"
webhook:
  host: 127.0.0.1
  port: $1
  certDir: $cluster_dir/kueue/certs
leaderElection:
  leaderElect: false
internalCertManagement:
  enable: false
manageJobsWithoutQueueName: false
integrations:
  frameworks: []
  externalFrameworks:
  - IPUJob.v1alpha1.graphcore.ai
featureGates:
  VisibilityOnDemand: false
${kueue_extra_config:-}
CONFIG
}

# kueue_up: after the control plane is healthy. Uses cluster.sh's globals (bin_dir, cluster_dir, pki,
# kubectl) and sets kueue_env for cluster.env.
kueue_up() {
  local started=$SECONDS dir=$cluster_dir/kueue crds
  crds=$(readlink -f "$bin_dir/kueue-crds")
  [[ -x $bin_dir/kueue && -d $crds ]] || { echo "cluster: $bin_dir/kueue or its CRDs ($bin_dir/kueue-crds) are missing" >&2; return 1; }
  local webhook_port health_port
  pick_port webhook_port "kueue webhook"
  pick_port health_port "kueue health"
  rm -rf "$dir" && mkdir -p "$dir/certs" "$dir/etc"
  pki_issue kueue-webhook "/CN=kueue-webhook" "extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,DNS:localhost"
  cp "$pki/kueue-webhook.crt" "$dir/certs/tls.crt" && cp "$pki/kueue-webhook.key" "$dir/certs/tls.key"
  pki_issue kueue "/O=system:masters/CN=kueue" "extendedKeyUsage=clientAuth"
  kubeconfig_write "$cluster_dir/kueue.kubeconfig" kueue
  kueue_config "$webhook_port" "$health_port" > "$dir/config.yaml"

  "${kubectl[@]}" apply --server-side --force-conflicts -f "$crds" > /dev/null
  "${kubectl[@]}" wait --for condition=established --timeout 60s -f "$crds" > /dev/null
  "${kubectl[@]}" create namespace kueue-system --dry-run=client -o yaml | "${kubectl[@]}" apply -f - > /dev/null

  # The overlay's upper and work directories live on a tmpfs of the namespace (an overlay's upper layer
  # cannot be on every filesystem the cluster directory may be on).
  # shellcheck disable=SC2016 # expanded by the inner shell
  proc_start kueue unshare --mount --propagation private -- sh -c '
    set -e
    mount -t tmpfs -o size=1m,mode=0700 kueue-etc "$1"
    mkdir -p "$1/upper/kueue/metrics/certs" "$1/work"
    cp "$2/tls.crt" "$2/tls.key" "$1/upper/kueue/metrics/certs/"
    mount -t overlay overlay -o "lowerdir=/etc,upperdir=$1/upper,workdir=$1/work" /etc
    shift 2
    exec "$@"' kueue-sh "$dir/etc" "$dir/certs" \
    env KUBECONFIG="$cluster_dir/kueue.kubeconfig" "$bin_dir/kueue" --config "$dir/config.yaml" --zap-log-level info
  proc_wait_until kueue "Kueue to be ready" curl -sf "http://127.0.0.1:$health_port/readyz"
  python3 "$here/cluster/kueue-webhooks.py" "$crds/../../webhook/manifests.yaml" 127.0.0.1 "$webhook_port" \
    "$pki/ca.crt" | "${kubectl[@]}" apply -f - > /dev/null
  echo "cluster: Kueue ready in $((SECONDS - started)) s (webhooks on 127.0.0.1:$webhook_port)" >&2
  # shellcheck disable=SC2034 # read by cluster.sh's cmd_up, whose local it is
  kueue_env="IPU_CLUSTER_KUEUE_HEALTH=http://127.0.0.1:$health_port
"
}
