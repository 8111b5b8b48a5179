#include "cli/flags.h"

#include <algorithm>
#include <cmath>

namespace ipu::cli {
namespace {

// CLI11 reports a flag given without its value as "--ilds: 1 required TEXT missing".
bool isMissingValue(const CLI::ArgumentMismatch& error, std::string& flag) {
  const std::string message = error.what();
  const auto colon = message.find(": ");
  if (colon == std::string::npos || message.find(" missing", colon) == std::string::npos) return false;
  flag = message.substr(0, colon);
  return true;
}

// CLI11's help, with the program's own synopsis after "Usage:" (CLI11 would write "NAME [OPTIONS]").
class SynopsisFormatter final : public CLI::Formatter {
 public:
  std::string make_usage(const CLI::App* app, std::string) const override {
    return get_label("Usage") + ": " + app->get_name() + "\n";
  }
};

}  // namespace

Flags::Flags(std::string synopsis, std::string description)
    : app_(description.empty() ? "" : description + "\n", std::move(synopsis)) {
  auto formatter = std::make_shared<SynopsisFormatter>();
  formatter->column_width(42);
  app_.formatter(formatter);
  app_.option_defaults()->group("Flags");  // the heading over them in --help
  app_.set_help_flag("-h,--help", "show this help and exit");
  app_.allow_extras();  // unknown flags and positionals are told apart (and refused) in parse()
}

void Flags::showEnvironment(std::function<std::string(const std::string& flag)> variableFor) {
  environmentVariableFor_ = std::move(variableFor);
}

void Flags::describe(const std::string& name, CLI::Option* option, std::string help,
                     const std::string& defaultText, std::string valueName, Check check, bool isBool) {
  if (!defaultText.empty()) help += " (default " + defaultText + ")";
  if (environmentVariableFor_) help += " [env " + environmentVariableFor_(name) + "]";
  option->description(std::move(help));
  option->option_text(std::move(valueName));
  if (!isBool && option->get_expected_max() <= 1) {
    option->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  }
  if (check) option->transform(CLI::Validator(check, "", ""));
  flags_.push_back(Flag{name, isBool, std::move(check)});
}

void Flags::addString(const std::string& name, std::string* target, std::string help, std::string valueName) {
  CLI::Option* option = app_.add_option("--" + name, *target);
  describe(name, option, std::move(help), target->empty() ? "" : "\"" + *target + "\"", std::move(valueName),
           nullptr);
}

void Flags::addBool(const std::string& name, bool* target, std::string help) {
  CLI::Option* option = app_.add_flag("--" + name, *target);
  describe(
      name, option, std::move(help), *target ? "true" : "false", "",
      [](std::string& value) -> std::string {
        if (value == "true" || value == "1" || value == "false" || value == "0") return {};
        return "'" + value + "' is not true or false";
      },
      /*isBool=*/true);
}

void Flags::addList(const std::string& name, std::vector<std::string>* target, std::string help,
                    std::string valueName) {
  CLI::Option* option = app_.add_option("--" + name, *target);
  option->allow_extra_args(false);  // one value per occurrence: --allocation a=0 --allocation b=1
  describe(name, option, std::move(help), "", std::move(valueName), nullptr);
}

void Flags::addDouble(const std::string& name, double* target, std::string help, double min, double max) {
  std::string defaultText = std::to_string(*target);
  defaultText.erase(defaultText.find_last_not_of('0') + 1);
  if (!defaultText.empty() && defaultText.back() == '.') defaultText += '0';
  CLI::Option* option = app_.add_option("--" + name, *target);
  describe(name, option, std::move(help), defaultText, "X", [min, max](std::string& text) -> std::string {
    double value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || error != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) {
      return "'" + text + "' is not a number";
    }
    if (value < min || value > max) {
      return text + " is outside [" + std::to_string(min) + ", " + std::to_string(max) + "]";
    }
    return {};
  });
}

const Flags::Flag* Flags::find(std::string_view name) const {
  for (const Flag& flag : flags_) {
    if (flag.name == name) return &flag;
  }
  return nullptr;
}

bool Flags::has(std::string_view name) const {
  return find(name) != nullptr;
}

std::vector<std::string> Flags::names() const {
  std::vector<std::string> names;
  for (const Flag& flag : flags_) names.push_back(flag.name);
  return names;
}

Status Flags::preset(std::string_view name, std::string_view value) {
  const Flag* flag = find(name);
  if (flag == nullptr) return makeError(ErrorCode::kInvalidArgument, "unknown flag --" + std::string(name));
  std::string text(value);
  if (flag->check) {
    if (std::string problem = flag->check(text); !problem.empty()) {
      return makeError(ErrorCode::kInvalidArgument, "--" + flag->name + ": " + problem);
    }
  }
  if (flag->isBool) {
    presets_.push_back("--" + flag->name + "=" + std::string(value));
  } else {
    presets_.push_back("--" + flag->name);
    presets_.emplace_back(value);
  }
  return {};
}

Result<std::vector<std::string>> Flags::parse(const std::vector<std::string>& args, bool stopAtPositional) {
  // CLI11 reads --name= as a flag without its value: given as two arguments, an empty value is a value.
  std::vector<std::string> expanded = presets_;
  bool flagsEnded = false;
  for (const std::string& arg : args) {
    flagsEnded = flagsEnded || arg == "--";
    const auto equals = arg.find('=');
    const Flag* flag = !flagsEnded && arg.starts_with("--") && equals != std::string::npos
                           ? find(std::string_view(arg).substr(2, equals - 2))
                           : nullptr;
    if (flag != nullptr && !flag->isBool) {
      expanded.push_back(arg.substr(0, equals));
      expanded.push_back(arg.substr(equals + 1));
    } else {
      expanded.push_back(arg);
    }
  }
  app_.prefix_command(stopAtPositional);
  std::reverse(expanded.begin(), expanded.end());  // CLI11 takes them last first
  try {
    app_.parse(expanded);
  } catch (const CLI::CallForHelp&) {
    helpRequested_ = true;
    return std::vector<std::string>{};
  } catch (const CLI::ArgumentMismatch& error) {
    std::string flag;
    if (isMissingValue(error, flag)) return makeError(ErrorCode::kInvalidArgument, flag + " needs a value");
    return makeError(ErrorCode::kInvalidArgument, error.what());
  } catch (const CLI::ParseError& error) {
    return makeError(ErrorCode::kInvalidArgument, error.what());
  }
  std::vector<std::string> positionals;
  for (const std::string& arg : app_.remaining()) {
    const bool looksLikeFlag = arg.size() > 1 && arg[0] == '-' && arg != "--";
    if (looksLikeFlag && (positionals.empty() || !stopAtPositional)) {
      if (!arg.starts_with("--")) {
        return makeError(ErrorCode::kInvalidArgument, "unknown flag " + arg + " (flags are written --name)");
      }
      return makeError(ErrorCode::kInvalidArgument, "unknown flag " + arg.substr(0, arg.find('=')));
    }
    if (arg == "--" && positionals.empty() && !stopAtPositional) continue;
    positionals.push_back(arg);
  }
  return positionals;
}

std::string Flags::usage() const {
  return app_.help();
}

}  // namespace ipu::cli
