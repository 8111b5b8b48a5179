#pragma once

// Reading the runtime's numeric settings (environment variables, flags) with errors that name the setting.
#include <stdexcept>
#include <string>

namespace ipu::runtime::settings {

// A setting that is not what the runtime can use; the message names it and its value.
struct SettingError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// `text` as a whole number in [min, max]; SettingError naming `name` (a variable or flag) otherwise.
int wholeNumberIn(const std::string& name, const std::string& text, int min, int max);

}  // namespace ipu::runtime::settings
