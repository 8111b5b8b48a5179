#include "vipu-sim/atomic_file.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ipu::vipu::sim {
namespace {

Error systemError(const std::string& what, const std::string& path) {
  return makeError(ErrorCode::kInternal, what + " '" + path + "': " + std::strerror(errno));
}

// Closes a file descriptor on every path out.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

}  // namespace

Status writeFileAtomically(const std::string& path, std::string_view content) {
  const std::string temporary = path + ".tmp";
  FileDescriptor file(::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (file.get() < 0) return systemError("cannot create", temporary);
  std::size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = ::write(file.get(), content.data() + written, content.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      Error error = systemError("cannot write", temporary);
      ::unlink(temporary.c_str());
      return error;
    }
    written += static_cast<std::size_t>(n);
  }
  if (::fsync(file.get()) != 0) {
    Error error = systemError("cannot sync", temporary);
    ::unlink(temporary.c_str());
    return error;
  }
  if (::close(file.release()) != 0) {
    Error error = systemError("cannot close", temporary);
    ::unlink(temporary.c_str());
    return error;
  }
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    Error error = systemError("cannot rename " + temporary + " to", path);
    ::unlink(temporary.c_str());
    return error;
  }
  // The rename itself is durable only once the directory entry is on disk.
  std::string directory = std::filesystem::path(path).parent_path().string();
  if (directory.empty()) directory = ".";
  FileDescriptor dir(::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.get() < 0 || ::fsync(dir.get()) != 0) return systemError("cannot sync directory", directory);
  return {};
}

Result<std::string> readWholeFile(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::exists(path, error)) {
    return makeError(ErrorCode::kNotFound, "'" + path + "' does not exist");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return systemError("cannot open", path);
  std::ostringstream content;
  content << in.rdbuf();
  if (in.bad()) return systemError("cannot read", path);
  return content.str();
}

}  // namespace ipu::vipu::sim
