// IPUJob decoding and validation (operator/api/ipujob.h): the input is an IPUJob as JSON (the API server's
// form) or, when it is not JSON, as a YAML manifest (read with the tests' YAML-to-JSON helper, so that users'
// manifests seed it too).
// Checks: parseIpuJob never throws and refuses only with InvalidArgument; parseIpuJobSpec agrees with it on
// the spec; an accepted job keeps every rule the parser promises (counts in range, IPUs a power of two that
// the replicas divide, a container with a name and an image, exit code ranges in 0-255, bounded times and
// priority, a name its worker pods can carry); and the job written back as a manifest (the fields the parser
// reads, in their canonical form) parses to the same job.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include <yaml-cpp/exceptions.h>

#include "api/ipujob.h"
#include "fuzz_check.h"
#include "yaml_json.h"

namespace {

using namespace ipu;
using namespace ipu::api;

const char* restartTypeName(RestartType type) {
  switch (type) {
    case RestartType::kNever:
      return "Never";
    case RestartType::kOnFailure:
      return "OnFailure";
    case RestartType::kAlways:
      return "Always";
    case RestartType::kExitCode:
      return "ExitCode";
  }
  return "?";
}

const char* cleanPodPolicyName(CleanPodPolicy policy) {
  switch (policy) {
    case CleanPodPolicy::kNone:
      return "None";
    case CleanPodPolicy::kAll:
      return "All";
    case CleanPodPolicy::kWorkers:
      return "Workers";
  }
  return "?";
}

// The job as a manifest: what the parser reads, in the form it documents.
Json manifestOf(const IpuJob& job) {
  const IpuJobSpec& spec = job.spec;
  std::string exitCodes;
  for (const ExitCodeRange& range : spec.restartExitCodes) {
    if (!exitCodes.empty()) exitCodes += ",";
    exitCodes += std::to_string(range.first);
    if (range.last != range.first) exitCodes += "-" + std::to_string(range.last);
  }
  Json restart = {{"type", restartTypeName(spec.restartType)}, {"backOffLimit", spec.backOffLimit}};
  if (!exitCodes.empty()) restart["exitCodes"] = exitCodes;
  Json manifest = {{"apiVersion", std::string(kGroup) + "/" + kVersion},
                   {"kind", kKind},
                   {"metadata",
                    {{"name", job.identity.name},
                     {"namespace", job.identity.ns},
                     {"uid", job.identity.uid},
                     {"generation", job.generation}}},
                   {"spec",
                    {{"jobInstances", spec.jobInstances},
                     {"ipusPerJobInstance", std::to_string(spec.ipusPerJobInstance)},
                     {"workersPerJobInstance", std::to_string(spec.workersPerJobInstance)},
                     {"modelReplicasPerWorker", std::to_string(spec.modelReplicasPerWorker)},
                     {"workers", {{"template", spec.workerTemplate}}},
                     {"launcher", {{"command", spec.launcherCommand}, {"env", spec.launcherEnv}}},
                     {"restartPolicy", restart},
                     {"cleanPodPolicy", cleanPodPolicyName(spec.cleanPodPolicy)},
                     {"suspend", spec.suspend},
                     {"priority", spec.priority}}}};
  if (spec.ttlSecondsAfterFinished)
    manifest["spec"]["ttlSecondsAfterFinished"] = *spec.ttlSecondsAfterFinished;
  if (spec.activeDeadlineSeconds) manifest["spec"]["activeDeadlineSeconds"] = *spec.activeDeadlineSeconds;
  return manifest;
}

bool sameSpec(const IpuJobSpec& a, const IpuJobSpec& b) {
  return a.jobInstances == b.jobInstances && a.ipusPerJobInstance == b.ipusPerJobInstance &&
         a.workersPerJobInstance == b.workersPerJobInstance &&
         a.modelReplicasPerWorker == b.modelReplicasPerWorker && a.workerTemplate == b.workerTemplate &&
         a.launcherCommand == b.launcherCommand && a.launcherEnv == b.launcherEnv &&
         a.restartType == b.restartType && a.backOffLimit == b.backOffLimit &&
         a.restartExitCodes == b.restartExitCodes && a.cleanPodPolicy == b.cleanPodPolicy &&
         a.suspend == b.suspend && a.ttlSecondsAfterFinished == b.ttlSecondsAfterFinished &&
         a.activeDeadlineSeconds == b.activeDeadlineSeconds && a.priority == b.priority;
}

bool sameJob(const IpuJob& a, const IpuJob& b) {
  return a.identity.ns == b.identity.ns && a.identity.name == b.identity.name &&
         a.identity.uid == b.identity.uid && a.generation == b.generation && sameSpec(a.spec, b.spec);
}

bool inRange(int value, int min, int max) {
  return value >= min && value <= max;
}

void checkRules(const IpuJob& job) {
  const IpuJobSpec& spec = job.spec;
  FUZZ_CHECK(inRange(spec.jobInstances, 1, 1024));
  FUZZ_CHECK(inRange(spec.ipusPerJobInstance, 1, 1024));
  FUZZ_CHECK((spec.ipusPerJobInstance & (spec.ipusPerJobInstance - 1)) == 0);
  FUZZ_CHECK(inRange(spec.workersPerJobInstance, 1, 1024));
  FUZZ_CHECK(inRange(spec.modelReplicasPerWorker, 1, 1024));
  FUZZ_CHECK(spec.ipusPerJobInstance % spec.replicasPerInstance() == 0);
  FUZZ_CHECK(spec.ipusPerReplica() >= 1);
  FUZZ_CHECK(spec.workerCount() == spec.jobInstances * spec.workersPerJobInstance);
  const Json& containers = spec.workerTemplate.at("spec").at("containers");
  FUZZ_CHECK(containers.is_array() && !containers.empty());
  for (const Json& container : containers) {
    FUZZ_CHECK(container.at("name").is_string() && container.at("image").is_string());
  }
  FUZZ_CHECK(spec.backOffLimit >= 0);
  for (const ExitCodeRange& range : spec.restartExitCodes) {
    FUZZ_CHECK(0 <= range.first && range.first <= range.last && range.last <= 255);
    FUZZ_CHECK(spec.restartsOnExitCode(range.first) && spec.restartsOnExitCode(range.last));
  }
  FUZZ_CHECK(spec.restartType != RestartType::kExitCode || !spec.restartExitCodes.empty());
  if (spec.ttlSecondsAfterFinished)
    FUZZ_CHECK(*spec.ttlSecondsAfterFinished >= 0 && *spec.ttlSecondsAfterFinished <= kMaxSpecSeconds);
  if (spec.activeDeadlineSeconds)
    FUZZ_CHECK(*spec.activeDeadlineSeconds >= 1 && *spec.activeDeadlineSeconds <= kMaxSpecSeconds);
  FUZZ_CHECK(spec.priority >= -kMaxSpecPriority && spec.priority <= kMaxSpecPriority);
  FUZZ_CHECK(static_cast<int>(job.identity.name.size()) <= maxJobNameLength(spec.workerCount()));
}

void check(const Json& object) {
  auto job = parseIpuJob(object);
  const bool isJob = object.is_object() && object.contains("kind") && object["kind"] == kKind;
  if (!job) {
    FUZZ_CHECK(job.error().code == ErrorCode::kInvalidArgument);
    return;
  }
  FUZZ_CHECK(isJob);
  checkRules(*job);
  auto spec = parseIpuJobSpec(object["spec"]);
  FUZZ_CHECK(spec.ok() && sameSpec(*spec, job->spec));

  auto again = parseIpuJob(manifestOf(*job));
  FUZZ_CHECK(again.ok() && sameJob(*again, *job));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  if (Json json = Json::parse(text, nullptr, false); !json.is_discarded()) {
    check(json);
    return 0;
  }
  Json fromYaml;
  try {
    fromYaml = testing::yamlToJson(text);
  } catch (const YAML::Exception&) {
    return 0;  // not YAML either
  } catch (const std::out_of_range&) {
    return 0;  // the helper's number conversion: an integer beyond 64 bits
  }
  check(fromYaml);
  return 0;
}
