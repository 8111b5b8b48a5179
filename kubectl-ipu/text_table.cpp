#include "kubectl-ipu/text_table.h"

#include <algorithm>

namespace ipu::kubectl_ipu {

std::string renderTable(const std::vector<std::string>& headers,
                        const std::vector<std::vector<std::string>>& rows, int width) {
  std::vector<std::size_t> widths(headers.size(), 0);
  auto cell = [](const std::vector<std::string>& row, std::size_t column) {
    return column < row.size() && !row[column].empty() ? row[column] : std::string("-");
  };
  for (std::size_t c = 0; c < headers.size(); ++c) {
    widths[c] = headers[c].size();
    for (const auto& row : rows) widths[c] = std::max(widths[c], cell(row, c).size());
  }
  std::size_t before = 0;  // columns before the last, with their gaps
  for (std::size_t c = 0; c + 1 < headers.size(); ++c) before += widths[c] + 2;
  const std::size_t lastRoom = width > 0 && static_cast<std::size_t>(width) > before + 8
                                   ? static_cast<std::size_t>(width) - before
                                   : std::string::npos;
  std::string text;
  auto line = [&](const std::vector<std::string>& row, bool header) {
    std::string out;
    for (std::size_t c = 0; c < headers.size(); ++c) {
      std::string value = header ? row[c] : cell(row, c);
      if (c + 1 == headers.size()) {
        if (value.size() > lastRoom) value = value.substr(0, lastRoom - 3) + "...";
        out += value;
      } else {
        out += value + std::string(widths[c] + 2 - value.size(), ' ');
      }
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    text += out + '\n';
  };
  line(headers, true);
  for (const auto& row : rows) line(row, false);
  return text;
}

}  // namespace ipu::kubectl_ipu
