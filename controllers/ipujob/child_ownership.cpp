#include "ipujob/child_ownership.h"

#include "common/json_access.h"

namespace ipu::controllers {

ChildHolder holderOf(const nlohmann::json& object, const api::ObjectIdentity& job) {
  const nlohmann::json& references = member(member(object, "metadata"), "ownerReferences");
  if (!references.is_array()) return ChildHolder::kSomebodyElse;
  for (const nlohmann::json& reference : references) {
    if (!reference.is_object() || reference.value("controller", false) != true) continue;
    const std::string apiVersion = stringMember(reference, "apiVersion");
    const bool anIpuJob = stringMember(reference, "kind") == api::kKind &&
                          apiVersion.starts_with(std::string(api::kGroup) + "/");
    if (!anIpuJob || stringMember(reference, "name") != job.name) return ChildHolder::kSomebodyElse;
    return stringMember(reference, "uid") == job.uid ? ChildHolder::kThisJob : ChildHolder::kEarlierJob;
  }
  return ChildHolder::kSomebodyElse;
}

}  // namespace ipu::controllers
