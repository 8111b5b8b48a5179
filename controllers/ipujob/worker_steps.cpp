#include "ipujob/worker_steps.h"

#include "common/failpoint.h"
#include "ipujob/runtime_injection.h"
#include "tls/pki.h"
#include "vipu/poplar_target_options.h"

namespace ipu::controllers {

Status WorkerSteps::createMissing(const JobPass& pass, const api::IpuJob& job, const WorkerPods& pods,
                                  const PartitionsState& partitions) {
  const auto held = pass.status.heldPartitions();
  int created = 0;
  for (int k = 0; k < job.spec.workerCount(); ++k) {
    if (pods.current.contains(workerPodName(job.identity.name, k))) continue;
    if (created == 0) {
      if (auto secret = ensureRuntimeSecret(job); !secret) return secret.error();
      auto service =
          client_.create(kube::ResourceRef::services(), job.identity.ns, buildHeadlessService(job));
      if (!service && service.error().code != ErrorCode::kAlreadyExists) return service.error();
    }
    const auto& partition =
        partitions.byId.at(held.at(static_cast<std::size_t>(k / job.spec.workersPerJobInstance)).id);
    const VipuTarget& target = *partitions.target;
    const PartitionAssignment assignment{partition.id,
                                         target.name,
                                         target.host,
                                         target.port,
                                         vipu::poplarTargetOptions(partition, partitions.planner->topology()),
                                         pass.attempt()};
    auto pod = client_.create(kube::ResourceRef::pods(), job.identity.ns,
                              buildWorkerPod(job, k, assignment, options_));
    if (!pod && pod.error().code != ErrorCode::kAlreadyExists) return pod.error();
    ++created;
  }
  if (created > 0) {
    events_.record(kube::referenceTo(pass.object), kube::EventType::kNormal, "PodsCreated",
                   "Created " + std::to_string(created) + " worker pod(s)");
    failpoint("ipujob/after-pods-created");
  }
  return {};
}

Status WorkerSteps::ensureRuntimeSecret(const api::IpuJob& job) {
  if (options_.runtime.image.empty() || !needsRuntimeCredentials(job.spec)) return {};
  // A new CA and key pair each time pods are made: when the Secret exists already (an earlier attempt, a
  // create that timed out), that one is the job's and stays.
  runtime::pki::JobCredentials credentials =
      runtime::pki::issueJobCredentials(runtimeIdentity(job.identity), kRuntimeCredentialValidity);
  auto secret =
      client_.create(kube::ResourceRef::secrets(), job.identity.ns,
                     buildRuntimeSecret(job, credentials.caCertPem, credentials.certPem, credentials.keyPem));
  if (!secret && secret.error().code != ErrorCode::kAlreadyExists) return secret.error();
  return {};
}

Status WorkerSteps::remove(const std::vector<kube::ObjectPtr>& pods) {
  for (const kube::ObjectPtr& pod : pods) {
    const Json& metadata = (*pod)["metadata"];
    if (!member(metadata, "deletionTimestamp").is_null()) continue;  // already going
    kube::DeleteOptions options;
    options.preconditionUid = metadata.value("uid", "");  // never a newer pod of the same name
    auto removed = client_.remove(kube::ResourceRef::pods(), metadata.value("namespace", ""),
                                  metadata.value("name", ""), options);
    if (!removed && removed.error().code != ErrorCode::kNotFound &&
        removed.error().code != ErrorCode::kConflict) {
      return removed.error();
    }
  }
  return {};
}

}  // namespace ipu::controllers
