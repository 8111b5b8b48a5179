#include "common/time_format.h"

#include <algorithm>
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

std::string formatMicroTime(Clock::WallTime time) {
  return formatFractional<std::chrono::microseconds>(time, 6);
}

std::string formatMilliTime(Clock::WallTime time) {
  return formatFractional<std::chrono::milliseconds>(time, 3);
}

std::optional<Clock::WallTime> parseTime(std::string_view text) {
  // Exactly "YYYY-MM-DDTHH:MM:SS" then an optional ".digits", then "Z".
  if (text.size() < 20 || text.back() != 'Z') return std::nullopt;
  const std::string_view fraction = text.substr(19, text.size() - 20);
  if (!fraction.empty() && (fraction.front() != '.' || fraction.size() < 2 ||
                            fraction.substr(1).find_first_not_of("0123456789") != std::string_view::npos)) {
    return std::nullopt;
  }
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  const std::string head(text.substr(0, 19));
  int consumed = 0;
  if (std::sscanf(head.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &year, &month, &day, &hour, &minute, &second,
                  &consumed) != 6 ||
      consumed != 19 || head[4] != '-' || head[7] != '-' || head[10] != 'T' || head[13] != ':' ||
      head[16] != ':') {
    return std::nullopt;
  }
  const std::chrono::year_month_day date{std::chrono::year(year),
                                         std::chrono::month(static_cast<unsigned>(month)),
                                         std::chrono::day(static_cast<unsigned>(day))};
  if (!date.ok() || hour > 23 || minute > 59 || second > 60) return std::nullopt;
  return std::chrono::time_point_cast<Clock::WallTime::duration>(
      std::chrono::sys_days(date) + std::chrono::hours(hour) + std::chrono::minutes(minute) +
      std::chrono::seconds(second));
}

std::string formatElapsed(Clock::Duration elapsed) {
  using std::chrono::duration_cast;
  const long long seconds = std::max<long long>(0, duration_cast<std::chrono::seconds>(elapsed).count());
  char text[32];
  if (seconds < 60) {
    std::snprintf(text, sizeof text, "%llds", seconds);
  } else if (seconds < 3600) {
    std::snprintf(text, sizeof text, "%lldm", seconds / 60);
  } else if (seconds < 86400) {
    std::snprintf(text, sizeof text, "%lldh%02lldm", seconds / 3600, seconds % 3600 / 60);
  } else {
    std::snprintf(text, sizeof text, "%lldd%02lldh", seconds / 86400, seconds % 86400 / 3600);
  }
  return text;
}

}  // namespace ipu
