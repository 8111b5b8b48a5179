#include "api/ipujob.h"

#include <algorithm>
#include <charconv>
#include <limits>

#include "api/pod_template.h"
#include "api/resources.h"
#include "common/json_access.h"

namespace ipu::api {
namespace {

Error invalidAt(const std::string& path, const std::string& message) {
  Error error = makeError(ErrorCode::kInvalidArgument, path + ": " + message);
  error.causes.push_back({path, message, "FieldValueInvalid"});
  return error;
}

Error invalid(const std::string& field, const std::string& message) {
  return invalidAt("spec." + field, message);
}

// `object`'s string `field`; `fallback` when it is absent or null, nothing when it is not a string.
std::optional<std::string> stringField(const Json& object, const std::string& field,
                                       const std::string& fallback) {
  auto found = object.find(field);
  if (found == object.end() || found->is_null()) return fallback;
  if (!found->is_string()) return std::nullopt;
  return found->get<std::string>();
}

// A whole number that fits int64 (JSON has no such limit, and unsigned numbers beyond it parse as uint64).
bool isInt64(const Json& value) {
  return value.is_number_integer() &&
         !(value.is_number_unsigned() &&
           value.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()));
}

std::optional<int> parseCount(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  int value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

// A number written as a string (Graphcore's API does this), within [1, max].
Result<int> countField(const Json& spec, const std::string& field, int fallback, int max) {
  auto found = spec.find(field);
  if (found == spec.end() || found->is_null()) return fallback;
  if (!found->is_string()) return invalid(field, "must be a number written as a string, like \"4\"");
  auto value = parseCount(found->get<std::string>());
  if (!value || *value < 1 || *value > max) {
    return invalid(field, "must be a whole number from 1 to " + std::to_string(max) + ", not \"" +
                              found->get<std::string>() + "\"");
  }
  return *value;
}

std::optional<int64_t> optionalInteger(const Json& spec, const std::string& field) {
  auto found = spec.find(field);
  if (found == spec.end() || !found->is_number_integer()) return std::nullopt;
  return found->get<int64_t>();
}

// An optional whole number within [min, max]; an error naming the field when it is out of range or not a
// whole number (a float, a string, or a number beyond int64).
// `object`'s integer `field` (spec.<parent><field>), when present, within [min, max].
Result<std::optional<int64_t>> boundedInteger(const Json& object, const std::string& field, int64_t min,
                                              int64_t max, const std::string& parent = "") {
  auto found = object.find(field);
  if (found == object.end() || found->is_null()) return std::optional<int64_t>();
  if (!isInt64(*found))
    return invalid(parent + field,
                   "must be a whole number from " + std::to_string(min) + " to " + std::to_string(max));
  const int64_t value = found->get<int64_t>();
  if (value < min || value > max)
    return invalid(parent + field, "must be from " + std::to_string(min) + " to " + std::to_string(max) +
                                       ", not " + std::to_string(value));
  return std::optional<int64_t>(value);
}

}  // namespace

bool IpuJobSpec::restartsOnExitCode(int code) const {
  for (const auto& range : restartExitCodes) {
    if (code >= range.first && code <= range.last) return true;
  }
  return false;
}

Result<std::vector<ExitCodeRange>> parseExitCodes(const std::string& text) {
  std::vector<ExitCodeRange> ranges;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string_view item(text.data() + start, (comma == std::string::npos ? text.size() : comma) - start);
    size_t dash = item.find('-');
    auto first = parseCount(item.substr(0, dash));
    auto last = dash == std::string_view::npos ? first : parseCount(item.substr(dash + 1));
    if (!first || !last || *first < 0 || *last > 255 || *first > *last) {
      return invalid(
          "restartPolicy.exitCodes",
          "must be exit codes (0-255) and ascending ranges separated by commas, like \"1,3-5\", not \"" +
              text + "\"");
    }
    ranges.push_back({*first, *last});
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return ranges;
}

namespace {

// `object`'s string `field` (spec.<path>) as one of `values` (absent or null: the one named `fallback`); an
// error listing the values otherwise ("must be A, B or C").
template <typename Enum>
Result<Enum> enumField(const Json& object, const std::string& field, const std::string& path,
                       std::initializer_list<std::pair<const char*, Enum>> values, const char* fallback) {
  std::string names;
  std::size_t index = 0;
  for (const auto& [name, value] : values) {
    names += (index == 0 ? "" : index + 1 == values.size() ? " or " : ", ") + std::string(name);
    ++index;
  }
  const std::optional<std::string> text = stringField(object, field, fallback);
  if (!text) return invalid(path, "must be " + names);
  for (const auto& [name, value] : values) {
    if (*text == name) return value;
  }
  return invalid(path, "must be " + names + ", not \"" + *text + "\"");
}

// jobInstances, ipusPerJobInstance, workersPerJobInstance, modelReplicasPerWorker: the gang's shape.
Status parseShape(const Json& spec, IpuJobSpec& out) {
  if (auto instances = optionalInteger(spec, "jobInstances")) {
    if (*instances < 1 || *instances > 1024) return invalid("jobInstances", "must be from 1 to 1024");
    out.jobInstances = static_cast<int>(*instances);
  } else if (spec.contains("jobInstances") && !spec["jobInstances"].is_null()) {
    return invalid("jobInstances", "must be a whole number");
  }
  if (!spec.contains("ipusPerJobInstance") || spec["ipusPerJobInstance"].is_null())
    return invalid("ipusPerJobInstance", "is required");
  auto ipus = countField(spec, "ipusPerJobInstance", 0, 1024);
  if (!ipus) return ipus.error();
  if ((*ipus & (*ipus - 1)) != 0) {
    return invalid("ipusPerJobInstance",
                   "must be a power of two from 1 to 1024, not " + std::to_string(*ipus));
  }
  out.ipusPerJobInstance = *ipus;
  auto workers = countField(spec, "workersPerJobInstance", 1, 1024);
  if (!workers) return workers.error();
  out.workersPerJobInstance = *workers;
  auto replicas = countField(spec, "modelReplicasPerWorker", 1, 1024);
  if (!replicas) return replicas.error();
  out.modelReplicasPerWorker = *replicas;
  if (out.ipusPerJobInstance % out.replicasPerInstance() != 0) {
    return invalid("modelReplicasPerWorker", "workersPerJobInstance x modelReplicasPerWorker (" +
                                                 std::to_string(out.replicasPerInstance()) +
                                                 " replicas) must divide ipusPerJobInstance (" +
                                                 std::to_string(out.ipusPerJobInstance) +
                                                 ") so that every replica gets the same number of IPUs");
  }
  return {};
}

// workers: the pod template (its containers named, with images) and the optional replica count.
Status parseWorkers(const Json& spec, IpuJobSpec& out) {
  const Json& workersField = spec.value("workers", Json());
  if (!workersField.is_object() || !workersField.contains("template") ||
      !workersField["template"].is_object()) {
    return invalid("workers.template", "is required (the worker pods' PodTemplateSpec)");
  }
  out.workerTemplate = workersField["template"];
  const Json& podSpec = out.workerTemplate.value("spec", Json());
  if (!podSpec.is_object() || !podSpec.contains("containers") || !podSpec["containers"].is_array() ||
      podSpec["containers"].empty()) {
    return invalid("workers.template.spec.containers", "must list at least one container");
  }
  for (const auto& container : podSpec["containers"]) {
    if (!container.is_object() || !container.value("name", Json()).is_string() ||
        !container.value("image", Json()).is_string()) {
      return invalid("workers.template.spec.containers", "every container needs a name and an image");
    }
  }
  if (Status typed = checkPodTemplate(out.workerTemplate, "spec.workers.template"); !typed) return typed;
  if (auto declared = optionalInteger(workersField, "replicas"); declared && *declared != out.workerCount()) {
    return invalid("workers.replicas", "when given, must equal jobInstances x workersPerJobInstance (" +
                                           std::to_string(out.workerCount()) + ")");
  }
  return {};
}

Status parseLauncher(const Json& spec, IpuJobSpec& out) {
  const Json& launcher = spec.value("launcher", Json());
  if (!launcher.is_object()) return {};
  for (const auto& part : launcher.value("command", Json::array())) {
    if (!part.is_string()) return invalid("launcher.command", "must be a list of strings");
    out.launcherCommand.push_back(part);
  }
  out.launcherEnv = launcher.value("env", Json::array());
  return {};
}

Status parseRestartPolicy(const Json& spec, IpuJobSpec& out) {
  const Json& restart = spec.value("restartPolicy", Json());
  if (!restart.is_object()) return {};
  auto type = enumField<RestartType>(restart, "type", "restartPolicy.type",
                                     {{"Always", RestartType::kAlways},
                                      {"OnFailure", RestartType::kOnFailure},
                                      {"Never", RestartType::kNever},
                                      {"ExitCode", RestartType::kExitCode}},
                                     "Never");
  if (!type) return type.error();
  out.restartType = *type;
  auto limit = boundedInteger(restart, "backOffLimit", 0, kMaxBackOffLimit, "restartPolicy.");
  if (!limit) return limit.error();
  if (*limit) out.backOffLimit = static_cast<int>(**limit);
  if (restart.contains("exitCodes") && restart["exitCodes"].is_string()) {
    auto codes = parseExitCodes(restart["exitCodes"]);
    if (!codes) return codes.error();
    out.restartExitCodes = *codes;
  }
  if (out.restartType == RestartType::kExitCode && out.restartExitCodes.empty()) {
    return invalid("restartPolicy.exitCodes",
                   "is required with restartPolicy.type ExitCode (like \"1,3-5\")");
  }
  return {};
}

// cleanPodPolicy, suspend, ttlSecondsAfterFinished, activeDeadlineSeconds, interactive, priority.
Status parseLifetime(const Json& spec, IpuJobSpec& out) {
  auto clean = enumField<CleanPodPolicy>(
      spec, "cleanPodPolicy", "cleanPodPolicy",
      {{"None", CleanPodPolicy::kNone}, {"All", CleanPodPolicy::kAll}, {"Workers", CleanPodPolicy::kWorkers}},
      "None");
  if (!clean) return clean.error();
  out.cleanPodPolicy = *clean;
  if (auto suspend = spec.find("suspend"); suspend != spec.end() && !suspend->is_null()) {
    if (!suspend->is_boolean()) return invalid("suspend", "must be true or false");
    out.suspend = suspend->get<bool>();
  }
  // The CRD sets these bounds, but an object stored before they existed (or written around the schema) must
  // still never reach the arithmetic on times and queue order out of range.
  auto ttl = boundedInteger(spec, "ttlSecondsAfterFinished", 0, kMaxSpecSeconds);
  if (!ttl) return ttl.error();
  out.ttlSecondsAfterFinished = *ttl;
  auto deadline = boundedInteger(spec, "activeDeadlineSeconds", 1, kMaxSpecSeconds);
  if (!deadline) return deadline.error();
  out.activeDeadlineSeconds = *deadline;
  if (const Json& interactive = member(spec, "interactive"); !interactive.is_null()) {
    if (!interactive.is_object()) return invalid("interactive", "must be an object, like {ttl: 3600}");
    auto sessionTtl = boundedInteger(interactive, "ttl", 0, kMaxSpecSeconds, "interactive.");
    if (!sessionTtl) return sessionTtl.error();
    auto idle = boundedInteger(interactive, "idleSeconds", 0, kMaxSpecSeconds, "interactive.");
    if (!idle) return idle.error();
    out.interactive = InteractiveSpec{sessionTtl->value_or(0), idle->value_or(0)};
  }
  if (const Json& outputs = member(spec, "outputs"); !outputs.is_null()) {
    if (!outputs.is_object()) return invalid("outputs", "must be an object, like {path: /outputs}");
    const Json& path = member(outputs, "path");
    if (!path.is_string()) return invalid("outputs.path", "is required: the directory worker 0 writes to");
    if (auto problem = outputsPathProblem(path.get<std::string>())) return invalid("outputs.path", *problem);
    auto retain = boundedInteger(outputs, "retainSeconds", 0, kMaxSpecSeconds, "outputs.");
    if (!retain) return retain.error();
    out.outputs = OutputsSpec{path.get<std::string>(), retain->value_or(0)};
  }
  auto priority = boundedInteger(spec, "priority", -kMaxSpecPriority, kMaxSpecPriority);
  if (!priority) return priority.error();
  out.priority = static_cast<int>(priority->value_or(0));
  return {};
}

}  // namespace

Result<IpuJobSpec> parseIpuJobSpec(const Json& spec) {
  if (!spec.is_object()) return invalid("", "the IPUJob has no spec");
  if (const std::size_t bytes = spec.dump(-1, ' ', false, Json::error_handler_t::replace).size();
      bytes > kMaxSpecBytes) {
    return invalidAt("spec", "is " + std::to_string(bytes) + " bytes as JSON; the operator takes at most " +
                                 std::to_string(kMaxSpecBytes));
  }
  IpuJobSpec out;
  for (Status (*part)(const Json&, IpuJobSpec&) :
       {parseShape, parseWorkers, parseLauncher, parseRestartPolicy, parseLifetime}) {
    if (Status parsed = part(spec, out); !parsed) return parsed.error();
  }
  return out;
}

std::optional<std::string> outputsPathProblem(const std::string& path) {
  if (path.empty() || path.front() != '/')
    return "must be an absolute path, like /outputs, not \"" + path + "\"";
  if (path.size() > kMaxOutputsPathLength)
    return "must have at most " + std::to_string(kMaxOutputsPathLength) + " characters";
  if (path == "/") return "must not be / (it becomes a directory of its own in the worker container)";
  std::size_t start = 1;
  std::string first;
  while (start <= path.size()) {
    const std::size_t end = std::min(path.find('/', start), path.size());
    const std::string component = path.substr(start, end - start);
    if (component.empty() || component == "." || component == "..")
      return "must be a plain absolute path (no empty, \".\" or \"..\" parts), not \"" + path + "\"";
    if (first.empty()) first = component;
    start = end + 1;
  }
  if (first == "dev" || first == "proc" || first == "sys")
    return "must not be under /" + first + " (the container runtime's own), not \"" + path + "\"";
  return std::nullopt;
}

int maxJobNameLength(int workerCount) {
  constexpr int kMaxPodName = 253;
  const int suffix =
      static_cast<int>(std::string("-worker-").size() + std::to_string(std::max(workerCount, 1) - 1).size());
  return kMaxPodName - suffix;
}

Result<IpuJob> parseIpuJob(const Json& object) {
  if (auto kind = object.find("kind"); !object.is_object() || kind == object.end() || *kind != kKind) {
    return makeError(ErrorCode::kInvalidArgument, "not an IPUJob");
  }
  // The API server fills these in; from anywhere else, a value of the wrong type is refused, not thrown.
  const Json& metadata = object.value("metadata", Json::object());
  if (!metadata.is_object() && !metadata.is_null()) return invalidAt("metadata", "must be an object");
  IpuJob job;
  for (auto [field, value] : {std::pair{"namespace", &job.identity.ns}, std::pair{"name", &job.identity.name},
                              std::pair{"uid", &job.identity.uid}}) {
    auto text = stringField(metadata, field, "");
    if (!text) return invalidAt(std::string("metadata.") + field, "must be a string");
    *value = std::move(*text);
  }
  if (auto generation = metadata.find("generation"); generation != metadata.end() && !generation->is_null()) {
    if (!isInt64(*generation)) return invalidAt("metadata.generation", "must be a whole number");
    job.generation = generation->get<int64_t>();
  }
  auto spec = parseIpuJobSpec(object.value("spec", Json()));
  if (!spec) return spec.error();
  job.spec = std::move(*spec);
  const int maxName = maxJobNameLength(job.spec.workerCount());
  if (static_cast<int>(job.identity.name.size()) > maxName) {
    return makeError(
        ErrorCode::kInvalidArgument,
        "metadata.name is too long: worker pods are named <name>-worker-<index> and a pod name has "
        "at most 253 characters, so with " +
            std::to_string(job.spec.workerCount()) + " workers the job's name may have at most " +
            std::to_string(maxName) + " characters");
  }
  return job;
}

std::string pinnedVipuController(const IpuJobSpec& spec) {
  const Json& podSpec =
      spec.workerTemplate.is_object() ? spec.workerTemplate.value("spec", Json::object()) : Json::object();
  const Json selector = podSpec.is_object() ? podSpec.value("nodeSelector", Json::object()) : Json::object();
  if (!selector.is_object()) return "";
  const auto it = selector.find(kVipuControllerNodeLabel);
  return it != selector.end() && it->is_string() ? it->get<std::string>() : "";
}

ObjectIdentity identityOf(const Json& object) {
  const Json& metadata = member(object, "metadata");
  return {stringMember(metadata, "namespace"), stringMember(metadata, "name"), stringMember(metadata, "uid")};
}

std::optional<int64_t> ttlSecondsAfterFinished(const Json& spec) {
  const Json& ttl = member(spec, "ttlSecondsAfterFinished");
  if (!ttl.is_number_integer()) return std::nullopt;
  if (ttl.is_number_unsigned() && ttl.get<uint64_t>() > static_cast<uint64_t>(kMaxSpecSeconds)) {
    return kMaxSpecSeconds;
  }
  return std::clamp<int64_t>(ttl.get<int64_t>(), 0, kMaxSpecSeconds);
}

}  // namespace ipu::api
