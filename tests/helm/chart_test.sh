#!/usr/bin/env bash
# Checks of the Helm chart deploy/helm/ipu-operator: helm lint; what renders and what must fail to render
# (no V-IPU controller, a typo in the values, a bad controller name, several replicas without leader
# election); the chart's CRDs against crds/; the rendered RBAC (no wildcards, no listing or watching of
# Secrets, nothing in the aggregated roles that forges a job's status or writes a quota); and, with a cluster
# (KUBECONFIG), every rendered object through the API server's validation and admission with
# `kubectl apply --dry-run=server` in a scratch namespace that is deleted at the end.
#
# Usage: tests/helm/chart_test.sh [--no-cluster]
#   --no-cluster  skip the server-side part (without it, a missing KUBECONFIG fails the test)
# helm and kubectl come from tools/build-tools.sh; python3 (installed with python3-mpi4py by
# tools/install-deps.sh) reads the rendered objects, which kubectl turns into JSON.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
chart=$repo/deploy/helm/ipu-operator

no_cluster=false
for arg in "$@"; do
  case $arg in
    --no-cluster) no_cluster=true ;;
    -h | --help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "chart_test: unknown option '$arg' (accepted: --no-cluster)" >&2; exit 2 ;;
  esac
done

command -v python3 > /dev/null || { echo "chart_test: python3 is missing (run tools/install-deps.sh)" >&2; exit 1; }
bin=$("$repo/tools/build-tools.sh" --quiet)
helm=$bin/helm
kubectl=$bin/kubectl
# This helm is built without the Kubernetes version stamp and would check the chart's kubeVersion against
# v1.20; render for the version the local cluster runs instead (a server's own version in the cluster part).
# shellcheck source=../../tools/versions.env
source "$repo/tools/versions.env"
kube_version=$KUBERNETES_VERSION

work=$(mktemp -d)
scratch_ns=""
cleanup() {
  if [[ -n $scratch_ns ]]; then
    "$kubectl" delete namespace "$scratch_ns" --wait=false --ignore-not-found > /dev/null 2>&1 ||
      echo "chart_test: could not delete namespace $scratch_ns" >&2
  fi
  rm -rf "$work"
}
trap cleanup EXIT
# helm keeps nothing in the user's home.
export HELM_CACHE_HOME=$work/helm/cache HELM_CONFIG_HOME=$work/helm/config HELM_DATA_HOME=$work/helm/data

failures=0
checks=0
pass() { checks=$((checks + 1)); echo "ok    $1"; }
# fail <check> <detail lines...>
fail() {
  checks=$((checks + 1)) failures=$((failures + 1))
  echo "FAIL  $1"
  shift
  local line
  for line in "$@"; do
    while IFS= read -r l; do echo "        $l"; done <<< "$line"
  done
}

release=chart-test
namespace=ipu-system
# Two V-IPU controllers, as an admin of a cluster with two IPU-PODs would give them.
cat > "$work/two-controllers.yaml" << 'VALUES'
vipuControllers:
  - name: pod64-a
    host: vipu-a.example.com
    port: 8090
  - name: pod64-b
    host: 10.0.0.5
    port: 8091
VALUES
# Every optional operator flag set.
cat > "$work/all-flags.yaml" << 'VALUES'
shmSize: 16Gi
partitionIdPrefix: lab-1
logLevel: debug
qps: 25.5
burst: 60
workers: 4
queueingStrategy: StrictFIFO
missingQuota: deny
workerPods:
  profile: privileged
  admissionPolicy: false
pods:
  startTimeoutSeconds: 0
  deletionTimeoutSeconds: 90
interactive:
  ttlSeconds: 3600
  maxTtlSeconds: 43200
  idleSeconds: 1800
outputs:
  retainSeconds: 300
  maxRetainSeconds: 7200
orphanSweep:
  intervalSeconds: 60
  dryRun: true
vipuTls:
  enabled: true
  secretName: vipu-tls
  clientCertificate: true
  serverName: vipu.example.com
runtime:
  image:
    repository: registry.example.com/ipu-runtime
    tag: "1.2.3"
    pullPolicy: Always
  delivery: image-volume
vipuProxy:
  httpPort: 0
VALUES

# render <output file> <helm template args...>: the rendered objects in <output>, helm's messages in
# <output>.err; the status is helm's.
render() {
  local out=$1
  shift
  "$helm" template "$release" "$chart" --namespace "$namespace" --kube-version "$kube_version" "$@" \
    > "$out" 2> "$out.err"
}

# to_json <yaml file> <json file>: the objects as a stream of JSON documents (kubectl, offline).
to_json() {
  "$kubectl" label --local -f "$1" -o json chart-test-unused- > "$2" 2> "$2.err"
}

