# shellcheck shell=bash
# Certificates and kubeconfigs for the local cluster (sourced by cluster.sh).
# One throw-away CA per cluster directory; EC P-256 keys because they are quick to make.

# pki_issue <name> <subject> <extensions>: key + certificate signed by the cluster CA.
pki_issue() {
  # shellcheck disable=SC2154 # cluster_dir: a global of tools/cluster.sh, which sources this file
  local name=$1 subject=$2 extensions=$3 pki=$cluster_dir/pki
  openssl ecparam -name prime256v1 -genkey -noout -out "$pki/$name.key" 2>/dev/null
  openssl req -new -key "$pki/$name.key" -subj "$subject" -out "$pki/$name.csr" 2>/dev/null
  printf '%s\n' "basicConstraints=critical,CA:FALSE" "keyUsage=critical,digitalSignature,keyEncipherment" \
    "$extensions" > "$pki/$name.ext"
  openssl x509 -req -in "$pki/$name.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
    -days 365 -sha256 -extfile "$pki/$name.ext" -out "$pki/$name.crt" 2>/dev/null
  rm -f "$pki/$name.csr" "$pki/$name.ext"
}

pki_create() {
  local pki=$cluster_dir/pki
  mkdir -p "$pki" && chmod 700 "$pki"
  openssl ecparam -name prime256v1 -genkey -noout -out "$pki/ca.key" 2>/dev/null
  openssl req -x509 -new -key "$pki/ca.key" -subj "/CN=ipu-operator-local-ca" -days 3650 -sha256 \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -out "$pki/ca.crt" 2>/dev/null
  # The kubernetes Service's IP and names, loopback, and the address the API server listens on.
  local server_san="subjectAltName=IP:127.0.0.1,IP:${apiserver_address:-127.0.0.1},IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
  pki_issue apiserver "/CN=kube-apiserver" "extendedKeyUsage=serverAuth
$server_san"
  pki_issue admin "/O=system:masters/CN=local-admin" "extendedKeyUsage=clientAuth"
  pki_issue controller-manager "/CN=system:kube-controller-manager" "extendedKeyUsage=clientAuth"
  pki_issue scheduler "/CN=system:kube-scheduler" "extendedKeyUsage=clientAuth"
  pki_issue kwok "/O=system:masters/CN=kwok-controller" "extendedKeyUsage=clientAuth"
  pki_issue apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" "extendedKeyUsage=clientAuth"
  pki_issue kwok-serving "/CN=kwok-node-server" "extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,DNS:localhost"
  # Service-account token signing key pair.
  openssl ecparam -name prime256v1 -genkey -noout -out "$pki/service-account.key" 2>/dev/null
  openssl ec -in "$pki/service-account.key" -pubout -out "$pki/service-account.pub" 2>/dev/null
}

# kubeconfig_write <file> <user cert name> [embed]: a kubeconfig for one client certificate.
# The admin kubeconfig embeds its data so it can be copied elsewhere; components read files.
kubeconfig_write() {
  # shellcheck disable=SC2154 # apiserver_port: a global of tools/cluster.sh, which sources this file
  local file=$1 user=$2 embed=${3:-} pki=$cluster_dir/pki server="https://${apiserver_address:-127.0.0.1}:$apiserver_port"
  local ca_line cert_line key_line
  if [[ $embed == embed ]]; then
    ca_line="certificate-authority-data: $(base64 -w0 < "$pki/ca.crt")"
    cert_line="client-certificate-data: $(base64 -w0 < "$pki/$user.crt")"
    key_line="client-key-data: $(base64 -w0 < "$pki/$user.key")"
  else
    ca_line="certificate-authority: $pki/ca.crt"
    cert_line="client-certificate: $pki/$user.crt"
    key_line="client-key: $pki/$user.key"
  fi
  cat > "$file" <<KUBECONFIG
apiVersion: v1
kind: Config
clusters:
- name: ipu-local
  cluster:
    server: $server
    $ca_line
users:
- name: $user
  user:
    $cert_line
    $key_line
contexts:
- name: ipu-local
  context:
    cluster: ipu-local
    user: $user
    namespace: default
current-context: ipu-local
KUBECONFIG
  chmod 600 "$file"
}
