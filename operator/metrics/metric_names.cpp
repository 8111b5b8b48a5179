#include "metrics/metric_names.h"

namespace ipu::metrics {
namespace {

// Not <cctype>: its answers depend on the C locale, the grammar's do not.
bool isAsciiLetter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool isAsciiDigit(char c) {
  return c >= '0' && c <= '9';
}

}  // namespace

bool isValidMetricName(std::string_view name) {
  if (name.empty()) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool allowed = isAsciiLetter(c) || c == '_' || c == ':' || (i > 0 && isAsciiDigit(c));
    if (!allowed) return false;
  }
  return true;
}

bool isValidLabelName(std::string_view name) {
  if (name.empty() || name.starts_with("__")) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool allowed = isAsciiLetter(c) || c == '_' || (i > 0 && isAsciiDigit(c));
    if (!allowed) return false;
  }
  return true;
}

}  // namespace ipu::metrics