# py_check <check> <json file> <python code>: the code sees `objects` (the rendered objects) and appends what
# is wrong to `problems`.
py_check() {
  local name=$1 file=$2 code=$3 output
  if output=$(python3 - "$file" 3<<< "$code" << 'PY'
import json, sys
text = open(sys.argv[1]).read()
decoder, position, objects = json.JSONDecoder(), 0, []
while True:
    while position < len(text) and text[position].isspace():
        position += 1
    if position == len(text):
        break
    value, position = decoder.raw_decode(text, position)
    objects.extend(value.get("items", []) if value.get("kind") == "List" else [value])
def named(kind, name=None):
    return [o for o in objects if o["kind"] == kind and (name is None or o["metadata"]["name"] == name)]
def describe(o):
    return o["kind"] + "/" + o["metadata"]["name"]
problems = []
exec(open("/dev/fd/3").read())
print("\n".join(problems))
sys.exit(1 if problems else 0)
PY
  ); then
    pass "$name"
  else
    fail "$name" "$output"
  fi
}

# expect_render_fail <check> <expected message (grep -E)> <helm template args...>
expect_render_fail() {
  local name=$1 expected=$2
  shift 2
  if render "$work/fail.yaml" "$@"; then
    fail "$name" "helm template $* succeeded; it must fail with: $expected"
  elif ! grep -Eq -- "$expected" "$work/fail.yaml.err"; then
    fail "$name" "helm template $* failed, but not with the expected message ($expected):" "$(cat "$work/fail.yaml.err")"
  else
    pass "$name: $(grep -Em1 -- "$expected" "$work/fail.yaml.err" |
      sed -E 's/^Error: (execution error at \([^)]*\): )?//; s/^[- ]*//' | cut -c1-120)"
  fi
}

echo "chart_test: $chart (helm $("$helm" version --template '{{.Version}}'), Kubernetes $kube_version)"

# --- 1. helm lint --strict -------------------------------------------------------------------------------
for variant in "--set vipuSim.enabled=true" "-f $work/two-controllers.yaml"; do
  # shellcheck disable=SC2086 # the variant is two words on purpose
  if output=$("$helm" lint --strict "$chart" --namespace "$namespace" --kube-version "$kube_version" $variant 2>&1); then
    pass "helm lint --strict ${variant/$work\//}"
  else
    fail "helm lint --strict ${variant/$work\//}" "$output"
  fi
done

# --- 2. what renders, and what must not ------------------------------------------------------------------
expect_render_fail "default values (no V-IPU controller, no simulator) do not render" \
  'no V-IPU controller: set vipuControllers'
expect_render_fail "a typo in the values (replicaCont) fails at the schema" \
  "additional properties 'replicaCont' not allowed" --set vipuSim.enabled=true --set replicaCont=2
expect_render_fail "a V-IPU controller name that is not a label value fails at the schema" \
  "/vipuControllers/0/name.*does not match pattern" \
  --set 'vipuControllers[0].name=Bad Name!,vipuControllers[0].host=vipu.example.com,vipuControllers[0].port=8090'
expect_render_fail "replicaCount=2 without leader election does not render" \
  'leaderElection.enabled=false with replicaCount=2' \
  --set vipuSim.enabled=true --set replicaCount=2,leaderElection.enabled=false
expect_render_fail "a V-IPU controller name given twice does not render" 'the name "pod64-a" is given twice' \
  -f "$work/two-controllers.yaml" --set 'vipuControllers[1].name=pod64-a'
expect_render_fail "an unknown queueingStrategy fails at the schema" "/queueingStrategy" \
  --set vipuSim.enabled=true --set queueingStrategy=LIFO
expect_render_fail "an unknown runtime.delivery fails at the schema" "/runtime/delivery" \
  --set vipuSim.enabled=true --set runtime.delivery=ImageVolume
expect_render_fail "a POD map page address without a port does not render" 'podMapPage.bindAddress' \
  --set vipuSim.enabled=true,podMapPage.enabled=true,podMapPage.bindAddress=localhost
expect_render_fail "a V-IPU client certificate without the Secret holding it does not render" \
  'vipuTls.clientCertificate needs vipuTls.secretName' \
  --set vipuSim.enabled=true --set vipuTls.enabled=true,vipuTls.clientCertificate=true

sim_ok=false
if render "$work/sim.yaml" --set vipuSim.enabled=true && to_json "$work/sim.yaml" "$work/sim.json"; then
  sim_ok=true
  pass "renders with vipuSim.enabled=true ($(grep -c '^kind:' "$work/sim.yaml") objects)"
else
  fail "renders with vipuSim.enabled=true" "$(cat "$work/sim.yaml.err" "$work/sim.json.err" 2> /dev/null)"
fi
page_ok=false
if render "$work/page.yaml" --set vipuSim.enabled=true,podMapPage.enabled=true && to_json "$work/page.yaml" "$work/page.json" &&
  render "$work/page-wide.yaml" --set vipuSim.enabled=true,podMapPage.enabled=true,podMapPage.bindAddress=:8095 &&
  to_json "$work/page-wide.yaml" "$work/page-wide.json"; then
  page_ok=true
  pass "renders with the POD map page on loopback and bound wider"
else
  fail "renders with the POD map page on loopback and bound wider" \
    "$(cat "$work/page.yaml.err" "$work/page.json.err" "$work/page-wide.yaml.err" "$work/page-wide.json.err" 2> /dev/null)"
fi
two_ok=false
if render "$work/two.yaml" -f "$work/two-controllers.yaml" -f "$work/all-flags.yaml" \
  --set metrics.serviceMonitor.enabled=true && to_json "$work/two.yaml" "$work/two.json"; then
  two_ok=true
  pass "renders with two vipuControllers, every optional flag and the ServiceMonitor ($(grep -c '^kind:' "$work/two.yaml") objects)"
