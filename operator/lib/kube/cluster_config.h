#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/result.h"

namespace ipu::kube {

// Where the API server is and how to prove who we are: the part of a kubeconfig (or of the in-cluster
// service-account mount) that a client needs. PEM material is held as data, whichever way it was given.
struct ClusterConfig {
  std::string server;         // https://host:port, no trailing slash
  std::string caPem;          // trusted CA bundle for the server; empty = the system trust store
  std::string tlsServerName;  // overrides the name checked in the server's certificate
  std::string clientCertPem;  // client-certificate authentication
  std::string clientKeyPem;
  std::string bearerToken;     // static token
  std::string tokenFile;       // token re-read from this file as it rotates (wins over bearerToken)
  std::string ns = "default";  // the context's namespace
  std::string source;  // where this came from, for messages: "kubeconfig /x (context y)", "in-cluster"
};

// Reads a file that a kubeconfig names (certificate-authority, client-certificate, client-key): kNotFound
// when it cannot. An empty FileReader reads the file system.
using FileReader = std::function<Result<std::string>(const std::string& path)>;

// Parses a kubeconfig's YAML. Relative file paths are resolved against baseDir (the kubeconfig's folder);
// context empty = current-context. Pure apart from reading referenced files (with readReferenced).
Result<ClusterConfig> parseKubeconfig(const std::string& yaml, const std::string& baseDir,
                                      const std::string& context = "", const FileReader& readReferenced = {});
Result<ClusterConfig> loadKubeconfig(const std::string& path, const std::string& context = "");
// $KUBECONFIG's list merged as kubectl merges it: files that do not exist (or are empty) are skipped; the
// first file to name a cluster, user or context wins, and so does the first current-context; relative file
// paths are resolved against the file that gives them. kNotFound when no file of the list exists.
Result<ClusterConfig> loadKubeconfigList(const std::vector<std::string>& paths,
                                         const std::string& context = "");

// One kubeconfig of a list, already read.
struct KubeconfigText {
  std::string path;  // where it was read: its folder is what its relative paths are relative to
  std::string yaml;
};
// loadKubeconfigList on texts: the same merge and the same errors, every text taken as an existing file's.
Result<ClusterConfig> parseKubeconfigList(const std::vector<KubeconfigText>& files,
                                          const std::string& context = "",
                                          const FileReader& readReferenced = {});

// The service-account mount a pod gets: KUBERNETES_SERVICE_HOST/PORT from env, token, ca.crt and namespace
// from saDir (normally /var/run/secrets/kubernetes.io/serviceaccount).
Result<ClusterConfig> inClusterConfig(
    const std::map<std::string, std::string>& env,
    const std::string& saDir = "/var/run/secrets/kubernetes.io/serviceaccount");

// What the operator uses when no kubeconfig is given: $KUBECONFIG (every file, merged), then in-cluster, then
// ~/.kube/config.
Result<ClusterConfig> loadDefaultConfig(const std::string& explicitKubeconfig = "",
                                        const std::string& context = "");

}  // namespace ipu::kube
