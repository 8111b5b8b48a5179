#include "ipujob/pod_json.h"

namespace ipu::controllers {

Json& arrayMember(Json& object, const std::string& key) {
  Json& member = object[key];
  if (!member.is_array()) member = Json::array();
  return member;
}

Json* findNamed(Json& list, const std::string& name) {
  if (!list.is_array()) return nullptr;
  for (auto& entry : list) {
    if (entry.is_object() && entry.value("name", "") == name) return &entry;
  }
  return nullptr;
}

void putNamed(Json& list, Json entry) {
  if (Json* existing = findNamed(list, entry.value("name", ""))) {
    *existing = std::move(entry);
  } else {
    list.push_back(std::move(entry));
  }
}

void addNamed(Json& list, Json entry) {
  if (findNamed(list, entry.value("name", "")) == nullptr) list.push_back(std::move(entry));
}

void setEnv(Json& env, const std::string& name, const std::string& value) {
  putNamed(env, {{"name", name}, {"value", value}});
}

void defaultEnv(Json& env, const std::string& name, const std::string& value) {
  addNamed(env, {{"name", name}, {"value", value}});
}

std::vector<std::string> stringsOf(const Json& list) {
  std::vector<std::string> out;
  if (!list.is_array()) return out;
  for (const auto& item : list) {
    if (item.is_string()) out.push_back(item.get<std::string>());
  }
  return out;
}

}  // namespace ipu::controllers
