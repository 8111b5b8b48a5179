#include "common/log.h"

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>

namespace ipu::log {
namespace {

std::atomic<Level> minimumLevel{Level::kInfo};
std::mutex outputMutex;

const char* nameOf(Level level) {
  switch (level) {
    case Level::kDebug: return "debug";
    case Level::kInfo: return "info";
    case Level::kWarning: return "warning";
    case Level::kError: return "error";
  }
  return "info";
}

std::string timestamp() {
  auto now = std::chrono::system_clock::now();
  std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%S", &utc);
  char fraction[8];
  std::snprintf(fraction, sizeof(fraction), ".%03dZ", static_cast<int>(millis));
  return std::string(text) + fraction;
}

}  // namespace

void setLevel(Level minimum) { minimumLevel = minimum; }

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
  line["ts"] = timestamp();
  line["level"] = nameOf(level);
  line["msg"] = message;
  for (const auto& [key, value] : fields) line[std::string(key)] = value;
  std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  std::lock_guard lock(outputMutex);
  std::fwrite(text.data(), 1, text.size(), stderr);
}

}  // namespace ipu::log
