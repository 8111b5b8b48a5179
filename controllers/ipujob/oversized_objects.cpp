#include "ipujob/oversized_objects.h"

#include <string>

#include "common/json_access.h"
#include "ipujob/child_ownership.h"

namespace ipu::controllers {

std::optional<kube::ObjectReference> jobOfOversized(const nlohmann::json& identity) {
  const nlohmann::json& metadata = member(identity, "metadata");
  const std::string ns = stringMember(metadata, "namespace");
  if (isIpuJobReference(identity)) return kube::referenceTo(identity);
  const nlohmann::json* reference = controllerReferenceOf(identity);
  if (reference == nullptr || !isIpuJobReference(*reference)) return std::nullopt;
  return kube::ObjectReference{
      stringMember(*reference, "apiVersion"), api::kKind, ns, stringMember(*reference, "name"),
      stringMember(*reference, "uid"),        ""};
}

void reportOversized(kube::EventRecorder& events, const nlohmann::json& identity, std::size_t bytes) {
  const auto job = jobOfOversized(identity);
  if (!job) return;
  const std::string kind = stringMember(identity, "kind");
  const std::string what =
      (kind.empty() ? "object" : kind) + " " + stringMember(member(identity, "metadata"), "name");
  events.record(*job, kube::EventType::kWarning, "ObjectTooLarge",
                what + " is " + std::to_string(bytes) +
                    " bytes, more than the operator reads of one object: this version of it is ignored "
                    "(the operator acts on the last version it could read)");
}

}  // namespace ipu::controllers
