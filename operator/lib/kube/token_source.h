#pragma once

#include <filesystem>
#include <mutex>
#include <string>

namespace ipu::kube {

// The bearer token to send. A token file (a projected service-account token) is rotated by the kubelet
// while we run: it is re-read whenever its modification time or size changes, and on demand after a 401.
class TokenSource {
 public:
  TokenSource(std::string staticToken, std::string tokenFile);

  // "" when there is no token (client-certificate authentication).
  std::string token();
  // Forces the next token() to re-read the file; true when there is a file to re-read.
  bool invalidate();

 private:
  std::mutex mutex_;
  std::string staticToken_;
  std::string tokenFile_;
  std::string cached_;
  std::filesystem::file_time_type seenTime_{};
  std::uintmax_t seenSize_ = 0;
  bool loaded_ = false;
};

}  // namespace ipu::kube
