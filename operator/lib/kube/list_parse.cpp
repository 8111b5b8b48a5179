#include "kube/list_parse.h"

#include <algorithm>
#include <array>

namespace ipu::kube {

Json parseListSkipping(const std::string& body, const std::vector<std::string>& itemFields) {
  // The parser's depths for a list: its members at 1 ("items"), an item's members at 3, their members at 4.
  constexpr int kListMember = 1, kItemMember = 3, kItemMemberMember = 4;
  std::array<std::string, kItemMemberMember + 1> keys;  // the last key read at each depth up to 4
  const auto skipped = [&itemFields](const std::string& path) {
    return std::find(itemFields.begin(), itemFields.end(), path) != itemFields.end();
  };
  const Json::parser_callback_t callback = [&](int depth, Json::parse_event_t event, Json& parsed) {
    if (event != Json::parse_event_t::key || depth > kItemMemberMember) return true;
    keys[static_cast<std::size_t>(depth)] = parsed.get<std::string>();
    if (depth < kItemMember || keys[kListMember] != "items") return true;
    // Returning false leaves out the key and the whole value after it.
    if (depth == kItemMember) return !skipped(keys[kItemMember]);
    return !skipped(keys[kItemMember] + "." + keys[kItemMemberMember]);
  };
  return Json::parse(body, callback, /*allow_exceptions=*/false);
}

}  // namespace ipu::kube
