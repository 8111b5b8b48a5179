#pragma once

// IPU-PODs in given states, built as the operator builds them: V-IPU partitions in the inventory's view and
// IPUJobs whose status holds them, through ipuPodStatusOf.
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "admission/vipu_inventory.h"
#include "ipujob/orphan_partitions.h"
#include "pod_map/pod_map_status.h"
#include "vipu/partition_planner.h"

namespace ipu::testing {

inline const controllers::OwnPrefixes kPrefixes{"k8s-test", ""};

class PodBuilder {
 public:
  PodBuilder(std::uint32_t ilds, std::uint32_t ildSize) {
    auto topology = vipu::Topology::create("pod-a", ilds, ildSize);
    view_.planner = std::make_shared<vipu::PartitionPlanner>(*topology);
  }

  // A job in `ns` admitted at `admittedAt`, holding one partition per entry of `blocks` ({first IPU, size}).
  PodBuilder& job(const std::string& ns, const std::string& name,
                  const std::vector<std::pair<std::uint32_t, std::uint32_t>>& blocks,
                  const std::string& admittedAt = "2026-11-28T09:00:00Z") {
    nlohmann::json job{
        {"metadata",
         {{"namespace", ns}, {"name", name}, {"uid", "5f0e9c1a-" + std::to_string(jobs_.size())}}},
        {"status",
         {{"partitions", nlohmann::json::array()},
          {"conditions", {{{"type", "Admitted"}, {"status", "True"}, {"lastTransitionTime", admittedAt}}}}}}};
    for (std::uint32_t instance = 0; instance < blocks.size(); ++instance) {
      const std::string id = controllers::partitionIdFor(kPrefixes.current, ns, name, instance);
      job["status"]["partitions"].push_back({{"id", id},
                                             {"instance", instance},
                                             {"size", blocks[instance].second},
                                             {"controller", "vipu-a"},
                                             {"ipus", "x"},
                                             {"state", "Active"}});
      partition(id, blocks[instance].first, blocks[instance].second);
    }
    jobs_.push_back(std::make_shared<const nlohmann::json>(std::move(job)));
    return *this;
  }

  // A partition V-IPU has under `id`, on consecutive global IPUs.
  PodBuilder& partition(const std::string& id, std::uint32_t first, std::uint32_t size,
                        const std::string& cluster = "pod-a") {
    const vipu::Topology& topology = view_.planner->topology();
    vipu::Partition partition;
    partition.id = id;
    partition.spec.clusterId = cluster;
    for (std::uint32_t ipu = first; ipu < first + size; ++ipu) {
      partition.spec.ipus.push_back({topology.ildOf(ipu), 0, topology.topologyIdOf(ipu), ipu - first});
    }
    partition.readyState = vipu::ReadyState::kActive;
    view_.partitions.push_back(std::move(partition));
    return *this;
  }

  api::IpuPodStatus status() const { return statusWith(jobs_); }
  // The same partitions with other jobs.
  api::IpuPodStatus statusWith(const std::vector<kube::ObjectPtr>& jobs) const {
    std::vector<std::shared_ptr<const api::JobSummary>> summaries;  // as the IPUJob cache keeps them
    for (const auto& job : jobs)
      summaries.push_back(std::make_shared<const api::JobSummary>(api::summarizeJob(*job)));
    return controllers::ipuPodStatusOf("vipu-a", &view_, summaries, kPrefixes);
  }
  const std::vector<kube::ObjectPtr>& jobs() const { return jobs_; }

 private:
  controllers::VipuInventory::View view_;
  std::vector<kube::ObjectPtr> jobs_;
};

}  // namespace ipu::testing
