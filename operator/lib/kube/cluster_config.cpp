#include "kube/cluster_config.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <set>
#include <sstream>

#include <yaml-cpp/yaml.h>

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

// A kubeconfig file's YAML; errors name the file.
Result<YAML::Node> loadYamlFile(const std::string& path) {
  auto text = readFile(path);
  if (!text) return text.error();
  try {
    return YAML::Load(*text);
  } catch (const YAML::Exception& e) {
    return configError(path, std::string("malformed YAML: ") + e.what());
  }
}

std::string joinPaths(const std::vector<std::string>& paths) {
  std::string list;
  for (const auto& path : paths) list += (list.empty() ? "" : ":") + path;
  return list;
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

// The file system, unless the caller reads referenced files its own way.
FileReader readerOr(const FileReader& readReferenced) {
  return readReferenced ? readReferenced : FileReader(&readFile);
}

// Material given inline (<key>-data, base64) or as a file (<key>); data wins, as in kubectl.
Result<std::string> material(const YAML::Node& map, const std::string& key, const std::string& baseDir,
                             const std::string& where, const FileReader& readReferenced) {
  if (std::string data = scalar(map, key + "-data"); !data.empty()) {
    auto decoded = base64Decode(data);
    if (!decoded) return configError(where, key + "-data is not valid base64");
    return *decoded;
  }
  if (std::string path = scalar(map, key); !path.empty()) {
    auto text = readReferenced(resolve(path, baseDir));
    if (!text) return configError(where, key + ": " + text.error().message);
    return *text;
  }
  return std::string();
}

// Every way YAML (1.1 or 1.2) and Go's parsers spell false, and absence: anything else in a switch that turns
// off a safety is taken as on, and refused.
bool spellsFalse(const std::string& value) {
  static const std::set<std::string> kFalse = {"",   "false", "False", "FALSE", "f",   "F",   "no", "No",
                                               "NO", "n",     "N",     "off",   "Off", "OFF", "0"};
  return kFalse.contains(value);
}

// A list of a kubeconfig and the keys of its entries' bodies that name files.
struct NamedList {
  const char* list;
  const char* kind;
  std::vector<std::string> fileKeys;
};
const NamedList kNamedLists[] = {{"clusters", "cluster", {"certificate-authority"}},
                                 {"users", "user", {"client-certificate", "client-key", "tokenFile"}},
                                 {"contexts", "context", {}}};

bool hasEntryNamed(const YAML::Node& entries, const std::string& name) {
  for (const auto& entry : entries) {
    if (scalar(entry, "name") == name) return true;
  }
  return false;
}

// Adds one kubeconfig's entries to `merged` as kubectl merges $KUBECONFIG: the first file to name a cluster,
// user or context wins, and so does the first current-context. File paths are made absolute against the file
// they came from, since the merged document has no folder of its own.
Status mergeInto(YAML::Node& merged, const YAML::Node& root, const std::string& path) {
  if (!root.IsMap()) return configError(path, "not a kubeconfig (expected a YAML mapping)");
  const std::string baseDir = fs::path(path).parent_path().string();
  if (!merged["current-context"] && !scalar(root, "current-context").empty()) {
    merged["current-context"] = scalar(root, "current-context");
  }
  for (const auto& named : kNamedLists) {
    const YAML::Node entries = root[named.list];
    if (!entries || entries.IsNull()) continue;
    if (!entries.IsSequence()) return configError(path, std::string("'") + named.list + "' must be a list");
    YAML::Node target = merged[named.list];
    if (!target) target = YAML::Node(YAML::NodeType::Sequence);
    for (const auto& entry : entries) {
      if (!entry.IsMap())
        return configError(path, std::string("an entry of '") + named.list + "' is not a mapping");
      if (hasEntryNamed(target, scalar(entry, "name"))) continue;
      YAML::Node copy = YAML::Clone(entry);
      if (YAML::Node body = copy[named.kind]; body && body.IsMap()) {
        for (const auto& key : named.fileKeys) {
          if (std::string file = scalar(body, key); !file.empty()) body[key] = resolve(file, baseDir);
        }
      }
      target.push_back(copy);
    }
    merged[named.list] = target;
  }
  return {};
}

Result<ClusterConfig> parseDocument(const YAML::Node& root, const std::string& baseDir,
                                    const std::string& wanted, const std::string& where,
                                    const FileReader& readReferenced) {
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
    return configError(
        where, "cluster '" + clusterName + "' server must be an https:// URL, not '" + config.server + "'");
  }
  while (config.server.size() > 8 && config.server.back() == '/') config.server.pop_back();
  if (!spellsFalse(scalar(*cluster, "insecure-skip-tls-verify"))) {
    return configError(where,
                       "cluster '" + clusterName +
                           "' sets insecure-skip-tls-verify, which this client refuses: give the server's CA "
                           "(certificate-authority or certificate-authority-data)");
  }
  auto ca = material(*cluster, "certificate-authority", baseDir, where, readReferenced);
  if (!ca) return ca.error();
  config.caPem = *ca;
  config.tlsServerName = scalar(*cluster, "tls-server-name");

  if (!userName.empty()) {
    auto user = findNamed(root, "users", "user", userName, where);
    if (!user) return user.error();
    auto cert = material(*user, "client-certificate", baseDir, where, readReferenced);
    if (!cert) return cert.error();
    auto key = material(*user, "client-key", baseDir, where, readReferenced);
    if (!key) return key.error();
    if (cert->empty() != key->empty()) {
      return configError(where, "user '" + userName + "' needs both client-certificate and client-key");
    }
    config.clientCertPem = *cert;
    config.clientKeyPem = *key;
    config.bearerToken = scalar(*user, "token");
    config.tokenFile = resolve(scalar(*user, "tokenFile"), baseDir);
    if ((*user)["exec"] || (*user)["auth-provider"]) {
      return configError(
          where, "user '" + userName + "' uses an exec or auth-provider plugin, which is not supported");
    }
  }
  if (std::string ns = scalar(*context, "namespace"); !ns.empty()) config.ns = ns;
  return config;
}

