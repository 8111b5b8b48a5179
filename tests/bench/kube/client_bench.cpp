// Throughput of the project's Kubernetes client against the local API server, next to the same work done
// by kubectl (create) and by a minimal raw client (kubectl get --raw for the watch stream), in one run.
// Writes JSON to stdout and to the file given as the first argument.
#include <chrono>
#include <fstream>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "kube/cpprest_transport.h"
#include "kube/rest_client.h"
#include "subprocess.h"
#include "test_cluster.h"

namespace {

using namespace std::chrono_literals;
using ipu::kube::Json;
using ipu::kube::ResourceRef;
using ipu::testing::run;
using ipu::testing::RunOptions;
using Clock = std::chrono::steady_clock;

constexpr int kObjects = 300;

double seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

Json configMap(const std::string& name) {
  return {
      {"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", name}}}, {"data", {{"k", "v"}}}};
}

void check(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error(what);
}

}  // namespace

int main(int argc, char** argv) try {
  const auto& cluster = ipu::testing::TestCluster::get();
  auto config = ipu::kube::loadKubeconfig(cluster.kubeconfig());
  check(config.ok(), "kubeconfig");
  std::shared_ptr<ipu::kube::Transport> transport = std::move(*ipu::kube::CppRestTransport::create(*config));
  // No client-side throttle for the measurement: kubectl has none either for creates from one file.
  ipu::kube::RestClient client(transport, *config, ipu::kube::ClientOptions{.qps = 1e6, .burst = 1000000});
  const std::string ns = "bench-kube-client-" + std::to_string(::getpid());
  const std::string nsKubectl = ns + "-kubectl";
  for (const auto& n : {ns, nsKubectl}) {
    check(client.create(ResourceRef::namespaces(), "", Json{{"metadata", {{"name", n}}}}).ok(),
          "create namespace");
  }
  auto resourceVersionNow = [&](const std::string& n) {
    auto list = client.list(ResourceRef::configMaps(), n, ipu::kube::ListOptions{.limit = 1});
    check(list.ok(), "list");
    return (*list)["metadata"]["resourceVersion"].get<std::string>();
  };
  std::string before = resourceVersionNow(ns);

  // Create: N objects one after another (as a controller does), and the same N with one kubectl call.
  auto started = Clock::now();
  for (int i = 0; i < kObjects; ++i) {
    check(client.create(ResourceRef::configMaps(), ns, configMap("c" + std::to_string(i))).ok(), "create");
  }
  double ours = kObjects / seconds(Clock::now() - started);

  Json list = {{"apiVersion", "v1"}, {"kind", "List"}, {"items", Json::array()}};
  for (int i = 0; i < kObjects; ++i) list["items"].push_back(configMap("c" + std::to_string(i)));
  started = Clock::now();
  auto created = cluster.kubectl({"create", "-n", nsKubectl, "-f", "-", "-o", "name"},
                                 RunOptions{.input = list.dump(), .timeout = 600s});
  check(created.ok(), "kubectl create: " + created.describe());
  double theirs = kObjects / seconds(Clock::now() - started);

  // Watch delivery: replay the N creations from the version before them, as fast as the stream goes.
  started = Clock::now();
  int seen = 0;
  auto watched =
      client.watch(ResourceRef::configMaps(), ns, ipu::kube::WatchOptions{.resourceVersion = before},
                   [&](ipu::kube::WatchEvent&& event) { return event.type != "ADDED" || ++seen < kObjects; });
  check(watched.ok() && seen == kObjects, "watch");
  double oursWatch = kObjects / seconds(Clock::now() - started);

  started = Clock::now();
  ipu::testing::BackgroundProcess raw(cluster.kubectlCommand(
      {"get", "--raw", "/api/v1/namespaces/" + ns + "/configmaps?watch=1&resourceVersion=" + before}));
  int rawSeen = 0;
  while (rawSeen < kObjects && raw.readLine(60s)) ++rawSeen;
  check(rawSeen == kObjects, "raw watch");
  double theirsWatch = kObjects / seconds(Clock::now() - started);

  for (const auto& n : {ns, nsKubectl}) (void)client.remove(ResourceRef::namespaces(), "", n);

  Json result = {
      {"benchmark", "kube_client"},
      {"objects", kObjects},
      {"create_per_second", {{"ipu_operator_client", ours}, {"kubectl", theirs}, {"ratio", ours / theirs}}},
      {"watch_events_per_second",
       {{"ipu_operator_client", oursWatch},
        {"kubectl_get_raw", theirsWatch},
        {"ratio", oursWatch / theirsWatch}}},
      {"note", "kubectl figures include its process start-up (~0.1 s), as a user or script pays it"}};
  std::cout << result.dump(2) << std::endl;
  if (argc > 1) std::ofstream(argv[1]) << result.dump(2) << "\n";
  return 0;
} catch (const std::exception& e) {
  std::cerr << "kube client benchmark failed: " << e.what() << std::endl;
  return 1;
}
