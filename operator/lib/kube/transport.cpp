#include "kube/transport.h"

#include <algorithm>

namespace ipu::kube {

std::optional<std::string> HttpResponse::header(const std::string& lowerCaseName) const {
  auto found = headers.find(lowerCaseName);
  if (found == headers.end()) return std::nullopt;
  return found->second;
}

void LineSplitter::take(std::string_view part) {
  lineBytes_ += part.size();
  if (lineBytes_ <= maxLineBytes_) {
    pending_.append(part);
    return;
  }
  // Over the cap: keep the prefix only (never all of a line over a small cap), and give back the rest.
  const std::size_t keep = std::min(kOversizedLinePrefix, maxLineBytes_);
  if (pending_.size() < keep) pending_.append(part.substr(0, keep - pending_.size()));
  if (pending_.size() > keep) {
    pending_.resize(keep);
    pending_.shrink_to_fit();
  }
}

bool LineSplitter::feed(std::string_view chunk, const LineHandler& onLine) {
  while (!chunk.empty()) {
    auto newline = chunk.find('\n');
    if (newline == std::string_view::npos) {
      take(chunk);
      return true;
    }
    take(chunk.substr(0, newline));
    chunk.remove_prefix(newline + 1);
    std::size_t bytes = lineBytes_;
    const bool cut = bytes > maxLineBytes_;
    if (!cut && !pending_.empty() && pending_.back() == '\r') {
      pending_.pop_back();
      --bytes;
    }
    std::string line = std::move(pending_);
    pending_.clear();
    lineBytes_ = 0;
    if (!onLine(StreamLine{line, bytes})) return false;
  }
  return true;
}

}  // namespace ipu::kube
