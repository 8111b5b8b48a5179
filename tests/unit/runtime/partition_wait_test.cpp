#include "partition/partition_wait.h"

#include <atomic>
#include <csignal>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net/socket.h"

namespace ipu::runtime::partition {
namespace {

TEST(PartitionWaitTest, TheStatusUrlIsPlainHttpWithAHostAPortAndAPath) {
  EXPECT_EQ(parseStatusUrl("http://ipu-operator-vipu-proxy.ipu-system.svc:8091/v1/partitions/ipuop_ns_job_0"),
            (StatusUrl{"ipu-operator-vipu-proxy.ipu-system.svc", 8091, "/v1/partitions/ipuop_ns_job_0"}));
  EXPECT_EQ(parseStatusUrl("http://10.0.0.7/v1/partitions/p"),
            (StatusUrl{"10.0.0.7", 80, "/v1/partitions/p"}));
  EXPECT_EQ(parseStatusUrl("http://[fd00::7]:8091/x"), (StatusUrl{"fd00::7", 8091, "/x"}));
  EXPECT_EQ(parseStatusUrl("http://proxy:8091"), (StatusUrl{"proxy", 8091, "/"}));
  for (const char* refused :
       {"https://proxy:8091/p", "proxy:8091/p", "http://:8091/p", "http://proxy:/p", "http://proxy:0/p",
        "http://proxy:65536/p", "http://user@proxy:8091/p", "http://proxy:8091/p?x=1",
        "http://proxy:8091/p#f", "http://[fd00::7/p", "http://proxy:80a/p", ""}) {
    EXPECT_FALSE(parseStatusUrl(refused)) << refused;
  }
}

TEST(PartitionWaitTest, TheRequestAsksForJsonAndClosesTheConnection) {
  EXPECT_EQ(statusRequest({"proxy", 8091, "/v1/partitions/p"}),
            "GET /v1/partitions/p HTTP/1.1\r\nHost: proxy:8091\r\nAccept: application/json\r\n"
            "User-Agent: ipu-runtime\r\nConnection: close\r\n\r\n");
  EXPECT_NE(statusRequest({"fd00::7", 8091, "/p"}).find("Host: [fd00::7]:8091\r\n"), std::string::npos);
}

TEST(PartitionWaitTest, OnlyAnOkReplyNamingPsActiveIsActive) {
  const auto reply = [](const std::string& status, const std::string& body) {
    return "HTTP/1.1 " + status +
           "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
           "\r\n\r\n" + body;
  };
  const StatusAnswer active =
      readStatusReply(reply("200 OK", R"({"partition":"p","readyState":"PS_ACTIVE"})"));
  EXPECT_TRUE(active.active);
  EXPECT_EQ(active.detail, "PS_ACTIVE");
  const StatusAnswer pending =
      readStatusReply(reply("200 OK", R"({"partition":"p","readyState":"PS_PENDING"})"));
  EXPECT_FALSE(pending.active);
  EXPECT_EQ(pending.detail, "PS_PENDING");
  const StatusAnswer refused =
      readStatusReply(reply("403 Forbidden", R"({"code":"PermissionDenied","message":"not this pod's"})"));
  EXPECT_FALSE(refused.active);
  EXPECT_EQ(refused.detail, "HTTP 403: not this pod's");
  // A 200 whose body says active in any other way, or is not JSON, is not an answer.
  EXPECT_FALSE(readStatusReply(reply("200 OK", R"({"partition":"p"})")).active);
  EXPECT_FALSE(readStatusReply(reply("200 OK", "PS_ACTIVE")).active);
  EXPECT_FALSE(readStatusReply(reply("200 OK", R"({"readyState":["PS_ACTIVE"]})")).active);
  EXPECT_FALSE(readStatusReply("SSH-2.0-OpenSSH\r\n").active);
  EXPECT_EQ(readStatusReply(reply("503 Service Unavailable", "")).detail, "HTTP 503");
}

// A proxy on 127.0.0.1 that answers each connection with the next of `replies` (the last one again once they
// run out), counting the questions.
class ScriptedProxy {
 public:
  explicit ScriptedProxy(std::vector<std::string> replies)
      : listener_(net::listenTcp(0)), replies_(std::move(replies)), thread_([this] { serve(); }) {}
  ~ScriptedProxy() {
    stopping_ = true;
    ::shutdown(listener_.get(), SHUT_RDWR);
    thread_.join();
  }
  int port() const { return net::localPort(listener_.get()); }
  int questions() const { return questions_; }

 private:
  void serve() {
    while (!stopping_) {
      net::Fd connection(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
      if (!connection) return;
      std::string request;
      char buffer[1024];
      while (request.find("\r\n\r\n") == std::string::npos) {
        const ssize_t n = ::recv(connection.get(), buffer, sizeof buffer, 0);
        if (n <= 0) break;
        request.append(buffer, static_cast<std::size_t>(n));
      }
      const std::size_t index = std::min<std::size_t>(questions_, replies_.size() - 1);
      ++questions_;
      const std::string& reply = replies_[index];
      (void)!::send(connection.get(), reply.data(), reply.size(), MSG_NOSIGNAL);
    }
  }

  net::Fd listener_;
  std::vector<std::string> replies_;
  std::atomic<bool> stopping_{false};
  std::atomic<int> questions_{0};
  std::thread thread_;
};

std::string okReply(const std::string& state) {
  const std::string body = R"({"partition":"p","readyState":")" + state + "\"}";
  return "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

TEST(PartitionWaitTest, TheWaitAsksUntilThePartitionIsActive) {
  // Refused first (the proxy's caches have not seen the pod yet), then pending, then active.
  ScriptedProxy proxy({"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n", okReply("PS_PENDING"),
                       okReply("PS_PENDING"), okReply("PS_ACTIVE")});
  const WaitOutcome outcome =
      waitUntilActive({{"127.0.0.1", proxy.port(), "/v1/partitions/p"}, "p", std::chrono::seconds(30)});
  EXPECT_EQ(outcome.kind, WaitOutcome::Kind::kActive);
  EXPECT_EQ(outcome.lastAnswer, "PS_ACTIVE");
  EXPECT_EQ(proxy.questions(), 4);
}

TEST(PartitionWaitTest, AnActivePartitionCostsOneQuestion) {
  ScriptedProxy proxy({okReply("PS_ACTIVE")});
  const WaitOutcome outcome =
      waitUntilActive({{"127.0.0.1", proxy.port(), "/v1/partitions/p"}, "p", std::chrono::seconds(30)});
  EXPECT_EQ(outcome.kind, WaitOutcome::Kind::kActive);
  EXPECT_EQ(proxy.questions(), 1);
}

TEST(PartitionWaitTest, APartitionNeverActiveEndsTheWaitAtItsTimeoutWithTheLastAnswer) {
  ScriptedProxy proxy({okReply("PS_ERROR")});
  const WaitOutcome outcome =
      waitUntilActive({{"127.0.0.1", proxy.port(), "/v1/partitions/p"}, "p", std::chrono::seconds(1)});
  EXPECT_EQ(outcome.kind, WaitOutcome::Kind::kTimedOut);
  EXPECT_EQ(outcome.lastAnswer, "PS_ERROR");
  EXPECT_GE(outcome.waited, std::chrono::milliseconds(1000));
  EXPECT_GE(proxy.questions(), 2);
}

TEST(PartitionWaitTest, SigtermEndsTheWaitAtOnce) {
  ScriptedProxy proxy({okReply("PS_PENDING")});
  WaitOutcome outcome;
  std::thread waiting([&] {
    outcome =
        waitUntilActive({{"127.0.0.1", proxy.port(), "/v1/partitions/p"}, "p", std::chrono::seconds(60)});
  });
  // Asked once: the wait's signal mask is in place, so the signal is read, not acted on by default.
  while (proxy.questions() == 0) std::this_thread::yield();
  ::pthread_kill(waiting.native_handle(), SIGTERM);
  waiting.join();
  EXPECT_EQ(outcome.kind, WaitOutcome::Kind::kStopped);
  EXPECT_EQ(outcome.signal, SIGTERM);
  EXPECT_LT(outcome.waited, std::chrono::seconds(60));
}

TEST(PartitionWaitTest, AProxyNobodyServesIsWaitedOnNotAnError) {
  int port = 0;
  {
    net::Fd closed = net::listenTcp(0);  // a port that was free a moment ago
    port = net::localPort(closed.get());
  }
  const WaitOutcome outcome =
      waitUntilActive({{"127.0.0.1", port, "/v1/partitions/p"}, "p", std::chrono::seconds(1)});
  EXPECT_EQ(outcome.kind, WaitOutcome::Kind::kTimedOut);
  EXPECT_NE(outcome.lastAnswer.find("cannot connect"), std::string::npos) << outcome.lastAnswer;
}

}  // namespace
}  // namespace ipu::runtime::partition