else
  fail "renders with two vipuControllers, every optional flag and the ServiceMonitor" \
    "$(cat "$work/two.yaml.err" "$work/two.json.err" 2> /dev/null)"
fi

if $sim_ok; then
  py_check "objects of the default install: the operator, its ServiceAccount, RBAC, Lease, metrics Service, PDB, V-IPU proxy, vipu-sim" \
    "$work/sim.json" '
expected = {("Deployment", "chart-test-ipu-operator"), ("Deployment", "chart-test-vipu-sim"),
            ("Service", "chart-test-ipu-operator-metrics"), ("Service", "chart-test-vipu-sim"),
            ("ServiceAccount", "chart-test-ipu-operator"), ("ClusterRole", "chart-test-ipu-operator"),
            ("ClusterRoleBinding", "chart-test-ipu-operator"), ("ClusterRole", "chart-test-ipu-operator-edit"),
            ("ClusterRole", "chart-test-ipu-operator-view"), ("ClusterRole", "chart-test-ipu-operator-pod-map-reader"),
            ("ClusterRoleBinding", "chart-test-ipu-operator-pod-map-reader"),
            ("Role", "chart-test-ipu-operator-leader-election"),
            ("RoleBinding", "chart-test-ipu-operator-leader-election"),
            ("Service", "chart-test-ipu-operator-vipu-proxy"), ("EndpointSlice", "chart-test-ipu-operator-vipu-proxy"),
            ("Role", "chart-test-ipu-operator-vipu-proxy"), ("RoleBinding", "chart-test-ipu-operator-vipu-proxy"),
            ("PodDisruptionBudget", "chart-test-ipu-operator"), ("Lease", "ipu-operator"),
            ("ValidatingAdmissionPolicy", "chart-test-ipu-operator-worker-pods"),
            ("ValidatingAdmissionPolicyBinding", "chart-test-ipu-operator-worker-pods")}
