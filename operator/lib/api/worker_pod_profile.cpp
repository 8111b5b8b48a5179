#include "api/worker_pod_profile.h"

#include <array>

namespace ipu::api {
namespace {

using Json = nlohmann::json;

// The Pod Security Standards' `baseline` level (Kubernetes v1.37), field by field; the two additions for IPU
// workers are marked. Kept in step with deploy/helm's ValidatingAdmissionPolicy, which holds the same rules.
constexpr std::array kAllowedCapabilities = {
    "AUDIT_WRITE",      "CHOWN",   "DAC_OVERRIDE", "FOWNER",  "FSETID", "KILL",       "MKNOD",
    "NET_BIND_SERVICE", "SETFCAP", "SETGID",       "SETPCAP", "SETUID", "SYS_CHROOT", "IPC_LOCK",
    "CAP_IPC_LOCK",  // IPU workers: pinned host buffers
};
constexpr std::array kSafeSysctls = {
    "kernel.shm_rmid_forced",        "net.ipv4.ip_local_port_range", "net.ipv4.ip_unprivileged_port_start",
    "net.ipv4.tcp_syncookies",       "net.ipv4.ping_group_range",    "net.ipv4.ip_local_reserved_ports",
    "net.ipv4.tcp_keepalive_time",   "net.ipv4.tcp_fin_timeout",     "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
};
constexpr std::array kAllowedSeLinuxTypes = {"", "container_t", "container_init_t", "container_kvm_t",
                                             "container_engine_t"};
constexpr const char* kAppArmorAnnotationPrefix = "container.apparmor.security.beta.kubernetes.io/";

template <std::size_t N>
bool oneOf(const std::array<const char*, N>& allowed, const std::string& value) {
  for (const char* entry : allowed) {
    if (value == entry) return true;
  }
  return false;
}

const Json& at(const Json& object, const char* field) {
  static const Json kNull;
  if (!object.is_object()) return kNull;
  const auto found = object.find(field);
  return found == object.end() ? kNull : *found;
}

std::string text(const Json& value) {
  return value.is_string() ? value.get<std::string>() : "";
}

bool isTrue(const Json& value) {
  return value.is_boolean() && value.get<bool>();
}

using Found = std::optional<ProfileViolation>;

Found violation(std::string field, std::string message) {
  return ProfileViolation{std::move(field), std::move(message)};
}

// seccompProfile, appArmorProfile, seLinuxOptions, windowsOptions of a pod or container security context.
Found securityContextViolation(const Json& context, const std::string& path) {
  if (isTrue(at(at(context, "windowsOptions"), "hostProcess")))
    return violation(path + ".windowsOptions.hostProcess", "Windows HostProcess pods are not allowed");
  if (const std::string type = text(at(at(context, "seccompProfile"), "type")); type == "Unconfined")
    return violation(path + ".seccompProfile.type", "must be RuntimeDefault or Localhost, not Unconfined");
  if (const std::string type = text(at(at(context, "appArmorProfile"), "type")); type == "Unconfined")
    return violation(path + ".appArmorProfile.type", "must be RuntimeDefault or Localhost, not Unconfined");
  const Json& seLinux = at(context, "seLinuxOptions");
  if (!oneOf(kAllowedSeLinuxTypes, text(at(seLinux, "type"))))
    return violation(path + ".seLinuxOptions.type",
                     "may only be container_t, container_init_t, container_kvm_t or container_engine_t");
  for (const char* field : {"user", "role"}) {
    if (!text(at(seLinux, field)).empty())
      return violation(path + ".seLinuxOptions." + field, "may not be set");
  }
  return std::nullopt;
}

Found containerViolation(const Json& container, const std::string& path) {
  const Json& context = at(container, "securityContext");
  const std::string contextPath = path + ".securityContext";
  if (isTrue(at(context, "privileged")))
    return violation(contextPath + ".privileged", "privileged containers are not allowed");
  const Json& added = at(at(context, "capabilities"), "add");
  for (std::size_t index = 0; added.is_array() && index < added.size(); ++index) {
    if (!oneOf(kAllowedCapabilities, text(added[index])))
      return violation(
          contextPath + ".capabilities.add[" + std::to_string(index) + "]",
          "adding " + text(added[index]) + " is not allowed (only the baseline capabilities and IPC_LOCK)");
  }
  if (const std::string mount = text(at(context, "procMount")); !mount.empty() && mount != "Default")
    return violation(contextPath + ".procMount", "must be Default");
  if (auto found = securityContextViolation(context, contextPath)) return found;
  const Json& ports = at(container, "ports");
  for (std::size_t index = 0; ports.is_array() && index < ports.size(); ++index) {
    const Json& hostPort = at(ports[index], "hostPort");
    if (hostPort.is_number_integer() && hostPort.get<int64_t>() != 0)
      return violation(path + ".ports[" + std::to_string(index) + "].hostPort", "host ports are not allowed");
  }
  return std::nullopt;
}

Found podSpecViolation(const Json& spec, const std::string& path) {
  for (const char* field : {"hostNetwork", "hostPID"}) {
    if (isTrue(at(spec, field)))
      return violation(path + "." + field, "sharing the host's namespaces is not allowed (only hostIPC)");
  }
  const Json& volumes = at(spec, "volumes");
  for (std::size_t index = 0; volumes.is_array() && index < volumes.size(); ++index) {
    if (!at(volumes[index], "hostPath").is_null())
      return violation(path + ".volumes[" + std::to_string(index) + "].hostPath",
                       "hostPath volumes are not allowed");
  }
  const Json& context = at(spec, "securityContext");
  if (auto found = securityContextViolation(context, path + ".securityContext")) return found;
  const Json& sysctls = at(context, "sysctls");
  for (std::size_t index = 0; sysctls.is_array() && index < sysctls.size(); ++index) {
    if (!oneOf(kSafeSysctls, text(at(sysctls[index], "name"))))
      return violation(path + ".securityContext.sysctls[" + std::to_string(index) + "].name",
                       "only the safe sysctls are allowed, not " + text(at(sysctls[index], "name")));
  }
  for (const char* kind : {"initContainers", "containers", "ephemeralContainers"}) {
    const Json& containers = at(spec, kind);
    for (std::size_t index = 0; containers.is_array() && index < containers.size(); ++index) {
      const std::string containerPath = path + "." + kind + "[" + std::to_string(index) + "]";
      if (auto found = containerViolation(containers[index], containerPath)) return found;
    }
  }
  return std::nullopt;
}

Found annotationViolation(const Json& metadata, const std::string& path) {
  const Json& annotations = at(metadata, "annotations");
  if (!annotations.is_object()) return std::nullopt;
  for (const auto& [key, value] : annotations.items()) {
    if (!key.starts_with(kAppArmorAnnotationPrefix)) continue;
    const std::string profile = text(value);
    if (profile != "runtime/default" && !profile.starts_with("localhost/"))
      return violation(path + ".annotations." + key, "must be runtime/default or localhost/<profile>");
  }
  return std::nullopt;
}

}  // namespace

std::optional<WorkerPodProfile> parseWorkerPodProfile(std::string_view name) {
  if (name == "ipu-baseline") return WorkerPodProfile::kIpuBaseline;
  if (name == "privileged") return WorkerPodProfile::kPrivileged;
  return std::nullopt;
}

std::string_view profileName(WorkerPodProfile profile) {
  return profile == WorkerPodProfile::kPrivileged ? "privileged" : "ipu-baseline";
}

std::optional<ProfileViolation> profileViolation(const Json& podTemplate, WorkerPodProfile profile,
                                                 const std::string& path) {
  if (profile == WorkerPodProfile::kPrivileged) return std::nullopt;
  if (auto found = annotationViolation(at(podTemplate, "metadata"), path + ".metadata")) return found;
  return podSpecViolation(at(podTemplate, "spec"), path + ".spec");
}

}  // namespace ipu::api
