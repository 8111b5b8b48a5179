#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "kube/store.h"

// IPUJobs and worker pods as the operator's caches hold them, for tests of the V-IPU proxy (which knows its
// callers from these caches) without a Kubernetes cluster.
namespace ipu::testing {

// One entry of status.partitions.
nlohmann::json partitionRecord(const std::string& id, int instance, const std::string& controller,
                               const std::string& state = "Active");

// An IPUJob with `partitions` as its status.partitions.
nlohmann::json ipuJobObject(const std::string& ns, const std::string& name, const std::string& uid,
                            const nlohmann::json& partitions);

// A running worker pod of IPUJob `job` (uid `jobUid`) in `ns` at `ip` on a node at another address, as the
// operator creates it (a controller ownerReference, the attempt label) and its cache trims it.
nlohmann::json workerPodObject(const std::string& ns, const std::string& name, const std::string& job,
                               const std::string& jobUid, const std::string& ip);

// Adds (or replaces) `object` in `store`, as its watch would.
void put(kube::Store& store, nlohmann::json object);

}  // namespace ipu::testing
