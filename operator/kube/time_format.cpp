#include "kube/time_format.h"

#include <cstdio>
#include <ctime>

namespace ipu::kube {
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

std::string formatMicroTime(Clock::WallTime time) {
  const auto seconds = std::chrono::floor<std::chrono::seconds>(time);
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(time - seconds).count();
  char fraction[32];  // room for any long long, which -Wformat-truncation checks
  std::snprintf(fraction, sizeof(fraction), ".%06lldZ", static_cast<long long>(micros));
  return formatSeconds(seconds) + fraction;
}

}  // namespace ipu::kube
