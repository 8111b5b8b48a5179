#include "api/ipuquota.h"

#include <limits>
#include <utility>

#include "common/json_access.h"

namespace ipu::api {
namespace {

constexpr std::int64_t kInt32Max = std::numeric_limits<std::int32_t>::max();
constexpr std::int64_t kInt32Min = std::numeric_limits<std::int32_t>::min();

Error invalid(const std::string& field, const std::string& message) {
  const std::string path = field.empty() ? "spec" : "spec." + field;
  Error error = makeError(ErrorCode::kInvalidArgument, path + ": " + message);
  error.causes.push_back({path, message, "FieldValueInvalid"});
  return error;
}

// An integer field within [min, max]; nullopt when absent or null. Strings, fractions and numbers beyond
// int64 (which JSON parsers keep as unsigned or floating point) are refused, not rounded or wrapped.
Result<std::optional<std::int64_t>> integerField(const Json& spec, const std::string& field, std::int64_t min,
                                                 std::int64_t max) {
  const auto found = spec.find(field);
  if (found == spec.end() || found->is_null()) return std::optional<std::int64_t>();
  const std::string range = " from " + std::to_string(min) + " to " + std::to_string(max);
  if (found->is_string()) {
    return invalid(field, "must be a whole number" + range + ", written without quotes, not \"" +
                              found->get<std::string>() + "\"");
  }
  if (!found->is_number()) return invalid(field, "must be a whole number" + range + ", not " + found->dump());
  if (found->is_number_float())
    return invalid(field, "must be a whole number" + range + ", not " + found->dump());
  if (found->is_number_unsigned() && found->get<std::uint64_t>() > static_cast<std::uint64_t>(max)) {
    return invalid(field, "must be a whole number" + range + ", not " + found->dump());
  }
  const auto value = found->get<std::int64_t>();
  if (value < min || value > max)
    return invalid(field, "must be a whole number" + range + ", not " + found->dump());
  return std::optional<std::int64_t>(value);
}

}  // namespace

Result<IpuQuotaSpec> parseIpuQuotaSpec(const Json& spec) {
  if (!spec.is_object()) return invalid("", "the IPUQuota has no spec (it needs at least maxIPUs)");
  IpuQuotaSpec out;
  auto maxIpus = integerField(spec, "maxIPUs", 0, kInt32Max);
  if (!maxIpus) return maxIpus.error();
  if (!*maxIpus) return invalid("maxIPUs", "is required (the IPUs the namespace's jobs may hold together)");
  out.maxIpus = **maxIpus;
  auto maxJobs = integerField(spec, "maxJobs", 0, kInt32Max);
  if (!maxJobs) return maxJobs.error();
  out.maxJobs = *maxJobs;
  // The range of IPUJob spec.priority (int32, as Kubernetes priorities are).
  auto maxPriority = integerField(spec, "maxPriority", kInt32Min, kInt32Max);
  if (!maxPriority) return maxPriority.error();
  out.maxPriority = *maxPriority;
  return out;
}

Result<std::map<std::string, LedgerEntry>> parseLedger(const Json& status) {
  std::map<std::string, LedgerEntry> ledger;
  if (!status.is_object()) return ledger;
  const auto admissions = status.find(kLedgerField);
  if (admissions == status.end() || admissions->is_null()) return ledger;
  const std::string path = std::string("status.") + kLedgerField;
  if (!admissions->is_object())
    return makeError(ErrorCode::kInvalidArgument, path + ": must be a map of jobs");
  for (const auto& [job, entry] : admissions->items()) {
    const auto uid = entry.is_object() ? entry.find("uid") : entry.end();
    const auto ipus = entry.is_object() ? entry.find("ipus") : entry.end();
    if (uid == entry.end() || !uid->is_string() || ipus == entry.end() || !ipus->is_number_integer() ||
        ipus->get<std::int64_t>() < 0) {
      return makeError(
          ErrorCode::kInvalidArgument,
          path + "." + job + ": must be {uid: <job uid>, ipus: <0 or more>}, not " + entry.dump());
    }
    const auto version = entry.find("jobVersion");
    ledger[job] = {uid->get<std::string>(), ipus->get<std::int64_t>(),
                   version != entry.end() && version->is_string() ? version->get<std::string>() : ""};
  }
  return ledger;
}

Result<IpuQuota> parseIpuQuota(const Json& object) {
  if (!object.is_object() || object.value("kind", "") != kQuotaKind) {
    return makeError(ErrorCode::kInvalidArgument, "not an IPUQuota");
  }
  const Json& metadata = object.value("metadata", Json::object());
  IpuQuota quota;
  quota.identity = {metadata.value("namespace", ""), metadata.value("name", ""), metadata.value("uid", "")};
  quota.generation = metadata.value("generation", std::int64_t{0});
  quota.resourceVersion = metadata.value("resourceVersion", "");
  auto spec = parseIpuQuotaSpec(object.value("spec", Json()));
  if (!spec) return spec.error();
  quota.spec = std::move(*spec);
  auto ledger = parseLedger(object.value("status", Json()));
  if (!ledger) return ledger.error();
  quota.admissions = std::move(*ledger);
  return quota;
}

IpuQuotaStatus parseIpuQuotaStatus(const Json& status) {
  const auto count = [&status](const char* field) -> std::int64_t {
    const Json& value = member(status, field);
    return value.is_number_integer() ? value.get<std::int64_t>() : 0;
  };
  IpuQuotaStatus parsed{count("usedIPUs"),     count("reservedIPUs"), count("pendingIPUs"),
                        count("admittedJobs"), count("waitingJobs"),  std::nullopt};
  if (const Json& generation = member(status, "observedGeneration"); generation.is_number_integer()) {
    parsed.observedGeneration = generation.get<std::int64_t>();
  }
  return parsed;
}

Json toJson(const IpuQuotaStatus& status) {
  Json json = {{"usedIPUs", status.usedIpus},
               {"reservedIPUs", status.reservedIpus},
               {"pendingIPUs", status.pendingIpus},
               {"admittedJobs", status.admittedJobs},
               {"waitingJobs", status.waitingJobs}};
  if (status.observedGeneration) json["observedGeneration"] = *status.observedGeneration;
  return json;
}

}  // namespace ipu::api
