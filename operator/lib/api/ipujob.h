#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"

namespace ipu::api {

using Json = nlohmann::json;

inline constexpr const char* kGroup = "graphcore.ai";
inline constexpr const char* kVersion = "v1alpha1";
inline constexpr const char* kKind = "IPUJob";

enum class RestartType { kNever, kOnFailure, kAlways, kExitCode };
enum class CleanPodPolicy { kNone, kAll, kWorkers };

// An inclusive range of exit codes from restartPolicy.exitCodes ("1,3-5" -> {1,1},{3,5}).
struct ExitCodeRange {
  int first = 0;
  int last = 0;
  bool operator==(const ExitCodeRange&) const = default;
};

// The spec of an IPUJob as the controller works with it: numbers parsed, defaults filled, checked.
// The pod template stays JSON: it is the user's PodTemplateSpec, merged into worker pods as written.
// The CRD's maxima for the numbers the controller does arithmetic with: a year of seconds
// (ttlSecondsAfterFinished, activeDeadlineSeconds), and PriorityClass's range for priority.
inline constexpr int64_t kMaxSpecSeconds = 31'536'000;
inline constexpr int64_t kMaxSpecPriority = 1'000'000'000;
// restartPolicy.backOffLimit: the int32 the CRD declares (the API server does not enforce `format: int32`).
inline constexpr int64_t kMaxBackOffLimit = 2'147'483'647;

// Worker pods are named "<name>-worker-<index>" and a pod name has at most 253 characters: the longest job
// name for `workerCount` workers (the last index's digits count). The CRD's rule on metadata.name is the
// same.
int maxJobNameLength(int workerCount);

// spec.interactive (Graphcore's interactive mode): the workers run the template's command, typically a
// notebook or `sleep infinity`, and the job ends `ttlSeconds` after every worker first ran. 0: the operator's
// default (--interactive-ttl-seconds).
struct InteractiveSpec {
  int64_t ttlSeconds = 0;
  // Idle reclaim: the job ends this long without a kubectl exec process, port-forward traffic or CPU use in
  // its workers; 0: the operator's default (--interactive-idle-seconds, itself 0: off).
  int64_t idleSeconds = 0;
  bool operator==(const InteractiveSpec&) const = default;
};

// spec.outputs: a directory worker 0 writes its outputs to (profiles, checkpoints), kept readable for
// `kubectl ipu cp` for retainSeconds after worker 0's command ends, while the job is already over and its
// IPUs released (docs/user-guide.md, "Files after the command ends"). 0: the operator's default
// (--outputs-retain-seconds).
struct OutputsSpec {
  std::string path;  // absolute, without "." or ".." (outputsPathProblem)
  int64_t retainSeconds = 0;
  bool operator==(const OutputsSpec&) const = default;
};
// The longest spec.outputs.path (the CRD's maxLength).
inline constexpr std::size_t kMaxOutputsPathLength = 1024;
// Why `path` cannot be spec.outputs.path (nullopt when it can): it must be absolute, at most
// kMaxOutputsPathLength characters, without empty, "." or ".." components, and neither "/" nor under the
// kernel's and the container runtime's own directories (/dev, /proc, /sys). Pure.
std::optional<std::string> outputsPathProblem(const std::string& path);

struct IpuJobSpec {
  int jobInstances = 1;
  int ipusPerJobInstance = 0;
  int workersPerJobInstance = 1;
  int modelReplicasPerWorker = 1;
  Json workerTemplate;                       // PodTemplateSpec
  std::vector<std::string> launcherCommand;  // empty: no launcher
  Json launcherEnv = Json::array();
  RestartType restartType = RestartType::kNever;
  int backOffLimit = 3;
  std::vector<ExitCodeRange> restartExitCodes;
  CleanPodPolicy cleanPodPolicy = CleanPodPolicy::kNone;
  bool suspend = false;
  std::optional<int64_t> ttlSecondsAfterFinished;
  std::optional<int64_t> activeDeadlineSeconds;
  std::optional<InteractiveSpec> interactive;  // absent: not an interactive job
  std::optional<OutputsSpec> outputs;          // absent: worker 0 goes as cleanPodPolicy says
  int priority = 0;

  int workerCount() const { return jobInstances * workersPerJobInstance; }
  int replicasPerInstance() const { return workersPerJobInstance * modelReplicasPerWorker; }
  int ipusPerReplica() const { return ipusPerJobInstance / replicasPerInstance(); }
  bool restartsOnExitCode(int code) const;
};

// The identity of an IPUJob object that its children refer to.
struct ObjectIdentity {
  std::string ns;
  std::string name;
  std::string uid;

  bool operator==(const ObjectIdentity&) const = default;
};

struct IpuJob {
  ObjectIdentity identity;
  int64_t generation = 0;
  IpuJobSpec spec;
};

// Reads and checks an IPUJob as the API server returns it. The CRD refuses most bad input at the door;
// this repeats every rule (and adds the ones CEL cannot express) so that a job created before a CRD upgrade,
// or a client-side check, gets the same clear message. Errors are InvalidArgument naming the field.
Result<IpuJob> parseIpuJob(const Json& object);
// metadata.namespace, name and uid as they are ("" where absent or not a string): a job whose spec does not
// parse still has an identity, which its children and Events refer to.
ObjectIdentity identityOf(const Json& object);
// spec.ttlSecondsAfterFinished of a stored object, saturated to [0, kMaxSpecSeconds] (an object stored before
// the CRD had the bound must not overflow a time); nullopt when absent or not a whole number. Read from the
// object, not the parsed spec: a finished job is deleted by its TTL even when its spec no longer parses.
std::optional<int64_t> ttlSecondsAfterFinished(const Json& spec);
Result<IpuJobSpec> parseIpuJobSpec(const Json& spec);
// The V-IPU controller the worker template pins the job to (its nodeSelector on kVipuControllerNodeLabel);
// "" when it does not pin one.
std::string pinnedVipuController(const IpuJobSpec& spec);
// "1,3-5" -> ranges; InvalidArgument on anything else.
Result<std::vector<ExitCodeRange>> parseExitCodes(const std::string& text);

}  // namespace ipu::api
