#include "kube/quantity.h"

#include <array>
#include <cctype>
#include <string>

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

}  // namespace

Status validateQuantity(std::string_view text) {
  const auto invalid = [&] {
    return makeError(ErrorCode::kInvalidArgument,
                     "\"" + std::string(text) +
                         "\" is not a quantity: a number with a suffix such as Ki, Mi, Gi (powers of 1024) "
                         "or k, M, G (powers of 1000), like 10Gi or 512M");
  };
  std::size_t at = !text.empty() && (text[0] == '+' || text[0] == '-') ? 1 : 0;
  const std::size_t whole = digits(text, at);
  if (whole != std::string_view::npos) at = whole;
  if (at < text.size() && text[at] == '.') {
    const std::size_t fraction = digits(text, at + 1);
    if (fraction == std::string_view::npos) return invalid();  // "." or "5.": refused, to be safe
    at = fraction;
  } else if (whole == std::string_view::npos) {
    return invalid();
  }
  if (!isSuffix(text.substr(at))) return invalid();
  return {};
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
