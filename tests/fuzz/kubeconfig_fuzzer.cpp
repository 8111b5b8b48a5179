// kubeconfig parsing (operator/kube/cluster_config.h): the input is one kubeconfig, or several (a list as in
// $KUBECONFIG=a:b) separated by lines "#~file~". It is parsed as one file (parseKubeconfig) and merged as a
// list (parseKubeconfigList). Files a kubeconfig names are "read" by the fuzzer, never from the disk: a path
// with "missing" in it does not exist, any other reads as a text made from its path.
// Checks: nothing throws (malformed YAML is an InvalidArgument error); an accepted config has an https://
// server without a trailing slash, a namespace, a source, and a client certificate only with its key; asking
// for the context that was current gives the same config; a single file gives the same config both ways.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_check.h"
#include "kube/cluster_config.h"

namespace {

using namespace ipu;
using namespace ipu::kube;

const std::string kSeparator = "\n#~file~\n";

Result<std::string> readReferenced(const std::string& path) {
  if (path.find("missing") != std::string::npos)
    return makeError(ErrorCode::kNotFound, "cannot read " + path);
  return "PEM of " + path;
}

bool same(const ClusterConfig& a, const ClusterConfig& b) {
  return a.server == b.server && a.caPem == b.caPem && a.tlsServerName == b.tlsServerName &&
         a.clientCertPem == b.clientCertPem && a.clientKeyPem == b.clientKeyPem &&
         a.bearerToken == b.bearerToken && a.tokenFile == b.tokenFile && a.ns == b.ns;
}

// The context a config was made for: "... (context NAME)" ends its source.
std::string contextOf(const ClusterConfig& config) {
  const std::string marker = " (context ";
  auto at = config.source.find(marker);
  FUZZ_CHECK(at != std::string::npos && config.source.back() == ')');
  return config.source.substr(at + marker.size(), config.source.size() - at - marker.size() - 1);
}

void checkAccepted(const ClusterConfig& config) {
  FUZZ_CHECK(config.server.rfind("https://", 0) == 0);
  FUZZ_CHECK(config.server.size() == 8 || config.server.back() != '/');
  FUZZ_CHECK(!config.ns.empty());
  FUZZ_CHECK(config.source.rfind("kubeconfig ", 0) == 0);
  FUZZ_CHECK(config.clientCertPem.empty() == config.clientKeyPem.empty());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  std::vector<KubeconfigText> files;
  for (std::size_t start = 0;;) {
    const std::size_t end = input.find(kSeparator, start);
    files.push_back({"/kube/" + std::to_string(files.size()) + "/config", input.substr(start, end - start)});
    if (end == std::string::npos) break;
    start = end + kSeparator.size();
  }

  // The first file on its own.
  auto single = parseKubeconfig(files[0].yaml, "/kube/0", "", readReferenced);
  if (!single) {
    FUZZ_CHECK(single.error().code == ErrorCode::kInvalidArgument);
  } else {
    checkAccepted(*single);
    auto named = parseKubeconfig(files[0].yaml, "/kube/0", contextOf(*single), readReferenced);
    FUZZ_CHECK(named.ok() && same(*named, *single));
    auto asList = parseKubeconfigList({files[0]}, "", readReferenced);
    if (asList) FUZZ_CHECK(same(*asList, *single));
  }

  // All of them as a list.
  auto merged = parseKubeconfigList(files, "", readReferenced);
  if (!merged) {
    FUZZ_CHECK(merged.error().code == ErrorCode::kInvalidArgument ||
               merged.error().code == ErrorCode::kNotFound);
  } else {
    checkAccepted(*merged);
    auto named = parseKubeconfigList(files, contextOf(*merged), readReferenced);
    FUZZ_CHECK(named.ok() && same(*named, *merged));
  }
  return 0;
}
