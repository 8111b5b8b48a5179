#pragma once

// The launch benchmarks' reading of `kubectl logs --timestamps`: each line with the time the container
// runtime stamped on it.
#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <iomanip>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace ipu::testing {

// Seconds since the epoch of an RFC 3339 time as the kubelet writes it ("2026-12-02T22:30:01.123456789Z", or
// with "+hh:mm" instead of "Z"); 0 when the text is not one.
inline double rfc3339Seconds(const std::string& text) {
  std::tm parts{};
  std::istringstream in(text);
  in >> std::get_time(&parts, "%Y-%m-%dT%H:%M:%S");
  if (in.fail()) return 0;
  double seconds = static_cast<double>(timegm(&parts));
  std::string rest;
  in >> rest;
  std::size_t at = 0;
  if (at < rest.size() && rest[at] == '.') {
    const std::size_t digits = std::min(rest.find_first_not_of("0123456789", at + 1), rest.size());
    seconds += std::strtod(rest.substr(at, digits - at).c_str(), nullptr);
    at = digits;
  }
  if (at < rest.size() && (rest[at] == '+' || rest[at] == '-') && rest.size() >= at + 6) {
    const double offset =
        std::stoi(rest.substr(at + 1, 2)) * 3600.0 + std::stoi(rest.substr(at + 4, 2)) * 60.0;
    seconds += rest[at] == '+' ? -offset : offset;
  }
  return seconds;
}

// Each line of `kubectl logs --timestamps` output as (its time, its text).
inline std::vector<std::pair<double, std::string>> timedLines(const std::string& logs) {
  std::vector<std::pair<double, std::string>> lines;
  std::istringstream in(logs);
  for (std::string line; std::getline(in, line);) {
    const auto space = line.find(' ');
    if (space == std::string::npos) continue;
    lines.emplace_back(rfc3339Seconds(line.substr(0, space)), line.substr(space + 1));
  }
  return lines;
}

}  // namespace ipu::testing
