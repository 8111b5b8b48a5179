#include "kube/quantity.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <string>
#include <utility>

namespace ipu::kube {
namespace {

bool isDigit(char c) {
  return std::isdigit(static_cast<unsigned char>(c)) != 0;
}

bool isAlnum(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0;
}

// The digits at `at`, at least one; returns past them, or npos when there are none.
std::size_t digits(std::string_view text, std::size_t at) {
  const std::size_t start = at;
  while (at < text.size() && isDigit(text[at])) ++at;
  return at == start ? std::string_view::npos : at;
}

bool isSuffix(std::string_view suffix) {
  static constexpr std::array<std::string_view, 16> kSuffixes = {
      "", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "n", "u", "m", "k", "M", "G", "T", "P", "E"};
  for (std::string_view known : kSuffixes) {
    if (suffix == known) return true;
  }
  // A decimal exponent: e or E, an optional sign, digits.
  if (suffix.size() < 2 || (suffix[0] != 'e' && suffix[0] != 'E')) return false;
  const std::size_t start = suffix[1] == '+' || suffix[1] == '-' ? 2 : 1;
  return digits(suffix, start) == suffix.size();
}

// Where the number of a quantity ends (its suffix begins), or npos when it has none: an optional sign,
// digits with at most one decimal point, at least one digit before the suffix ("." and "5." are refused,
// to be safe).
std::size_t numberEnd(std::string_view text) {
  std::size_t at = !text.empty() && (text[0] == '+' || text[0] == '-') ? 1 : 0;
  const std::size_t whole = digits(text, at);
  if (whole != std::string_view::npos) at = whole;
  if (at < text.size() && text[at] == '.') return digits(text, at + 1);
  return whole;
}

// The factor a valid suffix stands for.
long double suffixFactor(std::string_view suffix) {
  static constexpr std::array<std::pair<std::string_view, long double>, 15> kFactors = {{{"Ki", 0x1p10L},
                                                                                         {"Mi", 0x1p20L},
                                                                                         {"Gi", 0x1p30L},
                                                                                         {"Ti", 0x1p40L},
                                                                                         {"Pi", 0x1p50L},
                                                                                         {"Ei", 0x1p60L},
                                                                                         {"n", 1e-9L},
                                                                                         {"u", 1e-6L},
                                                                                         {"m", 1e-3L},
                                                                                         {"k", 1e3L},
                                                                                         {"M", 1e6L},
                                                                                         {"G", 1e9L},
                                                                                         {"T", 1e12L},
                                                                                         {"P", 1e15L},
                                                                                         {"E", 1e18L}}};
  if (suffix.empty()) return 1;
  for (const auto& [known, factor] : kFactors) {
    if (suffix == known) return factor;
  }
  return std::pow(10.0L, std::stold(std::string(suffix.substr(1))));  // a decimal exponent
}

}  // namespace

Status validateQuantity(std::string_view text) {
  const std::size_t end = numberEnd(text);
  if (end == std::string_view::npos || !isSuffix(text.substr(end))) {
    return makeError(ErrorCode::kInvalidArgument,
                     "\"" + std::string(text) +
                         "\" is not a quantity: a number with a suffix such as Ki, Mi, Gi (powers of 1024) "
                         "or k, M, G (powers of 1000), like 10Gi or 512M");
  }
  return {};
}

std::optional<long double> quantityValue(std::string_view text) {
  if (!validateQuantity(text)) return std::nullopt;
  const std::size_t end = numberEnd(text);
  return std::stold(std::string(text.substr(0, end))) * suffixFactor(text.substr(end));
}

bool sameQuantity(std::string_view a, std::string_view b) {
  if (a == b) return true;
  const auto x = quantityValue(a);
  const auto y = quantityValue(b);
  if (!x || !y) return false;
  return std::fabs(*x - *y) <= 1e-12L * std::max(std::fabs(*x), std::fabs(*y));
}

bool isLabelValue(std::string_view text) {
  if (text.empty()) return true;
  if (text.size() > 63 || !isAlnum(text.front()) || !isAlnum(text.back())) return false;
  for (char c : text) {
    if (!isAlnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

}  // namespace ipu::kube
