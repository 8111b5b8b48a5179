#include "api/pod_template.h"

#include <string_view>
#include <vector>

namespace ipu::api {
namespace {

using Json = nlohmann::json;

// The JSON type a field must have, and for objects and lists what their members must be. Only the fields
// named are checked; others are the API server's to judge.
struct Shape {
  enum class Kind { kString, kBoolean, kInteger, kObject, kStringMap, kList };
  struct Field {
    std::string_view name;
    const Shape* shape;
    bool required = false;
  };
  Kind kind;
  std::vector<Field> fields;    // kObject
  const Shape* item = nullptr;  // kList
};

const Shape kString{Shape::Kind::kString, {}};
const Shape kBoolean{Shape::Kind::kBoolean, {}};
const Shape kInteger{Shape::Kind::kInteger, {}};
const Shape kStringMap{Shape::Kind::kStringMap, {}};
const Shape kAnyObject{Shape::Kind::kObject, {}};
const Shape kStrings{Shape::Kind::kList, {}, &kString};
const Shape kObjects{Shape::Kind::kList, {}, &kAnyObject};

const Shape kSeccompProfile{Shape::Kind::kObject, {{"type", &kString}, {"localhostProfile", &kString}}};
const Shape kAppArmorProfile{Shape::Kind::kObject, {{"type", &kString}, {"localhostProfile", &kString}}};
const Shape kSeLinuxOptions{
    Shape::Kind::kObject, {{"user", &kString}, {"role", &kString}, {"type", &kString}, {"level", &kString}}};
const Shape kWindowsOptions{Shape::Kind::kObject, {{"hostProcess", &kBoolean}}};
const Shape kCapabilities{Shape::Kind::kObject, {{"add", &kStrings}, {"drop", &kStrings}}};
const Shape kContainerSecurity{Shape::Kind::kObject,
                               {{"privileged", &kBoolean},
                                {"allowPrivilegeEscalation", &kBoolean},
                                {"capabilities", &kCapabilities},
                                {"procMount", &kString},
                                {"runAsUser", &kInteger},
                                {"runAsGroup", &kInteger},
                                {"runAsNonRoot", &kBoolean},
                                {"readOnlyRootFilesystem", &kBoolean},
                                {"seccompProfile", &kSeccompProfile},
                                {"appArmorProfile", &kAppArmorProfile},
                                {"seLinuxOptions", &kSeLinuxOptions},
                                {"windowsOptions", &kWindowsOptions}}};
const Shape kEnvVar{Shape::Kind::kObject,
                    {{"name", &kString, true}, {"value", &kString}, {"valueFrom", &kAnyObject}}};
const Shape kEnv{Shape::Kind::kList, {}, &kEnvVar};
const Shape kVolumeMount{Shape::Kind::kObject,
                         {{"name", &kString, true}, {"mountPath", &kString, true}, {"readOnly", &kBoolean}}};
const Shape kVolumeMounts{Shape::Kind::kList, {}, &kVolumeMount};
const Shape kPort{
    Shape::Kind::kObject,
    {{"containerPort", &kInteger}, {"hostPort", &kInteger}, {"name", &kString}, {"protocol", &kString}}};
const Shape kPorts{Shape::Kind::kList, {}, &kPort};
const Shape kContainer{Shape::Kind::kObject,
                       {{"name", &kString, true},
                        {"image", &kString, true},
                        {"command", &kStrings},
                        {"args", &kStrings},
                        {"workingDir", &kString},
                        {"env", &kEnv},
                        {"envFrom", &kObjects},
                        {"volumeMounts", &kVolumeMounts},
                        {"ports", &kPorts},
                        {"resources", &kAnyObject},
                        {"securityContext", &kContainerSecurity},
                        {"terminationMessagePath", &kString},
                        {"imagePullPolicy", &kString}}};
const Shape kContainers{Shape::Kind::kList, {}, &kContainer};
const Shape kHostPath{Shape::Kind::kObject, {{"path", &kString, true}, {"type", &kString}}};
const Shape kEmptyDir{Shape::Kind::kObject, {{"medium", &kString}}};
const Shape kVolume{Shape::Kind::kObject,
                    {{"name", &kString, true}, {"hostPath", &kHostPath}, {"emptyDir", &kEmptyDir}}};
const Shape kVolumes{Shape::Kind::kList, {}, &kVolume};
const Shape kSysctl{Shape::Kind::kObject, {{"name", &kString, true}, {"value", &kString, true}}};
const Shape kSysctls{Shape::Kind::kList, {}, &kSysctl};
const Shape kPodSecurity{Shape::Kind::kObject,
                         {{"runAsUser", &kInteger},
                          {"runAsGroup", &kInteger},
                          {"runAsNonRoot", &kBoolean},
                          {"fsGroup", &kInteger},
                          {"sysctls", &kSysctls},
                          {"seccompProfile", &kSeccompProfile},
                          {"appArmorProfile", &kAppArmorProfile},
                          {"seLinuxOptions", &kSeLinuxOptions},
                          {"windowsOptions", &kWindowsOptions}}};
const Shape kPodSpec{Shape::Kind::kObject,
                     {{"containers", &kContainers, true},
                      {"initContainers", &kContainers},
                      {"volumes", &kVolumes},
                      {"hostIPC", &kBoolean},
                      {"hostNetwork", &kBoolean},
                      {"hostPID", &kBoolean},
                      {"hostUsers", &kBoolean},
                      {"nodeSelector", &kStringMap},
                      {"securityContext", &kPodSecurity},
                      {"restartPolicy", &kString},
                      {"hostname", &kString},
                      {"subdomain", &kString},
                      {"serviceAccountName", &kString},
                      {"tolerations", &kObjects},
                      {"affinity", &kAnyObject}}};
const Shape kTemplateMetadata{Shape::Kind::kObject, {{"labels", &kStringMap}, {"annotations", &kStringMap}}};
const Shape kPodTemplate{Shape::Kind::kObject, {{"metadata", &kTemplateMetadata}, {"spec", &kPodSpec, true}}};

std::string_view describe(Shape::Kind kind) {
  switch (kind) {
    case Shape::Kind::kString:
      return "a string";
    case Shape::Kind::kBoolean:
      return "true or false";
    case Shape::Kind::kInteger:
      return "a whole number";
    case Shape::Kind::kObject:
      return "an object";
    case Shape::Kind::kStringMap:
      return "a map of strings to strings";
    case Shape::Kind::kList:
      return "a list";
  }
  return "";
}

Error mistyped(const std::string& path, const std::string& message) {
  Error error = makeError(ErrorCode::kInvalidArgument, path + ": " + message);
  error.causes.push_back({path, message, "FieldValueInvalid"});
  return error;
}

Status check(const Json& value, const Shape& shape, const std::string& path) {
  const auto wrongType = [&] { return mistyped(path, "must be " + std::string(describe(shape.kind))); };
  switch (shape.kind) {
    case Shape::Kind::kString:
      return value.is_string() ? Status() : wrongType();
    case Shape::Kind::kBoolean:
      return value.is_boolean() ? Status() : wrongType();
    case Shape::Kind::kInteger:
      return value.is_number_integer() ? Status() : wrongType();
    case Shape::Kind::kStringMap:
      if (!value.is_object()) return wrongType();
      for (const auto& [key, entry] : value.items()) {
        if (!entry.is_string()) return mistyped(path + "." + key, "must be a string");
      }
      return {};
    case Shape::Kind::kList:
      if (!value.is_array()) return wrongType();
      for (std::size_t index = 0; index < value.size(); ++index) {
        if (Status item = check(value[index], *shape.item, path + "[" + std::to_string(index) + "]"); !item)
          return item;
      }
      return {};
    case Shape::Kind::kObject:
      if (!value.is_object()) return wrongType();
      for (const Shape::Field& field : shape.fields) {
        const std::string fieldPath = path + "." + std::string(field.name);
        const auto found = value.find(std::string(field.name));
        // null is how a YAML key with no value arrives: as good as absent, as the API server takes it.
        if (found == value.end() || found->is_null()) {
          if (field.required) return mistyped(fieldPath, "is required");
          continue;
        }
        if (Status member = check(*found, *field.shape, fieldPath); !member) return member;
      }
      return {};
  }
  return {};
}

}  // namespace

Status checkPodTemplate(const Json& podTemplate, const std::string& path) {
  return check(podTemplate, kPodTemplate, path);
}

}  // namespace ipu::api
