// The launch's Finish to its peers: all of them at once, within one deadline. Fake agents on loopback
// addresses of their own (127.0.0.x, one port), no ipu-runtime process.
#include "launch/finish_peers.h"

#include <optional>
#include <thread>

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include "free_port.h"
#include "net/socket.h"
#include "runtime_fixture.h"

namespace ipu::testing {
namespace {

using namespace std::chrono_literals;
using namespace ipu::runtime;

net::Fd listenOn(const std::string& address, std::uint16_t port) {
  net::Fd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  int reuse = 1;
  setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &reuse, sizeof reuse);
  sockaddr_in bound{};
  bound.sin_family = AF_INET;
  bound.sin_port = htons(port);
  inet_pton(AF_INET, address.c_str(), &bound.sin_addr);
  if (bind(fd.get(), reinterpret_cast<sockaddr*>(&bound), sizeof bound) != 0 || listen(fd.get(), 8) != 0)
    throw std::runtime_error("cannot listen on " + address + ":" + std::to_string(port));
  return fd;
}

// An agent that answers one Finish with a Pong, on its own thread.
class FakeAgent {
 public:
  FakeAgent(const remote::Credentials& credentials, const std::string& address, std::uint16_t port)
      : listener_(listenOn(address, port)), thread_([this, &credentials] { serveOne(credentials); }) {}

  // What it was told, once it has served its connection (or given up waiting for one).
  std::optional<protocol::Finish> told() {
    thread_.join();
    return finish_;
  }

 private:
  void serveOne(const remote::Credentials& credentials) {
    pollfd wait{listener_.get(), POLLIN, 0};
    if (poll(&wait, 1, 10'000) != 1) return;
    auto stream = std::make_unique<tls::Stream>(credentials.context(tls::Role::kServer),
                                                accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
    stream->handshake(5s);
    remote::Connection connection(std::move(stream));
    auto request = connection.receive(5s);
    if (request && request->type == protocol::FrameType::kFinish) finish_ = protocol::finishOf(*request);
    connection.send(protocol::pongFrame("fake"));
    connection.close();
  }

  net::Fd listener_;
  std::optional<protocol::Finish> finish_;
  std::thread thread_;
};

TEST(FinishPeersTest, EveryPeerThatAnswersIsToldWithinTheDeadlineWhileOneDoesNot) {
  JobSecretDir secret("ipujob/test/finish/uid-3");
  const remote::Credentials credentials = remote::Credentials::load(secret.path, "");
  const std::uint16_t port = freeLoopbackPort();
  // Its TCP connections are accepted by the kernel, but nobody ever answers TLS on them. It comes first: told
  // one after another, the peers after it would get no time at all.
  net::Fd silent = listenOn("127.0.0.2", port);
  std::vector<std::unique_ptr<FakeAgent>> agents;
  std::vector<std::string> peers = {"127.0.0.2"};
  for (const char* address : {"127.0.0.3", "127.0.0.4", "127.0.0.5"}) {
    agents.push_back(std::make_unique<FakeAgent>(credentials, address, port));
    peers.emplace_back(address);
  }
  const auto started = std::chrono::steady_clock::now();
  const std::vector<std::string> failures =
      runtime::launch::finishPeers(credentials, peers, port, 3, "the launch failed", 2s);
  const auto took = std::chrono::steady_clock::now() - started;
  EXPECT_LT(took, 3s);
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].rfind("127.0.0.2: ", 0), 0u) << failures[0];
  for (auto& agent : agents) EXPECT_TRUE(agent->told().has_value());
}

TEST(FinishPeersTest, ThePeersHearTheCodeAndTheMessage) {
  JobSecretDir secret("ipujob/test/finish/uid-4");
  const remote::Credentials credentials = remote::Credentials::load(secret.path, "");
  const std::uint16_t port = freeLoopbackPort();
  FakeAgent first(credentials, "127.0.0.6", port);
  FakeAgent second(credentials, "127.0.0.7", port);
  EXPECT_TRUE(
      runtime::launch::finishPeers(credentials, {"127.0.0.6", "127.0.0.7"}, port, 3, "the launch failed", 5s)
          .empty());
  for (FakeAgent* agent : {&first, &second}) {
    std::optional<protocol::Finish> finish = agent->told();
    ASSERT_TRUE(finish.has_value());
    EXPECT_EQ(finish->code, 3);
    EXPECT_EQ(finish->message, "the launch failed");
  }
}

}  // namespace
}  // namespace ipu::testing
