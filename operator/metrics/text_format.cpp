#include "metrics/text_format.h"

#include <array>
#include <cassert>
#include <charconv>
#include <cmath>

namespace ipu::metrics {
namespace {

// Up to 2^53 every whole number is exactly representable, so printing it in fixed notation is exact.
constexpr double kLargestExactInteger = 9007199254740992.0;

std::string escape(std::string_view text, bool escapeQuotes) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '"' && escapeQuotes) {
      out += "\\\"";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string formatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  if (value == 0) return "0";  // also -0, which would otherwise print as "-0"
  // Whole numbers are the common case (counts) and the shortest form would print a million as "1e+06".
  const bool wholeNumber = std::trunc(value) == value && std::fabs(value) <= kLargestExactInteger;
  // "general" is printf's %g with the fewest digits that round-trip, the rule Go's client uses too: small
  // fractions stay fixed ("0.0005"), very small or large ones get an exponent ("1e-05", "1e+300").
  const auto format = wholeNumber ? std::chars_format::fixed : std::chars_format::general;
  std::array<char, 64> buffer{};  // enough for any double in either form without precision
  const auto [end, error] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value, format);
  assert(error == std::errc());
  return std::string(buffer.data(), end);
}

std::string escapeHelp(std::string_view help) {
  return escape(help, /*escapeQuotes=*/false);
}

std::string escapeLabelValue(std::string_view value) {
  return escape(value, /*escapeQuotes=*/true);
}

std::string formatLabels(std::span<const std::string> names, std::span<const std::string> values) {
  assert(names.size() == values.size());
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += ',';
    out += names[i];
    out += "=\"";
    out += escapeLabelValue(values[i]);
    out += '"';
  }
  return out;
}

void appendFamilyHeader(std::string& out, std::string_view name, std::string_view help,
                        std::string_view type) {
  out += "# HELP ";
  out += name;
  out += ' ';
  out += escapeHelp(help);
  out += "\n# TYPE ";
  out += name;
  out += ' ';
  out += type;
  out += '\n';
}

void appendSample(std::string& out, std::string_view name, std::string_view labels, double value) {
  out += name;
  if (!labels.empty()) {
    out += '{';
    out += labels;
    out += '}';
  }
  out += ' ';
  out += formatValue(value);
  out += '\n';
}

}  // namespace ipu::metrics