found = {(o["kind"], o["metadata"]["name"]) for o in objects}
for missing in sorted(expected - found): problems.append("missing: %s/%s" % missing)
for extra in sorted(found - expected): problems.append("not expected: %s/%s" % extra)
if named("ServiceMonitor"): problems.append("a ServiceMonitor is rendered although metrics.serviceMonitor.enabled is false")
cluster_scoped = {"ClusterRole", "ClusterRoleBinding", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"}
for o in objects:
    ns = o["metadata"].get("namespace")
    if o["kind"] not in cluster_scoped and ns != "ipu-system":
        problems.append("%s is in namespace %r, not the release namespace ipu-system" % (describe(o), ns))
    labels = o["metadata"].get("labels", {})
    for key in ("app.kubernetes.io/name", "app.kubernetes.io/instance", "app.kubernetes.io/version",
                "app.kubernetes.io/managed-by", "app.kubernetes.io/component", "helm.sh/chart"):
        if key not in labels: problems.append("%s has no label %s" % (describe(o), key))
'
  py_check "the worker pod policy: only the operator's own IPUJob-controlled pods may have hostIPC and IPC_LOCK, in labelled namespaces" \
    "$work/sim.json" '
policy = named("ValidatingAdmissionPolicy", "chart-test-ipu-operator-worker-pods")[0]["spec"]
variables = {v["name"]: v["expression"] for v in policy["variables"]}
if "system:serviceaccount:ipu-system:chart-test-ipu-operator" not in variables.get("ipuWorker", ""):
    problems.append("ipuWorker does not name the operator ServiceAccount: %s" % variables.get("ipuWorker"))
if "IPC_LOCK" not in variables.get("allowedCapabilities", "") or "variables.ipuWorker ?" not in variables.get("allowedCapabilities", ""):
    problems.append("IPC_LOCK is not allowed to IPUJob workers alone: %s" % variables.get("allowedCapabilities"))
if policy.get("failurePolicy") != "Fail": problems.append("failurePolicy %s" % policy.get("failurePolicy"))
binding = named("ValidatingAdmissionPolicyBinding", "chart-test-ipu-operator-worker-pods")[0]["spec"]
if binding.get("policyName") != "chart-test-ipu-operator-worker-pods" or binding.get("validationActions") != ["Deny"]:
    problems.append("binding %s" % binding)
if binding.get("matchResources", {}).get("namespaceSelector") != {"matchLabels": {"graphcore.ai/ipujobs": "enabled"}}:
    problems.append("the binding selects %s" % binding.get("matchResources"))
'
  py_check "operator Deployment: 2 replicas, leader election, probes, ports, non-root, read-only root, no capabilities" \
    "$work/sim.json" '
d = named("Deployment", "chart-test-ipu-operator")[0]
spec = d["spec"]["template"]["spec"]
c = spec["containers"][0]
args = c["args"]
def after(flag):
    return [args[i + 1] for i, a in enumerate(args[:-1]) if a == flag]
if d["spec"]["replicas"] != 2: problems.append("replicas %r, not 2" % d["spec"]["replicas"])
if "--leader-elect" not in args: problems.append("no --leader-elect in %s" % args)
if after("--leader-election-namespace") != ["ipu-system"]: problems.append("--leader-election-namespace is not ipu-system")
if after("--vipu-controller") != ["pod64=chart-test-vipu-sim.ipu-system.svc:8090"]:
    problems.append("--vipu-controller %s, not the simulator" % after("--vipu-controller"))
if after("--metrics-bind-address") != [":8080"]: problems.append("--metrics-bind-address %s" % after("--metrics-bind-address"))
if after("--health-probe-bind-address") != [":8081"]: problems.append("--health-probe-bind-address %s" % after("--health-probe-bind-address"))
if after("--runtime-image") != ["localhost/ipu-operator/ipu-runtime:0.1.0"]: problems.append("--runtime-image %s" % after("--runtime-image"))
for flag in ("--qps", "--burst", "--workers", "--shm-size", "--partition-id-prefix", "--queueing-strategy", "--missing-quota",
             "--vipu-tls", "--vipu-ca-cert", "--vipu-client-cert", "--vipu-client-key", "--vipu-tls-server-name",
             "--pod-start-timeout-seconds", "--pod-deletion-timeout-seconds", "--orphan-sweep-interval-seconds",
             "--orphan-sweep-dry-run", "--worker-pod-profile", "--interactive-ttl-seconds",
             "--interactive-max-ttl-seconds", "--outputs-retain-seconds", "--outputs-max-retain-seconds",
             "--interactive-idle-seconds", "--runtime-delivery"):
    if flag in args: problems.append("%s is passed although its value is not set" % flag)
if c["image"] != "localhost/ipu-operator/ipu-operator:0.1.0": problems.append("image %s" % c["image"])
probes = (c.get("livenessProbe", {}).get("httpGet", {}), c.get("readinessProbe", {}).get("httpGet", {}))
if (probes[0].get("path"), probes[0].get("port")) != ("/healthz", "health"): problems.append("livenessProbe %s" % probes[0])
if (probes[1].get("path"), probes[1].get("port")) != ("/readyz", "health"): problems.append("readinessProbe %s" % probes[1])
ports = {p["name"]: p["containerPort"] for p in c.get("ports", [])}
if ports != {"metrics": 8080, "health": 8081, "vipu-proxy": 8090, "vipu-proxy-http": 8091}: problems.append("ports %s" % ports)
want_pod = {"runAsNonRoot": True, "runAsUser": 65532, "runAsGroup": 65532, "seccompProfile": {"type": "RuntimeDefault"}}
for key, value in want_pod.items():
    if spec.get("securityContext", {}).get(key) != value: problems.append("pod securityContext.%s is not %s" % (key, value))
sc = c.get("securityContext", {})
if sc.get("readOnlyRootFilesystem") is not True: problems.append("readOnlyRootFilesystem is not true")
if sc.get("allowPrivilegeEscalation") is not False: problems.append("allowPrivilegeEscalation is not false")
if sc.get("capabilities", {}).get("drop") != ["ALL"]: problems.append("capabilities.drop is not [ALL]")
if spec.get("automountServiceAccountToken") is not True: problems.append("automountServiceAccountToken is not true")
if spec.get("serviceAccountName") != "chart-test-ipu-operator": problems.append("serviceAccountName %s" % spec.get("serviceAccountName"))
mounts = {m["mountPath"]: m["name"] for m in c.get("volumeMounts", [])}
volumes = {v["name"]: v for v in spec.get("volumes", [])}
if "emptyDir" not in volumes.get(mounts.get("/tmp"), {}): problems.append("/tmp is not an emptyDir")
if c.get("resources") != {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"memory": "256Mi"}}:
    problems.append("resources %s" % c.get("resources"))
'
  py_check "V-IPU proxy: workers get its headless Service, whose EndpointSlice the leader may only get and update" \
    "$work/sim.json" '
c = named("Deployment", "chart-test-ipu-operator")[0]["spec"]["template"]["spec"]["containers"][0]
args = c["args"]
def after(flag):
    return [args[i + 1] for i, a in enumerate(args[:-1]) if a == flag]
if after("--vipu-proxy-bind-address") != [":8090"]: problems.append("--vipu-proxy-bind-address %s" % after("--vipu-proxy-bind-address"))
if after("--vipu-proxy-advertise-address") != ["chart-test-ipu-operator-vipu-proxy.ipu-system.svc"]:
    problems.append("--vipu-proxy-advertise-address %s" % after("--vipu-proxy-advertise-address"))
if after("--vipu-proxy-endpoint-slice") != ["ipu-system/chart-test-ipu-operator-vipu-proxy"]:
    problems.append("--vipu-proxy-endpoint-slice %s" % after("--vipu-proxy-endpoint-slice"))
if after("--vipu-proxy-http-port") != ["8091"]: problems.append("--vipu-proxy-http-port %s" % after("--vipu-proxy-http-port"))
env = {e["name"]: e for e in c.get("env", [])}
if env.get("IPU_OPERATOR_POD_IP", {}).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") != "status.podIP":
    problems.append("IPU_OPERATOR_POD_IP is not the pod IP: %s" % env.get("IPU_OPERATOR_POD_IP"))