// The files of a list merged, then parsed. textOf(i) is the i-th file's text, or nothing for a file that is
// not there (skipped, as kubectl does).
Result<ClusterConfig> parseList(const std::vector<std::string>& paths,
                                const std::function<Result<std::optional<std::string>>(std::size_t)>& textOf,
                                const std::string& context, const FileReader& readReferenced) {
  YAML::Node merged(YAML::NodeType::Map);
  std::vector<std::string> read;  // the files merged, for messages
  for (std::size_t i = 0; i < paths.size(); ++i) {
    const std::string& path = paths[i];
    auto text = textOf(i);
    if (!text) return text.error();
    if (!*text) continue;
    YAML::Node root;
    try {
      root = YAML::Load(**text);
    } catch (const YAML::Exception& e) {
      return configError(path, std::string("malformed YAML: ") + e.what());
    }
    if (root.IsNull()) continue;  // an empty file, which kubectl skips too
    if (Status added = mergeInto(merged, root, path); !added) return added.error();
    read.push_back(path);
  }
  if (read.empty()) {
    return makeError(ErrorCode::kNotFound,
                     "no kubeconfig file in the list '" + joinPaths(paths) + "' exists");
  }
  try {
    return parseDocument(merged, "", context, joinPaths(read), readReferenced);
  } catch (const YAML::Exception& e) {
    return configError(joinPaths(read), std::string("malformed kubeconfig: ") + e.what());
  }
}

}  // namespace

Result<ClusterConfig> parseKubeconfig(const std::string& yaml, const std::string& baseDir,
                                      const std::string& context, const FileReader& readReferenced) {
  try {
    return parseDocument(YAML::Load(yaml), baseDir, context, baseDir.empty() ? "kubeconfig" : baseDir,
                         readerOr(readReferenced));
  } catch (const YAML::Exception& e) {
    return configError("kubeconfig", std::string("malformed YAML: ") + e.what());
  }
}

Result<ClusterConfig> loadKubeconfig(const std::string& path, const std::string& context) {
  auto root = loadYamlFile(path);
  if (!root) return root.error();
  try {
    return parseDocument(*root, fs::path(path).parent_path().string(), context, path, readerOr({}));
  } catch (const YAML::Exception& e) {
    return configError(path, std::string("malformed YAML: ") + e.what());
  }
}

Result<ClusterConfig> inClusterConfig(const std::map<std::string, std::string>& env,
                                      const std::string& saDir) {
  auto host = env.find("KUBERNETES_SERVICE_HOST"), port = env.find("KUBERNETES_SERVICE_PORT");
  if (host == env.end() || port == env.end() || host->second.empty() || port->second.empty()) {
    return makeError(ErrorCode::kNotFound, "not running in a pod: KUBERNETES_SERVICE_HOST/PORT are not set");
  }
  ClusterConfig config;
  config.source = "in-cluster service account";
  // An IPv6 service address needs brackets in a URL.
  std::string hostPart =
      host->second.find(':') != std::string::npos ? "[" + host->second + "]" : host->second;
  config.server = "https://" + hostPart + ":" + port->second;
  config.tokenFile = saDir + "/token";
  if (!fs::exists(config.tokenFile))
    return makeError(ErrorCode::kNotFound, "no service-account token at " + config.tokenFile);
  auto ca = readFile(saDir + "/ca.crt");
  if (!ca) return ca.error();
  config.caPem = *ca;
  if (auto ns = readFile(saDir + "/namespace"); ns && !ns->empty()) {
    config.ns = *ns;
    while (!config.ns.empty() && std::isspace(static_cast<unsigned char>(config.ns.back())))
      config.ns.pop_back();
  }
  return config;
}

Result<ClusterConfig> loadKubeconfigList(const std::vector<std::string>& paths, const std::string& context) {
  auto textOf = [&](std::size_t i) -> Result<std::optional<std::string>> {
    if (paths[i].empty() || !fs::exists(paths[i])) return std::optional<std::string>();
    auto text = readFile(paths[i]);
    if (!text) return text.error();
    return std::optional<std::string>(std::move(*text));
  };
  return parseList(paths, textOf, context, readerOr({}));
}

Result<ClusterConfig> parseKubeconfigList(const std::vector<KubeconfigText>& files,
                                          const std::string& context, const FileReader& readReferenced) {
  std::vector<std::string> paths;
  for (const auto& file : files) paths.push_back(file.path);
  auto textOf = [&](std::size_t i) -> Result<std::optional<std::string>> {
    return std::optional<std::string>(files[i].yaml);
  };
  return parseList(paths, textOf, context, readerOr(readReferenced));
}

Result<ClusterConfig> loadDefaultConfig(const std::string& explicitKubeconfig, const std::string& context) {
  if (!explicitKubeconfig.empty()) return loadKubeconfig(explicitKubeconfig, context);
  if (const char* list = std::getenv("KUBECONFIG"); list != nullptr && *list != '\0') {
    std::vector<std::string> paths;
    std::istringstream entries{std::string(list)};
    for (std::string path; std::getline(entries, path, ':');) paths.push_back(path);
    return loadKubeconfigList(paths, context);
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
  return makeError(ErrorCode::kNotFound,
                   "no Kubernetes configuration: set --kubeconfig or KUBECONFIG, or run in a pod");
}

}  // namespace ipu::kube
