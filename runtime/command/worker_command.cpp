#include "command/worker_command.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>

#include "command/shell_script.h"

namespace ipu::runtime::command {
namespace {

// A sh -c script that runs bash -c that runs sh -c...: past this depth, call it unclear rather than recurse.
constexpr int kDeepestScript = 4;

std::string_view baseName(std::string_view path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool startsWith(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

bool endsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

bool isOption(const Word& word) {
  return !word.expands && word.text.size() > 1 && word.text[0] == '-';
}

// NAME=value (NAME+=value) before the program: set for it, not run.
bool isAssignment(const Word& word) {
  const std::string& text = word.text;
  std::size_t at = 0;
  while (at < text.size() && (std::isalnum(static_cast<unsigned char>(text[at])) || text[at] == '_')) ++at;
  if (at == 0 || std::isdigit(static_cast<unsigned char>(text[0]))) return false;
  return at < text.size() &&
         (text[at] == '=' || (text[at] == '+' && at + 1 < text.size() && text[at + 1] == '='));
}

bool isShell(std::string_view program) {
  static constexpr std::array<std::string_view, 6> kShells = {"sh", "bash", "dash", "ash", "ksh", "zsh"};
  return std::find(kShells.begin(), kShells.end(), program) != kShells.end();
}

struct Reading {
  CommandKind kind = CommandKind::kRankProgram;
  std::vector<std::string> found;
  std::string why;
  int scriptLines = 0;
};

Reading unclear(const SimpleCommand& command, std::string why) {
  Reading reading{CommandKind::kUnclear, {}, std::move(why), 0};
  for (const Word& word : command) reading.found.push_back(word.text);
  return reading;
}

Reading readScript(std::string_view script, int depth);
int lineCount(std::string_view text);

// Steps over a wrapper that runs the rest of the line as the program (exec, env, nice, timeout...) and its
// options; nullopt when `at` is not one. `queryOnly` when the wrapper only asks about the program
// (command -v).
struct Wrapper {
  std::size_t next = 0;
  bool queryOnly = false;
};
std::optional<Wrapper> skipWrapper(const SimpleCommand& words, std::size_t at) {
  const std::string_view name = baseName(words[at].text);
  // Options of each wrapper that take the next word as their value.
  auto skipOptions = [&](std::size_t from, std::initializer_list<std::string_view> withValue) {
    while (from < words.size() && isOption(words[from])) {
      const std::string& option = words[from].text;
      ++from;
      if (option == "--") break;
      if (std::find(withValue.begin(), withValue.end(), option) != withValue.end()) ++from;
    }
    return from;
  };
  if (name == "exec") return Wrapper{skipOptions(at + 1, {"-a"})};
  if (name == "nohup" || name == "builtin") return Wrapper{at + 1};
  if (name == "time") return Wrapper{skipOptions(at + 1, {"-f", "-o"})};
  if (name == "stdbuf") return Wrapper{skipOptions(at + 1, {"-i", "-o", "-e"})};
  if (name == "nice") return Wrapper{skipOptions(at + 1, {"-n"})};
  if (name == "command") {
    const bool query = at + 1 < words.size() && (words[at + 1].text == "-v" || words[at + 1].text == "-V");
    return Wrapper{skipOptions(at + 1, {}), query};
  }
  if (name == "env") {
    std::size_t next = skipOptions(at + 1, {"-u", "-C", "-S"});
    while (next < words.size() && isAssignment(words[next])) ++next;
    return Wrapper{next};
  }
  if (name == "timeout") {
    const std::size_t next = skipOptions(at + 1, {"-s", "-k"});
    return Wrapper{std::min(next + 1, words.size())};  // the duration
  }
  return std::nullopt;
}

// What a shell started as `words[at]` runs: a -c script (read in turn), a script file, or its standard input.
Reading readShell(const SimpleCommand& words, std::size_t at, bool inScript, int depth) {
  bool script = false;
  std::size_t next = at + 1;
  for (; next < words.size() && (isOption(words[next]) || startsWith(words[next].text, "+")); ++next) {
    const std::string& option = words[next].text;
    if (option == "--") {
      ++next;
      break;
    }
    if (option == "-o" || option == "+o" || option == "--rcfile" || option == "--init-file") {
      ++next;
      continue;
    }
    if (!startsWith(option, "--") && option.find('c') != std::string::npos) script = true;
  }
  if (script) {
    if (next >= words.size()) return unclear(words, "runs sh -c without a script");
    // In a script, `sh -c "$SCRIPT"` runs what a variable holds. In the container's own command, a
    // Kubernetes $(NAME) in the script is substituted first: the reading below sees it as an expansion.
    if (inScript && words[next].expands) return unclear(words, "runs a script held in " + words[next].text);
    Reading reading = readScript(words[next].text, depth + 1);
    if (depth == 0) reading.scriptLines = lineCount(words[next].text);
    return reading;
  }
  if (next < words.size()) return unclear(words, "runs the script file " + words[next].text);
  return unclear(words, "runs a script from its standard input");
}

Reading readCommand(const SimpleCommand& words, bool inScript, int depth) {
  std::size_t at = 0;
  if (inScript) {
    while (at < words.size() && isAssignment(words[at])) ++at;
  }
  while (at < words.size() && !words[at].expands) {
    if (baseName(words[at].text) == "busybox" && at + 1 < words.size()) {
      ++at;  // busybox sh -c ..., busybox env ...
      continue;
    }
    const auto wrapper = skipWrapper(words, at);
    if (!wrapper) break;
    if (wrapper->queryOnly) return {};
    at = wrapper->next;
  }
  if (at >= words.size()) return {};
  const Word& program = words[at];
  if (program.expands) return unclear(words, "runs " + program.text + ", known only when it runs");
  const std::string_view name = baseName(program.text);
  if (isLauncherProgram(name)) {
    Reading reading{CommandKind::kLauncher, {}, "", 0};
    for (const Word& word : words) reading.found.push_back(word.text);
    return reading;
  }
  if (isShell(name)) {
    if (depth >= kDeepestScript) return unclear(words, "runs shells nested too deep to read");
    return readShell(words, at, inScript, depth);
  }
  if (name == "eval") return unclear(words, "runs eval");
  // `source venv/bin/activate`: sourcing sets up the environment. A launcher in a sourced file is not seen.
  if (name == "source" || name == ".") return {};
  if (endsWith(name, ".sh") || endsWith(name, ".bash"))
    return unclear(words, "runs the script file " + program.text);
  return {};
}

// A launcher anywhere in the script wins; otherwise the first thing that cannot be seen into.
Reading readScript(std::string_view script, int depth) {
  std::optional<Reading> firstUnclear;
  for (const SimpleCommand& command : simpleCommands(script)) {
    Reading reading = readCommand(command, true, depth);
    if (reading.kind == CommandKind::kLauncher) return reading;
    if (reading.kind == CommandKind::kUnclear && !firstUnclear) firstUnclear = std::move(reading);
  }
  return firstUnclear.value_or(Reading{});
}

// Kubernetes replaces $(NAME) in a container's command and args with the container's variable NAME before
// it starts the container: such a word is only known then.
bool hasKubernetesReference(std::string_view text) {
  for (std::size_t at = text.find("$("); at != std::string_view::npos; at = text.find("$(", at + 2)) {
    std::size_t end = at + 2;
    while (end < text.size() && (std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_'))
      ++end;
    const bool name = end > at + 2 && !std::isdigit(static_cast<unsigned char>(text[at + 2]));
    if (name && end < text.size() && text[end] == ')' && (at == 0 || text[at - 1] != '$')) return true;
  }
  return false;
}

int lineCount(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  return text.empty() ? 0 : static_cast<int>(std::count(text.begin(), text.end(), '\n')) + 1;
}

}  // namespace

bool isLauncherProgram(std::string_view program) {
  static constexpr std::array<std::string_view, 5> kLaunchers = {"poprun", "mpirun", "mpiexec", "orterun",
                                                                 "prterun"};
  for (std::string_view launcher : kLaunchers) {
    if (program == launcher || (startsWith(program, launcher) && program[launcher.size()] == '.'))
      return true;
  }
  return false;
}

CommandReading readWorkerCommand(const std::vector<std::string>& argv) {
  SimpleCommand words;
  for (const std::string& arg : argv) words.push_back({arg, hasKubernetesReference(arg)});
  Reading reading = readCommand(words, false, 0);
  return {reading.kind, std::move(reading.found), std::move(reading.why), reading.scriptLines};
}

}  // namespace ipu::runtime::command