svc = named("Service", "chart-test-ipu-operator-vipu-proxy")[0]["spec"]
if svc.get("clusterIP") != "None" or "selector" in svc: problems.append("the proxy Service is not headless without a selector: %s" % svc)
if [(p["name"], p["port"]) for p in svc.get("ports", [])] != [("vipu", 8090), ("http", 8091)]:
    problems.append("the proxy Service ports %s" % svc.get("ports"))
eps = named("EndpointSlice", "chart-test-ipu-operator-vipu-proxy")[0]
if eps["metadata"]["labels"].get("kubernetes.io/service-name") != "chart-test-ipu-operator-vipu-proxy" or eps.get("endpoints") != []:
    problems.append("EndpointSlice %s" % eps)
rules = named("Role", "chart-test-ipu-operator-vipu-proxy")[0]["rules"]
if rules != [{"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"],
              "resourceNames": ["chart-test-ipu-operator-vipu-proxy"], "verbs": ["get", "update"]}]:
    problems.append("proxy Role rules %s" % rules)
'
  py_check "vipu-sim: 1 replica, headless Service (clusterIP None), listens on all interfaces, state in an emptyDir, non-root" \
    "$work/sim.json" '
d = named("Deployment", "chart-test-vipu-sim")[0]
spec = d["spec"]["template"]["spec"]
c = spec["containers"][0]
svc = named("Service", "chart-test-vipu-sim")[0]
if d["spec"]["replicas"] != 1: problems.append("replicas %r, not 1" % d["spec"]["replicas"])
if svc["spec"].get("clusterIP") != "None": problems.append("the Service is not headless: clusterIP is %s, not None" % svc["spec"].get("clusterIP", "not set"))
if [p["port"] for p in svc["spec"]["ports"]] != [8090]: problems.append("Service ports %s" % svc["spec"]["ports"])
selector = svc["spec"]["selector"]
pod_labels = d["spec"]["template"]["metadata"]["labels"]
if any(pod_labels.get(k) != v for k, v in selector.items()): problems.append("the Service does not select the simulator pod")
args = c["args"]
if "--listen" not in args or args[args.index("--listen") + 1] != "0.0.0.0:8090": problems.append("--listen is not 0.0.0.0:8090: %s" % args)
if "--state-file" not in args: problems.append("no --state-file")
else:
    state_dir = args[args.index("--state-file") + 1].rsplit("/", 1)[0]
    mounts = {m["mountPath"]: m["name"] for m in c.get("volumeMounts", [])}
    volumes = {v["name"]: v for v in spec.get("volumes", [])}
    if "emptyDir" not in volumes.get(mounts.get(state_dir), {}): problems.append("the state file is not in an emptyDir")
if spec.get("securityContext", {}).get("runAsNonRoot") is not True: problems.append("runAsNonRoot is not true")
sc = c.get("securityContext", {})
if sc.get("readOnlyRootFilesystem") is not True or sc.get("capabilities", {}).get("drop") != ["ALL"] or sc.get("allowPrivilegeEscalation") is not False:
    problems.append("container securityContext %s" % sc)
'
fi

if $page_ok; then
  py_check "the POD map page on loopback: its flag, no Service, no port, no review permissions" "$work/page.json" '
c = named("Deployment", "chart-test-ipu-operator")[0]["spec"]["template"]["spec"]["containers"][0]
args = c["args"]
if [args[i + 1] for i, a in enumerate(args[:-1]) if a == "--pod-map-page-bind-address"] != ["127.0.0.1:8095"]:
    problems.append("--pod-map-page-bind-address not 127.0.0.1:8095: %s" % args)
if named("Service", "chart-test-ipu-operator-pod-map"): problems.append("a pod-map Service on loopback")
if any(p["name"] == "pod-map" for p in c["ports"]): problems.append("a pod-map container port on loopback")
for o in named("ClusterRole"):
    for r in o.get("rules") or []:
        if set(r.get("resources", [])) & {"tokenreviews", "subjectaccessreviews"}: problems.append("%s grants %s" % (describe(o), r))
'
  py_check "the POD map page bound wider: its Service and port, and create (only) on tokenreviews and subjectaccessreviews" \
    "$work/page-wide.json" '
c = named("Deployment", "chart-test-ipu-operator")[0]["spec"]["template"]["spec"]["containers"][0]
if [c["args"][i + 1] for i, a in enumerate(c["args"][:-1]) if a == "--pod-map-page-bind-address"] != [":8095"]:
    problems.append("--pod-map-page-bind-address not :8095: %s" % c["args"])
if {"name": "pod-map", "containerPort": 8095, "protocol": "TCP"} not in c["ports"]: problems.append("ports %s" % c["ports"])
svc = named("Service", "chart-test-ipu-operator-pod-map")
if len(svc) != 1 or svc[0]["spec"]["ports"] != [{"name": "pod-map", "port": 8095, "targetPort": "pod-map", "protocol": "TCP"}]:
    problems.append("pod-map Service %s" % svc)
review = [r for r in named("ClusterRole", "chart-test-ipu-operator")[0]["rules"]
          if set(r["resources"]) & {"tokenreviews", "subjectaccessreviews"}]
if review != [{"apiGroups": ["authentication.k8s.io"], "resources": ["tokenreviews"], "verbs": ["create"]},
              {"apiGroups": ["authorization.k8s.io"], "resources": ["subjectaccessreviews"], "verbs": ["create"]}]:
    problems.append("review rules %s" % review)
