#pragma once

#include <cstddef>
#include <optional>

#include <nlohmann/json.hpp>

#include "kube/event_recorder.h"

namespace ipu::controllers {

// The job to tell that a watch event was too large for the operator to read (Informer's onOversized):
// the IPUJob itself, or the IPUJob a pod's controller ownerReference names (a pod in its namespace).
// nullopt for anything else, or when the skimmed prefix did not reach the owner references: the informer
// has logged it.
std::optional<kube::ObjectReference> jobOfOversized(const nlohmann::json& identity);

// A Warning Event ObjectTooLarge on that job, naming the object and its size.
void reportOversized(kube::EventRecorder& events, const nlohmann::json& identity, std::size_t bytes);

}  // namespace ipu::controllers
