#pragma once

#include <memory>
#include <string>

#include "common/result.h"

namespace ipu::vipu::sim {

// An exclusive advisory lock (flock) on `<path>.lock`, held while the object lives. Two vipu-sims writing one
// state file would each overwrite the other's partitions; the second one refuses to start instead.
class FileLock {
  struct PrivateTag {};  // only the factory constructs, after validating

 public:
  static Result<std::unique_ptr<FileLock>> acquire(const std::string& path);
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

  FileLock(PrivateTag, int fd) : fd_(fd) {}

 private:
  int fd_;
};

}  // namespace ipu::vipu::sim