'
fi

if $two_ok; then
  py_check "two vipuControllers and every optional flag reach the operator's arguments" "$work/two.json" '
args = named("Deployment", "chart-test-ipu-operator")[0]["spec"]["template"]["spec"]["containers"][0]["args"]
def after(flag):
    return [args[i + 1] for i, a in enumerate(args[:-1]) if a == flag]
expected = {"--vipu-controller": ["pod64-a=vipu-a.example.com:8090", "pod64-b=10.0.0.5:8091"],
            "--shm-size": ["16Gi"], "--partition-id-prefix": ["lab-1"], "--log-level": ["debug"], "--qps": ["25.5"],
            "--burst": ["60"], "--workers": ["4"], "--queueing-strategy": ["StrictFIFO"], "--missing-quota": ["deny"],
            "--runtime-image": ["registry.example.com/ipu-runtime:1.2.3"], "--runtime-image-pull-policy": ["Always"],
            "--runtime-delivery": ["image-volume"],
            "--vipu-ca-cert": ["/etc/ipu-operator/vipu-tls/ca.crt"], "--vipu-client-cert": ["/etc/ipu-operator/vipu-tls/tls.crt"],
            "--vipu-client-key": ["/etc/ipu-operator/vipu-tls/tls.key"], "--vipu-tls-server-name": ["vipu.example.com"],
            "--pod-start-timeout-seconds": ["0"], "--pod-deletion-timeout-seconds": ["90"],
            "--orphan-sweep-interval-seconds": ["60"], "--worker-pod-profile": ["privileged"],
            "--interactive-ttl-seconds": ["3600"], "--interactive-max-ttl-seconds": ["43200"],
            "--outputs-retain-seconds": ["300"], "--outputs-max-retain-seconds": ["7200"],
            "--interactive-idle-seconds": ["1800"]}
for flag, values in expected.items():
    if after(flag) != values: problems.append("%s: %s, expected %s" % (flag, after(flag), values))
if "--vipu-tls" not in args: problems.append("no --vipu-tls")
if "--orphan-sweep-dry-run" not in args: problems.append("no --orphan-sweep-dry-run")
if "--vipu-proxy-http-port" in args: problems.append("--vipu-proxy-http-port although vipuProxy.httpPort is 0")
proxy_ports = [p["name"] for p in named("Service", "chart-test-ipu-operator-vipu-proxy")[0]["spec"]["ports"]]
if proxy_ports != ["vipu"]: problems.append("the proxy Service ports %s with vipuProxy.httpPort 0" % proxy_ports)
spec = named("Deployment", "chart-test-ipu-operator")[0]["spec"]["template"]["spec"]
mounts = {m["mountPath"]: m for m in spec["containers"][0]["volumeMounts"]}
volumes = {v["name"]: v for v in spec["volumes"]}
mount = mounts.get("/etc/ipu-operator/vipu-tls", {})
if mount.get("readOnly") is not True or volumes.get(mount.get("name"), {}).get("secret", {}).get("secretName") != "vipu-tls":
    problems.append("the vipuTls Secret is not mounted read-only at /etc/ipu-operator/vipu-tls: %s" % mounts)
if named("Deployment", "chart-test-vipu-sim") or named("Service", "chart-test-vipu-sim"):
    problems.append("vipu-sim is rendered although vipuSim.enabled is false")
if named("ValidatingAdmissionPolicy") or named("ValidatingAdmissionPolicyBinding"):
    problems.append("the worker pod policy is rendered although workerPods.admissionPolicy is false")
'
  # The test cluster has no monitoring.coreos.com CRD, so the ServiceMonitor is checked here only, never sent
  # to a server.
  py_check "the ServiceMonitor (monitoring.coreos.com/v1) scrapes port metrics of the metrics Service" "$work/two.json" '
monitors = named("ServiceMonitor")
if len(monitors) != 1 or monitors[0]["apiVersion"] != "monitoring.coreos.com/v1":
    problems.append("expected one monitoring.coreos.com/v1 ServiceMonitor, found %s" % [describe(m) for m in monitors])
else:
    m = monitors[0]
    svc = named("Service", "chart-test-ipu-operator-metrics")[0]
    selected = m["spec"]["selector"]["matchLabels"]
    if any(svc["metadata"]["labels"].get(k) != v for k, v in selected.items()): problems.append("its selector does not match the metrics Service")
    if [e.get("port") for e in m["spec"]["endpoints"]] != ["metrics"]: problems.append("endpoints %s" % m["spec"]["endpoints"])
    if [p["name"] for p in svc["spec"]["ports"]] != ["metrics"] or svc["spec"].get("type") != "ClusterIP":
        problems.append("the metrics Service is not a ClusterIP Service with port metrics")
    if m["spec"].get("namespaceSelector", {}).get("matchNames") != ["ipu-system"]: problems.append("namespaceSelector %s" % m["spec"].get("namespaceSelector"))
'
fi

