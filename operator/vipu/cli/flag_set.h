#pragma once

#include <charconv>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace ipu::vipu::cli {

// Command-line flags of the vipu tools: --name=value or --name value; booleans as --name, --name=true|false.
// Each flag has its help text and shows its default in usage(). Values are checked as they are parsed
// (numbers, ranges), and an unknown flag is an error, so a typo never runs with a silent default.
class FlagSet {
 public:
  explicit FlagSet(std::string synopsis) : synopsis_(std::move(synopsis)) {}

  void addString(std::string name, std::string* target, std::string help, std::string valueName = "TEXT");
  void addBool(std::string name, bool* target, std::string help);
  // Repeatable: each occurrence appends.
  void addList(std::string name, std::vector<std::string>* target, std::string help, std::string valueName);
  void addDouble(std::string name, double* target, std::string help, double min, double max);

  template <typename Integer>
  void addInteger(std::string name, Integer* target, std::string help, Integer min, Integer max,
                  std::string valueName = "N") {
    add(Flag{std::move(name), std::move(valueName), std::move(help), std::to_string(*target), false,
             [target, min, max](std::string_view flag, std::string_view text) -> Status {
               Result<Integer> value = parseInteger<Integer>(flag, text, min, max);
               if (!value) return value.error();
               *target = *value;
               return {};
             }});
  }
  template <typename Integer>
  void addOptionalInteger(std::string name, std::optional<Integer>* target, std::string help, Integer min,
                          Integer max, std::string defaultText, std::string valueName = "N") {
    add(Flag{std::move(name), std::move(valueName), std::move(help), std::move(defaultText), false,
             [target, min, max](std::string_view flag, std::string_view text) -> Status {
               Result<Integer> value = parseInteger<Integer>(flag, text, min, max);
               if (!value) return value.error();
               *target = *value;
               return {};
             }});
  }

  // Sets a flag as if given on the command line (config files use this).
  Status set(std::string_view name, std::string_view value);
  // Returns the positional arguments. With stopAtPositional, parsing ends at the first positional argument
  // and it and everything after it are returned as they are (for subcommands).
  Result<std::vector<std::string>> parse(const std::vector<std::string>& args, bool stopAtPositional = false);

  bool helpRequested() const { return helpRequested_; }
  bool has(std::string_view name) const { return find(name) != nullptr; }
  // Every flag's name, in the order added.
  std::vector<std::string> names() const;
  std::string usage() const;

 private:
  struct Flag {
    std::string name;
    std::string valueName;
    std::string help;
    std::string defaultText;
    bool isBool = false;
    std::function<Status(std::string_view flag, std::string_view value)> apply;
  };

  template <typename Integer>
  static Result<Integer> parseInteger(std::string_view flag, std::string_view text, Integer min,
                                      Integer max) {
    Integer value{};
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || error == std::errc::invalid_argument || end != text.data() + text.size()) {
      return makeError(ErrorCode::kInvalidArgument,
                       "--" + std::string(flag) + ": '" + std::string(text) + "' is not a whole number");
    }
    if (error == std::errc::result_out_of_range || value < min || value > max) {
      return makeError(ErrorCode::kInvalidArgument, "--" + std::string(flag) + ": " + std::string(text) +
                                                        " is outside [" + std::to_string(min) + ", " +
                                                        std::to_string(max) + "]");
    }
    return value;
  }

  void add(Flag flag) { flags_.push_back(std::move(flag)); }
  const Flag* find(std::string_view name) const;

  std::string synopsis_;
  std::vector<Flag> flags_;
  bool helpRequested_ = false;
};

}  // namespace ipu::vipu::cli
