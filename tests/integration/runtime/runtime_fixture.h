#pragma once

#include <string>
#include <vector>

namespace ipu::testing {

// The ipu-runtime binary under test (IPU_RUNTIME_BINARY, set by CMake).
std::string runtimeBinary();

// A job's runtime Secret as the operator makes it, written into a fresh directory (ca.crt, tls.crt, tls.key).
struct JobSecretDir {
  explicit JobSecretDir(const std::string& jobIdentity);
  ~JobSecretDir();
  JobSecretDir(const JobSecretDir&) = delete;
  JobSecretDir& operator=(const JobSecretDir&) = delete;

  std::string path;
  // "IPU_RUNTIME_TLS_DIR=<path>", for a runtime process's environment.
  std::string environment() const;
};

// Reads a whole file ("" when it does not exist).
std::string fileText(const std::string& path);

// Lines of `text` that contain `needle`.
std::vector<std::string> linesWith(const std::string& text, const std::string& needle);

}  // namespace ipu::testing
