#include "vipu-sim/file_lock.h"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace ipu::vipu::sim {

Result<std::unique_ptr<FileLock>> FileLock::acquire(const std::string& path) {
  const std::string lockPath = path + ".lock";
  const int fd = ::open(lockPath.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return makeError(ErrorCode::kInternal,
                     "cannot open lock file '" + lockPath + "': " + std::strerror(errno));
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    ::close(fd);
    if (error == EWOULDBLOCK) {
      return makeError(ErrorCode::kFailedPrecondition,
                       "state file '" + path + "' is in use by another vipu-sim (lock '" + lockPath + "')");
    }
    return makeError(ErrorCode::kInternal, "cannot lock '" + lockPath + "': " + std::strerror(error));
  }
  return std::make_unique<FileLock>(PrivateTag{}, fd);
}

FileLock::~FileLock() {
  ::close(fd_);
}  // closing releases the lock

}  // namespace ipu::vipu::sim
