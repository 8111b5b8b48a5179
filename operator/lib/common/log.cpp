#include "common/log.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>

#include <nlohmann/json.hpp>

#include "common/time_format.h"

namespace ipu::log {
namespace {

std::atomic<Level> minimumLevel{Level::kInfo};
std::mutex outputMutex;

const char* nameOf(Level level) {
  switch (level) {
    case Level::kDebug:
      return "debug";
    case Level::kInfo:
      return "info";
    case Level::kWarning:
      return "warning";
    case Level::kError:
      return "error";
  }
  return "info";
}

}  // namespace

void setLevel(Level minimum) {
  minimumLevel = minimum;
}

bool parseLevel(std::string_view text, Level& out) {
  for (Level level : {Level::kDebug, Level::kInfo, Level::kWarning, Level::kError}) {
    if (text == nameOf(level)) {
      out = level;
      return true;
    }
  }
  return false;
}

void write(Level level, std::string_view message, std::initializer_list<Field> fields) {
  if (level < minimumLevel.load()) return;
  nlohmann::ordered_json line;
  line["ts"] = formatMilliTime(Clock::real().wallNow());
  line["level"] = nameOf(level);
  line["msg"] = message;
  for (const auto& [key, value] : fields) line[std::string(key)] = value;
  std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  std::lock_guard lock(outputMutex);
  std::fwrite(text.data(), 1, text.size(), stderr);
}

}  // namespace ipu::log
