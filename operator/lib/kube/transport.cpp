#include "kube/transport.h"

namespace ipu::kube {

std::optional<std::string> HttpResponse::header(const std::string& lowerCaseName) const {
  auto found = headers.find(lowerCaseName);
  if (found == headers.end()) return std::nullopt;
  return found->second;
}

bool LineSplitter::feed(std::string_view chunk, const LineHandler& onLine) {
  while (!chunk.empty()) {
    auto newline = chunk.find('\n');
    if (newline == std::string_view::npos) {
      pending_.append(chunk);
      return true;
    }
    pending_.append(chunk.substr(0, newline));
    chunk.remove_prefix(newline + 1);
    if (!pending_.empty() && pending_.back() == '\r') pending_.pop_back();
    std::string line = std::move(pending_);
    pending_.clear();
    if (!onLine(line)) return false;
  }
  return true;
}

}  // namespace ipu::kube
