#include "proxy_objects.h"

#include "ipujob/worker_pod_cache.h"

namespace ipu::testing {

using Json = nlohmann::json;

Json partitionRecord(const std::string& id, int instance, const std::string& controller,
                     const std::string& state) {
  return {{"id", id}, {"instance", instance}, {"size", 4}, {"controller", controller}, {"state", state}};
}

Json ipuJobObject(const std::string& ns, const std::string& name, const std::string& uid,
                  const Json& partitions) {
  return {{"apiVersion", "graphcore.ai/v1alpha1"},
          {"kind", "IPUJob"},
          {"metadata", {{"namespace", ns}, {"name", name}, {"uid", uid}}},
          {"status", {{"phase", "Running"}, {"partitions", partitions}}}};
}

Json workerPodObject(const std::string& ns, const std::string& name, const std::string& job,
                     const std::string& jobUid, const std::string& ip) {
  Json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata",
               {{"namespace", ns},
                {"name", name},
                {"uid", name + "-uid"},
                {"labels", {{"graphcore.ai/ipujob", job}, {"graphcore.ai/attempt", "0"}}},
                {"ownerReferences", Json::array({{{"apiVersion", "graphcore.ai/v1alpha1"},
                                                  {"kind", "IPUJob"},
                                                  {"name", job},
                                                  {"uid", jobUid},
                                                  {"controller", true}}})}}},
              {"spec", {{"containers", Json::array({{{"name", "main"}, {"image", "train:1"}}})}}},
              {"status",
               {{"phase", "Running"},
                {"podIP", ip},
                {"podIPs", Json::array({{{"ip", ip}}})},
                {"hostIP", "192.0.2.1"}}}};
  controllers::trimWorkerPodForCache(pod);
  return pod;
}

void put(kube::Store& store, Json object) {
  store.apply(kube::WatcherEvent{kube::WatcherEvent::Kind::kApply, std::move(object)});
}

}  // namespace ipu::testing
