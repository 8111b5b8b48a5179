#include "common/failpoint.h"

#include <csignal>
#include <cstdlib>
#include <set>
#include <string>

#include <unistd.h>

#include "common/log.h"

namespace ipu {
namespace {

std::set<std::string, std::less<>> parseNames(const char* text) {
  std::set<std::string, std::less<>> names;
  if (text == nullptr) return names;
  std::string_view rest(text);
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    const std::string_view name = rest.substr(0, comma);
    if (!name.empty()) names.emplace(name);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return names;
}

const std::set<std::string, std::less<>>& armedFailpoints() {
  static const auto names = parseNames(std::getenv("IPU_OPERATOR_CRASH_AT"));
  return names;
}

}  // namespace

void failpoint(std::string_view name) {
  const auto& armed = armedFailpoints();
  if (armed.empty() || !armed.contains(name)) return;
  log::warning("failpoint reached: killing the process", {{"failpoint", std::string(name)}});
  ::kill(::getpid(), SIGKILL);
  std::abort();  // not reached
}

}  // namespace ipu
