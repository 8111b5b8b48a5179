#include "kube/cpprest_transport.h"

#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

namespace ipu::kube {
namespace {

// The environment is the process's: each case puts back what it found.
class DefaultCaFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* before = std::getenv("SSL_CERT_FILE")) before_ = before;
    ::unsetenv("SSL_CERT_FILE");
  }
  void TearDown() override {
    if (before_.empty()) {
      ::unsetenv("SSL_CERT_FILE");
    } else {
      ::setenv("SSL_CERT_FILE", before_.c_str(), 1);
    }
  }
  static std::string now() {
    const char* value = std::getenv("SSL_CERT_FILE");
    return value ? value : "(unset)";
  }
  std::string before_;
};

TEST_F(DefaultCaFileTest, WithAClusterCaNothingIsLoadedFromTheDefaultFile) {
  ClusterConfig config;
  config.caPem = "-----BEGIN CERTIFICATE-----\n...\n-----END CERTIFICATE-----\n";
  EXPECT_TRUE(skipDefaultCaFileLoads(config));
  EXPECT_EQ(now(), "/dev/null");
}

TEST_F(DefaultCaFileTest, WithoutOneTheSystemBundleStaysWhatVerifiesTheServer) {
  EXPECT_FALSE(skipDefaultCaFileLoads(ClusterConfig{}));
  EXPECT_EQ(now(), "(unset)");
}

// Environments set it for every program (to the bundle the connections would drop again): with a CA of its
// own the API server's client reads it no more than client-go does.
TEST_F(DefaultCaFileTest, AFileTheEnvironmentNamedIsNotLoadedEither) {
  ::setenv("SSL_CERT_FILE", "/etc/ssl/certs/ca-certificates.crt", 1);
  ClusterConfig config;
  config.caPem = "-----BEGIN CERTIFICATE-----\n...\n-----END CERTIFICATE-----\n";
  EXPECT_TRUE(skipDefaultCaFileLoads(config));
  EXPECT_EQ(now(), "/dev/null");
}

}  // namespace
}  // namespace ipu::kube
