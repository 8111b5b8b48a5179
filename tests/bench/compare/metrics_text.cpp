#include "metrics_text.h"

#include <sstream>

namespace ipu::bench {

double counterTotal(const std::string& exposition, const std::string& name) {
  double total = 0;
  std::istringstream lines(exposition);
  for (std::string line; std::getline(lines, line);) {
    // "name value" or "name{labels} value"; never another metric the name is a prefix of, nor a comment.
    if (!line.starts_with(name) || line.size() <= name.size()) continue;
    const char next = line[name.size()];
    if (next != ' ' && next != '{') continue;
    total += std::stod(line.substr(line.rfind(' ') + 1));
  }
  return total;
}

}  // namespace ipu::bench
