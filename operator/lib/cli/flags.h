#pragma once

#include <charconv>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "common/result.h"

namespace ipu::cli {

// The command-line flags of the project's binaries (ipu-operator, vipu-sim, vipu-ctl), parsed by CLI11.
//
// What this adds to a CLI::App is the project's conventions, the same in every binary: --name=value or
// --name value (an empty value too: --name=); booleans as --name, --name=true|false; the last occurrence of
// a flag wins, a repeatable flag appends; values are checked as they are parsed (numbers, ranges) with
// messages that name the flag ("--ilds: 0 is outside [1, 64]"); an unknown flag is an error, so a typo never
// runs with a silent default; --help lists every flag with its default (and its environment variable, where
// the binary reads one). Settings from elsewhere (a config file, the environment) go in with preset(): the
// command line then overrides them.
class Flags {
 public:
  // `synopsis` follows "Usage:" in --help ("vipu-ctl create ID --size N [flags]"); `description`, what the
  // program does, comes before it.
  explicit Flags(std::string synopsis, std::string description = "");

  // Each flag's help then names its environment variable, variableFor(flag name).
  void showEnvironment(std::function<std::string(const std::string& flag)> variableFor);

  void addString(const std::string& name, std::string* target, std::string help,
                 std::string valueName = "TEXT");
  void addBool(const std::string& name, bool* target, std::string help);
  // Repeatable: each occurrence appends.
  void addList(const std::string& name, std::vector<std::string>* target, std::string help,
               std::string valueName);
  void addDouble(const std::string& name, double* target, std::string help, double min, double max);

  template <typename Integer>
  void addInteger(const std::string& name, Integer* target, std::string help, Integer min, Integer max,
                  std::string valueName = "N") {
    CLI::Option* option = app_.add_option("--" + name, *target);
    describe(name, option, std::move(help), std::to_string(*target), std::move(valueName),
             integerCheck<Integer>(min, max));
  }
  // Unset unless given; `defaultText` says what applies then.
  template <typename Integer>
  void addOptionalInteger(const std::string& name, std::optional<Integer>* target, std::string help,
                          Integer min, Integer max, std::string defaultText, std::string valueName = "N") {
    CLI::Option* option =
        app_.add_option_function<Integer>("--" + name, [target](const Integer& value) { *target = value; });
    describe(name, option, std::move(help), std::move(defaultText), std::move(valueName),
             integerCheck<Integer>(min, max));
  }

  // Sets a flag before the command line is parsed, which overrides it (a repeatable flag gets both): for
  // config files and the environment. The value is checked now; InvalidArgument for an unknown flag or a bad
  // value, the message naming the flag.
  Status preset(std::string_view name, std::string_view value);

  // Returns the positional arguments. With stopAtPositional, parsing ends at the first positional argument
  // and it and everything after it are returned as they are (for subcommands). InvalidArgument naming the
  // flag for an unknown flag, a flag without its value and a bad value.
  Result<std::vector<std::string>> parse(const std::vector<std::string>& args, bool stopAtPositional = false);

  bool helpRequested() const { return helpRequested_; }
  bool has(std::string_view name) const;
  // Every flag's name (without dashes), in the order added.
  std::vector<std::string> names() const;
  std::string usage() const;

 private:
  // Returns what is wrong with `text`, or nothing; may rewrite it into the form CLI11 then converts.
  using Check = std::function<std::string(std::string& text)>;

  template <typename Integer>
  static Check integerCheck(Integer min, Integer max) {
    return [min, max](std::string& text) -> std::string {
      Integer value{};
      const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (text.empty() || error == std::errc::invalid_argument || end != text.data() + text.size()) {
        return "'" + text + "' is not a whole number";
      }
      if (error == std::errc::result_out_of_range || value < min || value > max) {
        return text + " is outside [" + std::to_string(min) + ", " + std::to_string(max) + "]";
      }
      text = std::to_string(value);  // decimal only: CLI11 alone would read 010 as octal
      return {};
    };
  }

  // Help text with the default and the environment variable; the value's name; the value check, which runs
  // before CLI11 converts the value.
  void describe(const std::string& name, CLI::Option* option, std::string help,
                const std::string& defaultText, std::string valueName, Check check, bool isBool = false);

  struct Flag {
    std::string name;
    bool isBool = false;
    Check check;
  };
  const Flag* find(std::string_view name) const;

  CLI::App app_;
  std::vector<Flag> flags_;
  std::function<std::string(const std::string&)> environmentVariableFor_;
  std::vector<std::string> presets_;  // arguments that come before the command line's
  bool helpRequested_ = false;
};

}  // namespace ipu::cli
