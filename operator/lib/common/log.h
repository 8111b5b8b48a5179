#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace ipu::log {

enum class Level { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

using Field = std::pair<std::string_view, std::string>;

// Structured logs: one JSON object per line on stderr ({"ts":…,"level":…,"msg":…, fields…}), so that
// `kubectl logs` output can be filtered by tools. Thread-safe.
void write(Level level, std::string_view message, std::initializer_list<Field> fields = {});
void setLevel(Level minimum);
// "debug", "info", "warning", "error"; false for anything else.
bool parseLevel(std::string_view text, Level& out);

inline void debug(std::string_view m, std::initializer_list<Field> f = {}) {
  write(Level::kDebug, m, f);
}
inline void info(std::string_view m, std::initializer_list<Field> f = {}) {
  write(Level::kInfo, m, f);
}
inline void warning(std::string_view m, std::initializer_list<Field> f = {}) {
  write(Level::kWarning, m, f);
}
inline void error(std::string_view m, std::initializer_list<Field> f = {}) {
  write(Level::kError, m, f);
}

}  // namespace ipu::log
