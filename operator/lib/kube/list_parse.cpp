#include "kube/list_parse.h"

#include <algorithm>
#include <array>

namespace ipu::kube {

namespace {

// A parser callback leaving out `fields` of the objects under the top-level member `container`, whose members
// the parser meets at depth `memberDepth` (a list's items, inside an array, at 3; a watch event's object at
// 2). A field is a member of such an object ("spec") or a member of one of its members
// ("metadata.managedFields").
Json::parser_callback_t skipping(const char* container, int memberDepth,
                                 const std::vector<std::string>& fields, std::array<std::string, 5>& keys) {
  return [container, memberDepth, &fields, &keys](int depth, Json::parse_event_t event, Json& parsed) {
    constexpr int kTopMember = 1;
    if (event != Json::parse_event_t::key || depth > memberDepth + 1) return true;
    keys[static_cast<std::size_t>(depth)] = parsed.get<std::string>();
    if (depth < memberDepth || keys[kTopMember] != container) return true;
    const auto skipped = [&fields](const std::string& path) {
      return std::find(fields.begin(), fields.end(), path) != fields.end();
    };
    // Returning false leaves out the key and the whole value after it.
    const std::string& member = keys[static_cast<std::size_t>(memberDepth)];
    if (depth == memberDepth) return !skipped(member);
    return !skipped(member + "." + keys[static_cast<std::size_t>(depth)]);
  };
}

}  // namespace

Json parseListSkipping(const std::string& body, const std::vector<std::string>& itemFields) {
  std::array<std::string, 5> keys;  // the last key read at each depth up to 4
  return Json::parse(body, skipping("items", 3, itemFields, keys), /*allow_exceptions=*/false);
}

Json parseWatchEventSkipping(std::string_view line, const std::vector<std::string>& objectFields) {
  std::array<std::string, 5> keys;
  return Json::parse(line, skipping("object", 2, objectFields, keys), /*allow_exceptions=*/false);
}

}  // namespace ipu::kube
