#include "api/ipupod.h"

#include <algorithm>
#include <charconv>

#include "common/json_access.h"

namespace ipu::api {
namespace {

int intMember(const Json& object, const char* name) {
  const Json& value = member(object, name);
  return value.is_number_integer() ? value.get<int>() : 0;
}

Json toJson(const IpuPodHolder& holder) {
  Json json{{"kind", holder.kind},
            {"ipus", holder.ipus},
            {"ipuCount", holder.ipuCount},
            {"partitions", holder.partitions}};
  if (!holder.jobUid.empty()) json["jobUID"] = holder.jobUid;
  if (!holder.since.empty()) json["since"] = holder.since;
  return json;
}

IpuPodHolder parseHolder(const Json& json) {
  return {stringMember(json, "kind"),  stringMember(json, "jobUID"),  stringMember(json, "ipus"),
          intMember(json, "ipuCount"), intMember(json, "partitions"), stringMember(json, "since")};
}

Result<std::uint32_t> parseId(std::string_view text) {
  std::uint32_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) {
    return makeError(ErrorCode::kInvalidArgument, "not an IPU id: '" + std::string(text) + "'");
  }
  return value;
}

}  // namespace

Json toJson(const IpuPodStatus& status) {
  Json json{{"controller", status.controller},
            {"cluster", status.cluster},
            {"ilds", status.ilds},
            {"ildSize", status.ildSize},
            {"ipusPerMachine", status.ipusPerMachine},
            {"totalIPUs", status.totalIpus},
            {"freeIPUs", status.freeIpus},
            {"largestFreeBlock", status.largestFreeBlock},
            {"holders", Json::array()}};
  if (!status.readError.empty()) json["readError"] = status.readError;
  for (const IpuPodHolder& holder : status.holders) json["holders"].push_back(toJson(holder));
  return json;
}

IpuPodStatus parseIpuPodStatus(const Json& status) {
  IpuPodStatus parsed{stringMember(status, "controller"),  stringMember(status, "cluster"),
                      intMember(status, "ilds"),           intMember(status, "ildSize"),
                      intMember(status, "ipusPerMachine"), intMember(status, "totalIPUs"),
                      intMember(status, "freeIPUs"),       intMember(status, "largestFreeBlock"),
                      stringMember(status, "readError"),   {}};
  const Json& holders = member(status, "holders");
  if (holders.is_array()) {
    for (const Json& holder : holders) parsed.holders.push_back(parseHolder(holder));
  }
  return parsed;
}

std::string formatIpuRanges(std::vector<std::uint32_t> ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  std::string text;
  for (std::size_t i = 0; i < ids.size();) {
    std::size_t last = i;
    while (last + 1 < ids.size() && ids[last + 1] == ids[last] + 1) ++last;
    if (!text.empty()) text += ',';
    text += std::to_string(ids[i]);
    if (last > i) text += '-' + std::to_string(ids[last]);
    i = last + 1;
  }
  return text;
}

Result<std::vector<std::uint32_t>> parseIpuRanges(std::string_view text, std::uint32_t limit) {
  std::vector<std::uint32_t> ids;
  bool more = !text.empty();
  while (more) {
    const std::size_t comma = text.find(',');
    const std::string_view range = text.substr(0, comma);
    more = comma != std::string_view::npos;  // "1," ends in an empty range, which parseId refuses
    text = more ? text.substr(comma + 1) : std::string_view();
    const std::size_t dash = range.find('-');
    auto first = parseId(range.substr(0, dash));
    if (!first) return first.error();
    auto last = dash == std::string_view::npos ? first : parseId(range.substr(dash + 1));
    if (!last) return last.error();
    if (*last < *first || *last >= limit) {
      return makeError(ErrorCode::kInvalidArgument, "IPU range '" + std::string(range) +
                                                        "' is not within the " + std::to_string(limit) +
                                                        " IPUs of the POD");
    }
    for (std::uint32_t id = *first; id <= *last; ++id) ids.push_back(id);
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

}  // namespace ipu::api
