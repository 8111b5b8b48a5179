#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include "contract/runtime_contract.h"
#include "remote/connection.h"
#include "tls/pki.h"

namespace ipu::runtime::remote {
namespace {

namespace contract = runtime::contract;

// A job's credentials written as the kubelet mounts its Secret, in a directory of the test's own.
class CredentialsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = std::filesystem::temp_directory_path() /
                 ("ipu-credentials-" + std::to_string(::getpid()) + "-" +
                  ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(directory_);
    write(issued_);
  }
  void TearDown() override { std::filesystem::remove_all(directory_); }

  void write(const pki::JobCredentials& credentials) {
    std::ofstream(directory_ / contract::kCaFile) << credentials.caCertPem;
    std::ofstream(directory_ / contract::kCertFile) << credentials.certPem;
    std::ofstream(directory_ / contract::kKeyFile) << credentials.keyPem;
  }

  pki::JobCredentials issued_ = pki::issueJobCredentials("ml/bert/uid-1", std::chrono::hours(1));
  std::filesystem::path directory_;
};

TEST_F(CredentialsTest, TheCaThePodPinsIsUsed) {
  const Credentials loaded = Credentials::load(directory_, pki::pemDigest(issued_.caCertPem));
  EXPECT_EQ(loaded.identity, "ml/bert/uid-1");
  EXPECT_EQ(loaded.caPem, issued_.caCertPem);
  EXPECT_NO_THROW(loaded.context(tls::Role::kServer));
}

TEST_F(CredentialsTest, ASecretReplacedUnderTheSameNameIsRefused) {
  const std::string pinned = pki::pemDigest(issued_.caCertPem);
  // Whoever replaced it made a CA and key pair of their own, for the same job identity.
  write(pki::issueJobCredentials("ml/bert/uid-1", std::chrono::hours(1)));
  try {
    Credentials::load(directory_, pinned);
    FAIL() << "a CA other than the pinned one was accepted";
  } catch (const tls::TlsError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("is not the CA the operator issued for this job"), std::string::npos) << message;
    EXPECT_NE(message.find("the pod pins " + pinned), std::string::npos) << message;
  }
  // A pod made before pins existed pins nothing and loads what is there.
  EXPECT_NO_THROW(Credentials::load(directory_, ""));
}

// Whether loading the credentials as a user who may not read the key fails with the hint to fsGroup. As
// root, the key is made root's and 0400 (as the kubelet mounts it) and a child process loads it as nobody.
TEST_F(CredentialsTest, AKeyTheUserMayNotReadSaysHowToLetIt) {
  const auto hintGiven = [&] {
    try {
      Credentials::load(directory_, "");
    } catch (const tls::TlsError& error) {
      return std::string(error.what()).find("needs the pod's securityContext.fsGroup") != std::string::npos;
    }
    return false;
  };
  if (::geteuid() != 0) {
    std::filesystem::permissions(directory_ / contract::kKeyFile, std::filesystem::perms::none);
    EXPECT_TRUE(hintGiven());
    return;
  }
  std::filesystem::permissions(directory_ / contract::kKeyFile, std::filesystem::perms::owner_read);
  std::filesystem::permissions(directory_,
                               std::filesystem::perms::owner_all | std::filesystem::perms::group_read |
                                   std::filesystem::perms::group_exec | std::filesystem::perms::others_read |
                                   std::filesystem::perms::others_exec);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    constexpr uid_t kNobody = 65534;
    if (::setgid(kNobody) != 0 || ::setuid(kNobody) != 0) ::_exit(3);
    ::_exit(hintGiven() ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: no hint; 3: could not become nobody";
}

}  // namespace
}  // namespace ipu::runtime::remote
