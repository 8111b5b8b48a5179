#include "mpi_output.h"

#include <regex>

namespace ipu::testing {

std::map<int, std::vector<std::string>> linesByRank(const std::string& taggedOutput) {
  static const std::regex tag(R"(\[\d+,(\d+)\]<stdout>:)");
  std::map<int, std::vector<std::string>> lines;
  std::map<int, std::string> open;  // a rank's line that no newline has ended yet
  auto it = std::sregex_iterator(taggedOutput.begin(), taggedOutput.end(), tag);
  for (; it != std::sregex_iterator(); ++it) {
    const int rank = std::stoi((*it)[1]);
    const std::size_t from = static_cast<std::size_t>(it->position() + it->length());
    auto next = std::next(it);
    const std::size_t nextTag =
        next == std::sregex_iterator() ? taggedOutput.size() : static_cast<std::size_t>(next->position());
    const std::size_t newline = taggedOutput.find('\n', from);
    const bool ended = newline != std::string::npos && newline < nextTag;
    open[rank] += taggedOutput.substr(from, (ended ? newline : nextTag) - from);
    if (ended) {
      lines[rank].push_back(open[rank]);
      open.erase(rank);
    }
  }
  for (auto& [rank, text] : open) {
    if (!text.empty()) lines[rank].push_back(text);
  }
  return lines;
}

}  // namespace ipu::testing
