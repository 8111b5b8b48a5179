#include "ipujob/child_ownership.h"

#include "common/json_access.h"

namespace ipu::controllers {

bool isIpuJobReference(const nlohmann::json& reference) {
  return stringMember(reference, "kind") == api::kKind &&
         stringMember(reference, "apiVersion").starts_with(std::string(api::kGroup) + "/");
}

const nlohmann::json* controllerReferenceOf(const nlohmann::json& object) {
  const nlohmann::json& references = member(member(object, "metadata"), "ownerReferences");
  if (!references.is_array()) return nullptr;
  for (const nlohmann::json& reference : references) {
    if (reference.is_object() && reference.value("controller", false) == true) return &reference;
  }
  return nullptr;
}

ChildHolder holderOf(const nlohmann::json& object, const api::ObjectIdentity& job) {
  const nlohmann::json* reference = controllerReferenceOf(object);
  if (reference == nullptr || !isIpuJobReference(*reference) || stringMember(*reference, "name") != job.name)
    return ChildHolder::kSomebodyElse;
  return stringMember(*reference, "uid") == job.uid ? ChildHolder::kThisJob : ChildHolder::kEarlierJob;
}

}  // namespace ipu::controllers
