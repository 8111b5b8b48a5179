#include "runtime_fixture.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "contract/runtime_contract.h"
#include "tls/pki.h"

namespace ipu::testing {

std::string runtimeBinary() {
  const char* path = std::getenv("IPU_RUNTIME_BINARY");
  if (path == nullptr) throw std::runtime_error("IPU_RUNTIME_BINARY is not set (run the test through ctest)");
  return path;
}

JobSecretDir::JobSecretDir(const std::string& jobIdentity) {
  std::string pattern = std::filesystem::temp_directory_path() / "ipu-runtime-secret-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path = pattern;
  auto credentials = runtime::pki::issueJobCredentials(jobIdentity, std::chrono::hours(24));
  std::ofstream(path + "/" + runtime::contract::kCaFile) << credentials.caCertPem;
  std::ofstream(path + "/" + runtime::contract::kCertFile) << credentials.certPem;
  std::ofstream(path + "/" + runtime::contract::kKeyFile) << credentials.keyPem;
}

JobSecretDir::~JobSecretDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path, ignored);
}

std::string JobSecretDir::environment() const {
  return std::string(runtime::contract::kEnvCredentialsDir) + "=" + path;
}

std::string fileText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> linesWith(const std::string& text, const std::string& needle) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.find(needle) != std::string::npos) lines.push_back(line);
  }
  return lines;
}

}  // namespace ipu::testing
