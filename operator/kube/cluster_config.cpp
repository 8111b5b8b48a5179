#include "kube/cluster_config.h"

#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "kube/base64.h"

extern char** environ;

namespace ipu::kube {
namespace {

namespace fs = std::filesystem;

Error configError(const std::string& where, const std::string& what) {
  return makeError(ErrorCode::kInvalidArgument, where + ": " + what);
}

Result<std::string> readFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return makeError(ErrorCode::kNotFound, "cannot read " + path);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

std::string resolve(const std::string& path, const std::string& baseDir) {
  if (path.empty() || fs::path(path).is_absolute() || baseDir.empty()) return path;
  return (fs::path(baseDir) / path).string();
}

// The named entry of a kubeconfig list (clusters, users, contexts): [{name: x, <kind>: {...}}].
Result<YAML::Node> findNamed(const YAML::Node& root, const std::string& list, const std::string& kind,
                             const std::string& name, const std::string& where) {
  const YAML::Node entries = root[list];
  if (entries && !entries.IsSequence()) return configError(where, "'" + list + "' must be a list");
  if (entries) {
    for (const auto& entry : entries) {
      if (!entry.IsMap()) return configError(where, "an entry of '" + list + "' is not a mapping");
      if (entry["name"] && entry["name"].as<std::string>() == name) {
        YAML::Node body = entry[kind];
        if (!body || body.IsNull()) return YAML::Node(YAML::NodeType::Map);
        if (!body.IsMap()) return configError(where, kind + " '" + name + "' must be a mapping");
        return body;
      }
    }
  }
  return configError(where, "no " + kind + " named '" + name + "' in '" + list + "'");
}

std::string scalar(const YAML::Node& map, const std::string& key) {
  const YAML::Node value = map[key];
  return value && value.IsScalar() ? value.as<std::string>() : std::string();
}

// Material given inline (<key>-data, base64) or as a file (<key>); data wins, as in kubectl.
Result<std::string> material(const YAML::Node& map, const std::string& key, const std::string& baseDir,
                             const std::string& where) {
  if (std::string data = scalar(map, key + "-data"); !data.empty()) {
    auto decoded = base64Decode(data);
    if (!decoded) return configError(where, key + "-data is not valid base64");
    return *decoded;
  }
  if (std::string path = scalar(map, key); !path.empty()) {
    auto text = readFile(resolve(path, baseDir));
    if (!text) return configError(where, key + ": " + text.error().message);
    return *text;
  }
  return std::string();
}

Result<ClusterConfig> parseDocument(const YAML::Node& root, const std::string& baseDir, const std::string& wanted,
                                    const std::string& where) {
  if (!root.IsMap()) return configError(where, "not a kubeconfig (expected a YAML mapping)");
  std::string contextName = wanted.empty() ? scalar(root, "current-context") : wanted;
  if (contextName.empty()) return configError(where, "no current-context set and no context given");

  auto context = findNamed(root, "contexts", "context", contextName, where);
  if (!context) return context.error();
  std::string clusterName = scalar(*context, "cluster"), userName = scalar(*context, "user");
  if (clusterName.empty()) return configError(where, "context '" + contextName + "' names no cluster");

  auto cluster = findNamed(root, "clusters", "cluster", clusterName, where);
  if (!cluster) return cluster.error();
  ClusterConfig config;
  config.source = "kubeconfig " + where + " (context " + contextName + ")";
  config.server = scalar(*cluster, "server");
  if (config.server.rfind("https://", 0) != 0) {
    return configError(where, "cluster '" + clusterName + "' server must be an https:// URL, not '" + config.server + "'");
  }
  while (config.server.size() > 8 && config.server.back() == '/') config.server.pop_back();
  if (scalar(*cluster, "insecure-skip-tls-verify") == "true") {
    return configError(where, "cluster '" + clusterName +
                                  "' sets insecure-skip-tls-verify, which this client refuses: give the server's CA "
                                  "(certificate-authority or certificate-authority-data)");
  }
  auto ca = material(*cluster, "certificate-authority", baseDir, where);
  if (!ca) return ca.error();
  config.caPem = *ca;
  config.tlsServerName = scalar(*cluster, "tls-server-name");

  if (!userName.empty()) {
    auto user = findNamed(root, "users", "user", userName, where);
    if (!user) return user.error();
    auto cert = material(*user, "client-certificate", baseDir, where);
    if (!cert) return cert.error();
    auto key = material(*user, "client-key", baseDir, where);
    if (!key) return key.error();
    if (cert->empty() != key->empty()) {
      return configError(where, "user '" + userName + "' needs both client-certificate and client-key");
    }
    config.clientCertPem = *cert;
    config.clientKeyPem = *key;
    config.bearerToken = scalar(*user, "token");
    config.tokenFile = resolve(scalar(*user, "tokenFile"), baseDir);
    if ((*user)["exec"] || (*user)["auth-provider"]) {
      return configError(where, "user '" + userName + "' uses an exec or auth-provider plugin, which is not supported");
    }
  }
  if (std::string ns = scalar(*context, "namespace"); !ns.empty()) config.ns = ns;
  return config;
}

}  // namespace

Result<ClusterConfig> parseKubeconfig(const std::string& yaml, const std::string& baseDir, const std::string& context) {
  try {
    return parseDocument(YAML::Load(yaml), baseDir, context, baseDir.empty() ? "kubeconfig" : baseDir);
  } catch (const YAML::Exception& e) {
    return configError("kubeconfig", std::string("malformed YAML: ") + e.what());
  }
}

Result<ClusterConfig> loadKubeconfig(const std::string& path, const std::string& context) {
  auto text = readFile(path);
  if (!text) return text.error();
  try {
    return parseDocument(YAML::Load(*text), fs::path(path).parent_path().string(), context, path);
  } catch (const YAML::Exception& e) {
    return configError(path, std::string("malformed YAML: ") + e.what());
  }
}

Result<ClusterConfig> inClusterConfig(const std::map<std::string, std::string>& env, const std::string& saDir) {
  auto host = env.find("KUBERNETES_SERVICE_HOST"), port = env.find("KUBERNETES_SERVICE_PORT");
  if (host == env.end() || port == env.end() || host->second.empty() || port->second.empty()) {
    return makeError(ErrorCode::kNotFound, "not running in a pod: KUBERNETES_SERVICE_HOST/PORT are not set");
  }
  ClusterConfig config;
  config.source = "in-cluster service account";
  // An IPv6 service address needs brackets in a URL.
  std::string hostPart = host->second.find(':') != std::string::npos ? "[" + host->second + "]" : host->second;
  config.server = "https://" + hostPart + ":" + port->second;
  config.tokenFile = saDir + "/token";
  if (!fs::exists(config.tokenFile)) return makeError(ErrorCode::kNotFound, "no service-account token at " + config.tokenFile);
  auto ca = readFile(saDir + "/ca.crt");
  if (!ca) return ca.error();
  config.caPem = *ca;
  if (auto ns = readFile(saDir + "/namespace"); ns && !ns->empty()) {
    config.ns = *ns;
    while (!config.ns.empty() && std::isspace(static_cast<unsigned char>(config.ns.back()))) config.ns.pop_back();
  }
  return config;
}

Result<ClusterConfig> loadDefaultConfig(const std::string& explicitKubeconfig, const std::string& context) {
  if (!explicitKubeconfig.empty()) return loadKubeconfig(explicitKubeconfig, context);
  if (const char* list = std::getenv("KUBECONFIG"); list != nullptr && *list != '\0') {
    std::string first(list);
    first = first.substr(0, first.find(':'));
    return loadKubeconfig(first, context);
  }
  std::map<std::string, std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry(*e);
    if (auto eq = entry.find('='); eq != std::string::npos) env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  if (env.count("KUBERNETES_SERVICE_HOST") != 0) return inClusterConfig(env);
  if (const char* home = std::getenv("HOME"); home != nullptr) {
    std::string path = std::string(home) + "/.kube/config";
    if (fs::exists(path)) return loadKubeconfig(path, context);
  }
  return makeError(ErrorCode::kNotFound, "no Kubernetes configuration: set --kubeconfig or KUBECONFIG, or run in a pod");
}

}  // namespace ipu::kube
