#include "launch/finish_peers.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

namespace ipu::runtime::launch {
namespace {

using Clock = std::chrono::steady_clock;
// Telling a peer is a connection and two small frames: this many at once reach a large instance's workers
// within the deadline without a thread per worker.
constexpr std::size_t kConcurrentFinishes = 32;

std::chrono::milliseconds leftUntil(Clock::time_point deadline) {
  return std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
}

void finishOne(const remote::Credentials& credentials, const std::string& host, int agentPort,
               const protocol::Frame& finish, Clock::time_point deadline) {
  if (leftUntil(deadline) <= std::chrono::milliseconds::zero())
    throw protocol::ProtocolError("no time was left to tell it");
  remote::Connection connection = remote::connectToAgent(credentials, host, agentPort, leftUntil(deadline));
  connection.send(finish);
  connection.receive(std::max(leftUntil(deadline), std::chrono::milliseconds(1)));
  connection.close();
}

}  // namespace

std::vector<std::string> finishPeers(const remote::Credentials& credentials,
                                     const std::vector<std::string>& peers, int agentPort, int code,
                                     const std::string& message, std::chrono::milliseconds within) {
  const Clock::time_point deadline = Clock::now() + within;
  const protocol::Frame finish = protocol::finishFrame(code, message);
  std::atomic<std::size_t> next = 0;
  std::mutex failuresLock;
  std::vector<std::string> failures;
  auto tellPeers = [&] {
    for (std::size_t index; (index = next++) < peers.size();) {
      try {
        finishOne(credentials, peers[index], agentPort, finish, deadline);
      } catch (const std::exception& error) {
        std::lock_guard lock(failuresLock);
        failures.push_back(peers[index] + ": " + error.what());
      }
    }
  };
  {
    std::vector<std::jthread> tellers;
    for (std::size_t i = 0; i < std::min(peers.size(), kConcurrentFinishes); ++i)
      tellers.emplace_back(tellPeers);
  }
  return failures;
}

}  // namespace ipu::runtime::launch