# --- 3. the chart's CRDs are the project's ---------------------------------------------------------------
crd_problems=()
for source in "$repo"/crds/*.yaml; do
  copy=$chart/crds/$(basename "$source")
  if [[ ! -f $copy ]]; then
    crd_problems+=("deploy/helm/ipu-operator/crds/$(basename "$source") is missing")
  elif ! cmp -s "$source" "$copy"; then
    crd_problems+=("deploy/helm/ipu-operator/crds/$(basename "$source") differs from crds/$(basename "$source")")
  fi
done
for copy in "$chart"/crds/*; do
  [[ -f $repo/crds/$(basename "$copy") ]] ||
    crd_problems+=("deploy/helm/ipu-operator/crds/$(basename "$copy") is not in crds/ (delete it)")
done
if [[ ${#crd_problems[@]} -eq 0 ]]; then
  pass "the chart's crds/ are byte-identical to crds/ ($(cd "$repo/crds" && echo *.yaml))"
else
  fail "the chart's crds/ are byte-identical to crds/" "${crd_problems[@]}" \
    "fix: cp crds/*.yaml deploy/helm/ipu-operator/crds/ (from the repository's root)"
fi

# --- 4. the rendered RBAC --------------------------------------------------------------------------------
if $sim_ok; then
  rbac_prelude='
roles = named("ClusterRole") + named("Role")
if not roles: problems.append("no Role or ClusterRole rendered")
def rules(o):
    return o.get("rules") or []
'
  py_check "RBAC: no \"*\" in any apiGroups, resources, verbs, resourceNames or nonResourceURLs" "$work/sim.json" \
    "$rbac_prelude"'
for o in roles:
    if o.get("aggregationRule"): problems.append("%s aggregates other roles" % describe(o))
    for r in rules(o):
        for field in ("apiGroups", "resources", "verbs", "resourceNames", "nonResourceURLs"):
            for value in r.get(field, []):
                if "*" in value: problems.append("%s grants %s %r in %s" % (describe(o), field, value, r))
'
  py_check "RBAC: no rule grants list or watch on secrets" "$work/sim.json" "$rbac_prelude"'
for o in roles:
    for r in rules(o):
        if "" in r.get("apiGroups", []) and "secrets" in r.get("resources", []):
            for verb in set(r.get("verbs", [])) & {"list", "watch"}:
                problems.append("%s grants %s on secrets" % (describe(o), verb))
'
  py_check "RBAC: the operator's Secret access is create only, and its Lease access is limited to the Lease ipu-operator" \
    "$work/sim.json" "$rbac_prelude"'
for o in roles:
    for r in rules(o):
        if "secrets" in r.get("resources", []) and set(r["verbs"]) - {"create"}:
            problems.append("%s grants %s on secrets" % (describe(o), r["verbs"]))
        if "leases" in r.get("resources", []):
            if o["kind"] != "Role": problems.append("%s (not a Role in the release namespace) grants leases" % describe(o))
            if set(r["verbs"]) - {"create"} and r.get("resourceNames") != ["ipu-operator"]:
                problems.append("%s grants %s on leases not limited to ipu-operator" % (describe(o), r["verbs"]))
for binding in named("ClusterRoleBinding") + named("RoleBinding"):
    if binding["metadata"]["name"].endswith("-pod-map-reader"): continue  # its own check below
    for s in binding["subjects"]:
        if (s["kind"], s["name"], s.get("namespace")) != ("ServiceAccount", "chart-test-ipu-operator", "ipu-system"):
            problems.append("%s binds %s" % (describe(binding), s))
'
  py_check "RBAC: every authenticated user may read IPUPods and the IPUQueue, and nothing else, through the pod-map-reader binding" \
    "$work/sim.json" "$rbac_prelude"'
readers = [b for b in named("ClusterRoleBinding") if b["metadata"]["name"].endswith("-pod-map-reader")]
if len(readers) != 1: problems.append("%d pod-map-reader ClusterRoleBindings rendered" % len(readers))
for binding in readers:
    role = [o for o in named("ClusterRole") if o["metadata"]["name"] == binding["roleRef"]["name"]]
    if binding["subjects"] != [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:authenticated"}]:
        problems.append("%s binds %s" % (describe(binding), binding["subjects"]))
    if len(role) != 1: problems.append("%s refers to a ClusterRole not rendered" % describe(binding))
    for o in role:
        if rules(o) != [{"apiGroups": ["graphcore.ai"], "resources": ["ipupods", "ipuqueues"], "verbs": ["get", "list", "watch"]}]:
            problems.append("%s grants %s" % (describe(o), rules(o)))
'
  py_check "RBAC: without the POD map page bound wider, the operator may not review tokens or access" \
    "$work/sim.json" "$rbac_prelude"'
for o in roles:
    for r in rules(o):
        if set(r.get("resources", [])) & {"tokenreviews", "subjectaccessreviews"}:
            problems.append("%s grants %s" % (describe(o), r))
'
  py_check "RBAC: aggregated admin/edit roles never name ipujobs/status nor write ipuquotas; view only reads" \
    "$work/sim.json" "$rbac_prelude"'
read = {"get", "list", "watch"}
aggregated = {k: [] for k in ("admin", "edit", "view")}
for o in named("ClusterRole"):
    labels = o["metadata"].get("labels", {})
    for k in aggregated:
        if labels.get("rbac.authorization.k8s.io/aggregate-to-" + k) == "true": aggregated[k].append(o)
for k, found in aggregated.items():
    if not found: problems.append("no ClusterRole is aggregated to %s" % k)
for o in {describe(o): o for o in aggregated["admin"] + aggregated["edit"]}.values():
    granted = {(res, verb) for r in rules(o) for res in r.get("resources", []) for verb in r.get("verbs", [])}
    for res, verb in sorted(granted):
        if res.startswith("ipujobs/"): problems.append("%s grants %s on %s" % (describe(o), verb, res))
        if res.split("/")[0] == "ipuquotas" and verb not in read: problems.append("%s grants %s on %s" % (describe(o), verb, res))
    for verb in ("get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"):
        if ("ipujobs", verb) not in granted: problems.append("%s does not grant %s on ipujobs" % (describe(o), verb))
    for verb in read:
        if ("ipuquotas", verb) not in granted: problems.append("%s does not grant %s on ipuquotas" % (describe(o), verb))
for o in aggregated["view"]:
    for r in rules(o):
        if set(r.get("verbs", [])) - read: problems.append("%s grants %s" % (describe(o), r["verbs"]))
        if any("/" in res for res in r.get("resources", [])): problems.append("%s grants a subresource: %s" % (describe(o), r["resources"]))
'
fi

# --- 5. the API server accepts every object --------------------------------------------------------------
if $no_cluster; then
  echo "skip  server-side dry run: skipped: no cluster (--no-cluster)"
elif [[ -z ${KUBECONFIG:-} ]]; then
  fail "server-side dry run" "skipped: no cluster: KUBECONFIG is not set (start one: tools/cluster.sh up, then" \
    "export KUBECONFIG=<dir>/kubeconfig), or pass --no-cluster to run the static checks only"
elif ! server_json=$("$kubectl" version -o json 2> "$work/version.err"); then
  fail "server-side dry run: the cluster of KUBECONFIG=$KUBECONFIG answers" "$(cat "$work/version.err")"
else
  server_version=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["serverVersion"]["gitVersion"])' <<< "$server_json")
  kube_version=$server_version
  # kubectl wait fails at once, instead of waiting, on a CRD whose status has no conditions yet (one just
  # created, here or by a test running beside this one): asked again for up to a minute.
  established() {
    local tries answer
    for ((tries = 0; tries < 30; tries++)); do
      if answer=$("$kubectl" wait --for=condition=Established --timeout=10s \
        crd/ipujobs.graphcore.ai crd/ipuquotas.graphcore.ai 2>&1); then
        echo "$answer"
        return 0
      fi
      sleep 2
    done
    echo "$answer"
    return 1
  }
  if output=$("$kubectl" apply --server-side --field-manager=ipu-operator-chart-test -f "$chart/crds/" 2>&1) &&
    output+=$'\n'$(established); then
    pass "the chart's CRDs apply server-side and are Established (Kubernetes $server_version)"
  else
    fail "the chart's CRDs apply server-side and are Established (Kubernetes $server_version)" "$output"
  fi

  scratch_ns=helm-chart-test-$(date +%s)-$RANDOM
  # warn=restricted: the API server says so when a pod template breaks the restricted Pod Security level.
  if output=$("$kubectl" create namespace "$scratch_ns" 2>&1) &&
    output+=$'\n'$("$kubectl" label namespace "$scratch_ns" pod-security.kubernetes.io/warn=restricted 2>&1); then
    namespace=$scratch_ns
    # The ServiceMonitor stays off here: this cluster has no monitoring.coreos.com CRD (checked statically above).
    for variant in "vipuSim.enabled=true" "two vipuControllers and every optional flag" "replicaCount=1, no leader election, rbac.create=false, metrics off"; do
      case $variant in
        vipuSim.*) values=(--set vipuSim.enabled=true) ;;
        two*) values=(-f "$work/two-controllers.yaml" -f "$work/all-flags.yaml") ;;
        *) values=(--set vipuSim.enabled=true --set replicaCount=1,leaderElection.enabled=false,rbac.create=false,metrics.enabled=false) ;;
      esac
      name="kubectl apply --dry-run=server of every object ($variant) in namespace $scratch_ns"
      if ! render "$work/server.yaml" "${values[@]}"; then
        fail "$name" "$(cat "$work/server.yaml.err")"
        continue
      fi
      rendered=$(grep -c '^kind:' "$work/server.yaml")
      if ! output=$("$kubectl" apply --dry-run=server -f "$work/server.yaml" 2> "$work/apply.err"); then
        fail "$name" "$output" "$(cat "$work/apply.err")"
      elif grep -qi 'would violate PodSecurity' "$work/apply.err"; then
        fail "$name: pods meet the restricted Pod Security level" "$(cat "$work/apply.err")"
      elif [[ $(grep -c '(server dry run)' <<< "$output") -ne $rendered ]]; then
        fail "$name" "$rendered objects rendered, but the server answered for $(grep -c '(server dry run)' <<< "$output"):" "$output"
      else
        pass "$name: $rendered objects accepted, pods meet Pod Security restricted"
      fi
    done
  else
    fail "server-side dry run: create namespace $scratch_ns" "$output"
  fi
fi

echo "chart_test: $((checks - failures)) of $checks checks passed"
[[ $failures -eq 0 ]] || { echo "chart_test: $failures check(s) failed" >&2; exit 1; }
