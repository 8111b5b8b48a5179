#pragma once

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "common/result.h"

namespace ipu::api {

// The largest IPUJob spec the operator takes, as JSON text. A users' 64-IPU manifest is about 3 KB; the
// bound keeps one job from costing the operator (which parses every job on each of its passes) more than a
// small fixed amount, whatever a tenant writes.
inline constexpr std::size_t kMaxSpecBytes = 256 * 1024;

// Checks the types of the worker PodTemplateSpec's fields that the operator reads or merges into worker
// pods (metadata labels and annotations; the pod's host namespaces, nodeSelector, volumes and security
// context; each container's name, image, command, args, env, volumeMounts, ports and security context), so
// that a mistyped template is refused with the field's path when the spec is parsed, before admission,
// instead of failing when its pods are built. Fields the operator does not read are left to the API server.
// Errors are InvalidArgument naming the field under `path` (e.g. "spec.workers.template").
Status checkPodTemplate(const nlohmann::json& podTemplate, const std::string& path);

}  // namespace ipu::api
