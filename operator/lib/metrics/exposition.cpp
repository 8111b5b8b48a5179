#include "metrics/exposition.h"

#include <algorithm>
#include <stdexcept>

#include <prometheus/text_serializer.h>

namespace ipu::metrics {
namespace {

std::string escapedHelp(const std::string& help) {
  std::string out;
  out.reserve(help.size());
  for (const char c : help) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string Exposition::render() const {
  std::vector<prometheus::MetricFamily> families;
  for (const auto* collectable : collectables_) {
    for (auto& family : collectable->Collect()) {
      if (family.metric.empty()) continue;
      family.help = escapedHelp(family.help);
      std::sort(family.metric.begin(), family.metric.end(),
                [](const auto& a, const auto& b) { return a.label < b.label; });
      families.push_back(std::move(family));
    }
  }
  std::sort(families.begin(), families.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  const auto repeated = std::adjacent_find(families.begin(), families.end(),
                                           [](const auto& a, const auto& b) { return a.name == b.name; });
  if (repeated != families.end()) {
    throw std::invalid_argument("metric \"" + repeated->name + "\" is reported twice");
  }
  return prometheus::TextSerializer().Serialize(families);
}

}  // namespace ipu::metrics
