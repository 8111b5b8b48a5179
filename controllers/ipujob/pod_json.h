#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

// Merging into the named lists of a pod (env, volumes, mounts, containers): the one way the worker pod
// builder and the runtime injection find and set entries, never listing a name twice.
namespace ipu::controllers {

using Json = nlohmann::json;

// `object[key]` as an array (made one when it is missing or not an array).
Json& arrayMember(Json& object, const std::string& key);

// The list's entry named `name`, or nullptr (also when `list` is not an array).
Json* findNamed(Json& list, const std::string& name);

// Replaces the list's entry of the same name in place, or appends `entry`.
void putNamed(Json& list, Json entry);

// Appends `entry` unless the list has an entry of that name already (the user's wins).
void addNamed(Json& list, Json entry);

// Sets the variable in an env list whatever the user wrote (replacing their entry in place).
void setEnv(Json& env, const std::string& name, const std::string& value);

// Adds the variable to an env list unless the user set it: their value is a deliberate override.
void defaultEnv(Json& env, const std::string& name, const std::string& value);

// The strings of a list such as a container's command or args (empty when it is not a list; other items
// skipped).
std::vector<std::string> stringsOf(const Json& list);

}  // namespace ipu::controllers
