#include "vipu/cli/flag_set.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace ipu::vipu::cli {

void FlagSet::addString(std::string name, std::string* target, std::string help, std::string valueName) {
  add(Flag{std::move(name), std::move(valueName), std::move(help),
           target->empty() ? "" : "\"" + *target + "\"", false,
           [target](std::string_view, std::string_view value) -> Status {
             *target = std::string(value);
             return {};
           }});
}

void FlagSet::addBool(std::string name, bool* target, std::string help) {
  add(Flag{std::move(name), "", std::move(help), *target ? "true" : "false", true,
           [target](std::string_view flag, std::string_view value) -> Status {
             if (value == "true" || value == "1") {
               *target = true;
             } else if (value == "false" || value == "0") {
               *target = false;
             } else {
               return makeError(
                   ErrorCode::kInvalidArgument,
                   "--" + std::string(flag) + ": '" + std::string(value) + "' is not true or false");
             }
             return {};
           }});
}

void FlagSet::addList(std::string name, std::vector<std::string>* target, std::string help,
                      std::string valueName) {
  add(Flag{std::move(name), std::move(valueName), std::move(help), "", false,
           [target](std::string_view, std::string_view value) -> Status {
             target->emplace_back(value);
             return {};
           }});
}

void FlagSet::addDouble(std::string name, double* target, std::string help, double min, double max) {
  std::string defaultText = std::to_string(*target);
  defaultText.erase(defaultText.find_last_not_of('0') + 1);
  if (!defaultText.empty() && defaultText.back() == '.') defaultText += '0';
  add(Flag{std::move(name), "X", std::move(help), defaultText, false,
           [target, min, max](std::string_view flag, std::string_view text) -> Status {
             double value = 0;
             const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
             if (text.empty() || error != std::errc() || end != text.data() + text.size() ||
                 !std::isfinite(value)) {
               return makeError(ErrorCode::kInvalidArgument,
                                "--" + std::string(flag) + ": '" + std::string(text) + "' is not a number");
             }
             if (value < min || value > max) {
               return makeError(ErrorCode::kInvalidArgument,
                                "--" + std::string(flag) + ": " + std::string(text) + " is outside [" +
                                    std::to_string(min) + ", " + std::to_string(max) + "]");
             }
             *target = value;
             return {};
           }});
}

const FlagSet::Flag* FlagSet::find(std::string_view name) const {
  for (const Flag& flag : flags_) {
    if (flag.name == name) return &flag;
  }
  return nullptr;
}

std::vector<std::string> FlagSet::names() const {
  std::vector<std::string> names;
  for (const Flag& flag : flags_) names.push_back(flag.name);
  return names;
}

Status FlagSet::set(std::string_view name, std::string_view value) {
  const Flag* flag = find(name);
  if (flag == nullptr) return makeError(ErrorCode::kInvalidArgument, "unknown flag --" + std::string(name));
  return flag->apply(flag->name, value);
}

Result<std::vector<std::string>> FlagSet::parse(const std::vector<std::string>& args, bool stopAtPositional) {
  std::vector<std::string> positionals;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      positionals.insert(positionals.end(), args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
      break;
    }
    if (arg == "-h" || arg == "--help") {
      helpRequested_ = true;
      continue;
    }
    if (arg.size() < 3 || arg.rfind("--", 0) != 0) {
      if (arg.size() > 1 && arg[0] == '-') {
        return makeError(ErrorCode::kInvalidArgument, "unknown flag " + arg + " (flags are written --name)");
      }
      if (stopAtPositional) {
        positionals.insert(positionals.end(), args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
        break;
      }
      positionals.push_back(arg);
      continue;
    }
    const std::string body = arg.substr(2);
    const auto equals = body.find('=');
    const std::string name = body.substr(0, equals);
    const Flag* flag = find(name);
    if (flag == nullptr) return makeError(ErrorCode::kInvalidArgument, "unknown flag --" + name);
    std::string value;
    if (equals != std::string::npos) {
      value = body.substr(equals + 1);
    } else if (flag->isBool) {
      value = "true";
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      return makeError(ErrorCode::kInvalidArgument, "--" + name + " needs a value");
    }
    if (Status applied = flag->apply(flag->name, value); !applied) return applied.error();
  }
  return positionals;
}

std::string FlagSet::usage() const {
  std::string text = "Usage: " + synopsis_ + "\n\nFlags:\n";
  std::size_t width = 0;
  std::vector<std::string> heads;
  for (const Flag& flag : flags_) {
    heads.push_back("  --" + flag.name + (flag.valueName.empty() ? "" : " " + flag.valueName));
    width = std::max(width, heads.back().size());
  }
  for (std::size_t i = 0; i < flags_.size(); ++i) {
    const Flag& flag = flags_[i];
    text += heads[i] + std::string(width + 2 - heads[i].size(), ' ') + flag.help;
    if (!flag.defaultText.empty()) text += " (default " + flag.defaultText + ")";
    text += "\n";
  }
  const std::string helpHead = "  -h, --help";
  text += helpHead + std::string(std::max(width, helpHead.size()) + 2 - helpHead.size(), ' ') +
          "show this help and exit\n";
  return text;
}

}  // namespace ipu::vipu::cli
