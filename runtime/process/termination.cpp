#include "process/termination.h"

#include <cstdio>
#include <cstring>

#include <fcntl.h>
#include <unistd.h>

namespace ipu::runtime::process {
namespace {

constexpr std::size_t kMaxCommandText = 200;

std::string seconds(std::chrono::steady_clock::duration ran) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", std::chrono::duration<double>(ran).count());
  return text;
}

}  // namespace

std::string shortened(const std::string& text, std::size_t max) {
  return text.size() <= max ? text : text.substr(0, max - 3) + "...";
}

std::string terminationMessage(const TerminationFacts& facts) {
  std::string message = "instance " + (facts.instance.empty() ? std::string("?") : facts.instance);
  if (!facts.worker.empty()) message += " (" + facts.worker + ")";
  message += ": " + shortened(facts.what.empty() ? std::string("command") : facts.what, kMaxCommandText);
  if (facts.status.signal != 0) {
    const char* name = sigabbrev_np(facts.status.signal);
    message += " killed by signal " + std::to_string(facts.status.signal) +
               (name != nullptr ? std::string(" (SIG") + name + ")" : std::string());
  } else if (facts.status.code == 0) {
    message += " succeeded";
  } else {
    message += " exited with code " + std::to_string(facts.status.code);
  }
  message += " after " + seconds(facts.ran);
  if (!facts.detail.empty()) message += ": " + facts.detail;
  return shortened(message, kMaxTerminationMessage);
}

void writeTerminationMessage(const std::string& path, const std::string& message) {
  if (path.empty()) return;
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return;
  std::string line = message + "\n";
  ssize_t ignored = write(fd, line.data(), line.size());
  (void)ignored;
  close(fd);
}

}  // namespace ipu::runtime::process
