#include "common/time_format.h"

#include <cstdio>
#include <ctime>

namespace ipu {
namespace {

// "2026-01-02T03:04:05" for the whole seconds of `time` (rounded down, also before the epoch).
std::string formatSeconds(std::chrono::sys_seconds seconds) {
  const std::time_t t = std::chrono::system_clock::to_time_t(seconds);
  std::tm utc{};
  gmtime_r(&t, &utc);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%S", &utc);
  return text;
}

}  // namespace

std::string formatTime(Clock::WallTime time) {
  return formatSeconds(std::chrono::floor<std::chrono::seconds>(time)) + "Z";
}

// Whole seconds, then `digits` fractional digits of `Unit`.
template <typename Unit>
std::string formatFractional(Clock::WallTime time, int digits) {
  const auto seconds = std::chrono::floor<std::chrono::seconds>(time);
  const auto fraction = std::chrono::duration_cast<Unit>(time - seconds).count();
  char text[32];  // room for any long long, which -Wformat-truncation checks
  std::snprintf(text, sizeof(text), ".%0*lldZ", digits, static_cast<long long>(fraction));
  return formatSeconds(seconds) + text;
}

std::string formatMicroTime(Clock::WallTime time) { return formatFractional<std::chrono::microseconds>(time, 6); }

std::string formatMilliTime(Clock::WallTime time) { return formatFractional<std::chrono::milliseconds>(time, 3); }

}  // namespace ipu
