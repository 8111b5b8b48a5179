// tools/cluster.sh given bad input fails with a clear message and leaves nothing running.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "subprocess.h"

namespace ipu::testing {
namespace {

namespace fs = std::filesystem;
const std::string kClusterScript = IPU_SOURCE_DIR "/tools/cluster.sh";

// Processes whose command line mentions the directory: what a cluster there would have left running.
std::vector<std::string> processesMentioning(const std::string& dir) {
  std::vector<std::string> found;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    std::string pid = entry.path().filename();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmdline;
    try {
      std::ifstream file(entry.path() / "cmdline");
      cmdline.assign(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
    } catch (const std::ios_base::failure&) {
      // The process ended between the open and the read (libstdc++ throws on the read's ESRCH whatever the
      // stream's exception mask): it left nothing running.
      continue;
    }
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    if (cmdline.find(dir) != std::string::npos && cmdline.find("cluster.sh") == std::string::npos) {
      found.push_back(pid + ": " + cmdline);
    }
  }
  return found;
}

// A listening socket on 127.0.0.1 that holds a port for the test's lifetime.
class HeldPort {
 public:
  HeldPort() : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(address);
    auto* generic = reinterpret_cast<sockaddr*>(&address);
    if (::bind(fd_, generic, length) != 0 || ::listen(fd_, 1) != 0 ||
        ::getsockname(fd_, generic, &length) != 0) {
      throw std::runtime_error("cannot hold a port");
    }
    port_ = ntohs(address.sin_port);
  }
  ~HeldPort() { ::close(fd_); }
  HeldPort(const HeldPort&) = delete;
  HeldPort& operator=(const HeldPort&) = delete;
  int port() const { return port_; }

 private:
  int fd_;
  int port_ = 0;
};

class ClusterScriptTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* root = std::getenv("IPU_TEST_SCRATCH");
    ASSERT_NE(root, nullptr) << "IPU_TEST_SCRATCH is not set: run through ctest";
    dir_ = fs::path(root) / ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir_);
  }
  void TearDown() override {
    run({kClusterScript, "down", "--dir", dir_}, RunOptions{.timeout = std::chrono::seconds(60)});
  }
  void expectNothingRunning() {
    EXPECT_EQ(processesMentioning(dir_), std::vector<std::string>{}) << "left running after a failed start";
  }
  // The binaries built by tools/build-tools.sh (a warm cache answers at once).
  static std::string builtBinDir() {
    auto built = run({IPU_SOURCE_DIR "/tools/build-tools.sh", "--quiet"},
                     RunOptions{.timeout = std::chrono::hours(1)});
    if (!built.ok()) throw std::runtime_error("tools/build-tools.sh failed: " + built.describe());
    return built.out.substr(0, built.out.find_last_not_of('\n') + 1);
  }

  std::string dir_;
};

TEST_F(ClusterScriptTest, UnknownOptionIsRejectedBeforeAnythingStarts) {
  auto result = run({kClusterScript, "up", "--dir", dir_, "--colour", "blue"});
  EXPECT_EQ(result.exitCode, 2);
  EXPECT_NE(result.err.find("unknown option '--colour'"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("--help"), std::string::npos) << "the message should point at the usage";
  EXPECT_FALSE(fs::exists(dir_)) << "a rejected command must not create its directory";
}

TEST_F(ClusterScriptTest, UnknownCommandAndBadValuesAreRejected) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  for (const auto& c : std::vector<Case>{
           {{"launch"}, "unknown command 'launch'"},
           {{"restart"}, "restart needs a component name"},
           {{"stop", "etcdd"}, "unknown component 'etcdd'"},
           {{"up", "--nodes", "0"}, "--nodes must be a number from 1 to 500, not '0'"},
           {{"up", "--nodes"}, "option --nodes needs a value"},
           {{"up", "--apiserver-port", "70000"}, "--apiserver-port must be a port number, not '70000'"},
           {{"up", "--ipu-pods", "POD 64"}, "--ipu-pods must be comma-separated lower-case names"},
           {{"up", "--timeout", "soon"}, "--timeout must be a positive number of seconds"},
       }) {
    std::vector<std::string> argv{kClusterScript};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    auto result = run(argv);
    EXPECT_EQ(result.exitCode, 2) << c.message;
    EXPECT_NE(result.err.find(c.message), std::string::npos) << "got: " << result.err;
  }
}

TEST_F(ClusterScriptTest, PortInUseFailsClearlyAndStartsNothing) {
  HeldPort busy;
  auto result = run({kClusterScript, "up", "--dir", dir_, "--bin-dir", builtBinDir(), "--apiserver-port",
                     std::to_string(busy.port())});
  EXPECT_EQ(result.exitCode, 1) << result.describe();
  EXPECT_NE(result.err.find("port " + std::to_string(busy.port()) + " (kube-apiserver) is already in use"),
            std::string::npos)
      << result.err;
  expectNothingRunning();
}

TEST_F(ClusterScriptTest, ComponentFailingMidStartStopsWhatAlreadyRuns) {
  // A bin dir whose kube-apiserver crashes at once: etcd is up by then and must be stopped again.
  fs::path bin = fs::path(dir_) / "broken-bin";
  fs::create_directories(bin);
  std::string real = builtBinDir();
  for (const char* name : {"etcd", "kube-controller-manager", "kube-scheduler", "kubectl", "kwok"}) {
    fs::create_symlink(fs::path(real) / name, bin / name);
  }
  {
    std::ofstream crash(bin / "kube-apiserver");
    crash << "#!/bin/sh\necho 'E0101 simulated apiserver crash' >&2\nexit 1\n";
  }
  fs::permissions(bin / "kube-apiserver", fs::perms::owner_all);

  auto result = run({kClusterScript, "up", "--dir", dir_, "--bin-dir", bin.string()});
  EXPECT_EQ(result.exitCode, 1) << result.describe();
  EXPECT_NE(result.err.find("kube-apiserver exited while waiting for kube-apiserver to be ready"),
            std::string::npos)
      << result.err;
  EXPECT_NE(result.err.find("simulated apiserver crash"), std::string::npos)
      << "the log tail should be shown";
  EXPECT_NE(result.err.find("stopping what was started"), std::string::npos) << result.err;
  expectNothingRunning();
  EXPECT_TRUE(fs::exists(fs::path(dir_) / "logs" / "etcd.log")) << "logs of a failed start must be kept";
}

}  // namespace
}  // namespace ipu::testing
