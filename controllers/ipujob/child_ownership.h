#pragma once

#include <nlohmann/json.hpp>

#include "api/ipujob.h"

namespace ipu::controllers {

// Who holds an existing object under a name the operator derives for one of a job's children.
enum class ChildHolder {
  kThisJob,       // its controller ownerReference names this job's uid
  kEarlierJob,    // an IPUJob of the same name but another uid: one deleted and created again, whose
                  // children the garbage collector has not removed yet
  kSomebodyElse,  // anything else: a user's own object, another controller's
};

// Whether an ownerReference names an IPUJob (its kind, in the graphcore.ai group at any version).
bool isIpuJobReference(const nlohmann::json& reference);

// The object's controller ownerReference (the one with controller: true), or nullptr.
const nlohmann::json* controllerReferenceOf(const nlohmann::json& object);

// Judged by the controller ownerReference alone (labels can be set by anyone; a uid cannot be reused).
ChildHolder holderOf(const nlohmann::json& object, const api::ObjectIdentity& job);

}  // namespace ipu::controllers
