#include "kube/token_source.h"

#include <cctype>
#include <fstream>
#include <sstream>

namespace ipu::kube {

TokenSource::TokenSource(std::string staticToken, std::string tokenFile)
    : staticToken_(std::move(staticToken)), tokenFile_(std::move(tokenFile)) {}

std::string TokenSource::token() {
  std::lock_guard lock(mutex_);
  if (tokenFile_.empty()) return staticToken_;
  std::error_code error;
  auto time = std::filesystem::last_write_time(tokenFile_, error);
  auto size = error ? 0 : std::filesystem::file_size(tokenFile_, error);
  if (error) return loaded_ ? cached_ : staticToken_;  // keep the last good token while the file is swapped
  if (!loaded_ || time != seenTime_ || size != seenSize_) {
    std::ifstream file(tokenFile_);
    std::ostringstream text;
    text << file.rdbuf();
    std::string token = text.str();
    while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) token.pop_back();
    if (!token.empty()) {
      cached_ = token;
      seenTime_ = time;
      seenSize_ = size;
      loaded_ = true;
    }
  }
  return loaded_ ? cached_ : staticToken_;
}

bool TokenSource::invalidate() {
  std::lock_guard lock(mutex_);
  loaded_ = false;
  return !tokenFile_.empty();
}

}  // namespace ipu::kube
