#include "settings/whole_number.h"

#include <charconv>

namespace ipu::runtime::settings {

int wholeNumberIn(const std::string& name, const std::string& text, int min, int max) {
  int value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || ptr != end)
    throw SettingError(name + "=\"" + text + "\" is not a whole number");
  if (value < min || value > max)
    throw SettingError(name + "=" + text + " is out of range " + std::to_string(min) + "-" +
                       std::to_string(max));
  return value;
}

}  // namespace ipu::runtime::settings
