#include "remote/agent_session.h"

#include <gtest/gtest.h>

#include "protocol/frame.h"

namespace ipu::runtime::remote {
namespace {

using namespace std::chrono_literals;
using Kind = AgentSession::Verdict::Kind;
using Clock = AgentSession::Clock;

const Clock::time_point kStart{};
const Clock::time_point kDeadline = kStart + 10s;

std::span<const std::byte> bytesOf(const std::string& text) {
  return std::as_bytes(std::span(text));
}

AgentSession authenticated() {
  AgentSession session("worker-1", kDeadline);
  session.handshakeDone();
  return session;
}

TEST(AgentSessionTest, APingIsAnsweredWithAPongNamingTheHost) {
  AgentSession session = authenticated();
  AgentSession::Verdict verdict = session.received(bytesOf(protocol::encode(protocol::pingFrame())));
  EXPECT_EQ(verdict.kind, Kind::kAnswer);
  EXPECT_EQ(verdict.reply, protocol::encode(protocol::pongFrame("worker-1")));
  EXPECT_EQ(session.phase(), AgentSession::Phase::kEnded);
}

TEST(AgentSessionTest, NothingIsDecidedBeforeTheWholeRequestArrivedByteByByte) {
  AgentSession session = authenticated();
  const std::string run = protocol::encode(protocol::runFrame("hostname"));
  const std::string stdinAfter = protocol::encode(protocol::stdinFrame("y\n"));
  for (std::size_t i = 0; i + 1 < run.size(); ++i)
    EXPECT_EQ(session.received(bytesOf(run.substr(i, 1))).kind, Kind::kWait) << i;
  AgentSession::Verdict verdict = session.received(bytesOf(run.substr(run.size() - 1) + stdinAfter));
  EXPECT_EQ(verdict.kind, Kind::kRun);
  EXPECT_EQ(verdict.commandLine, "hostname");
  // What came after the request is the command's, for the relay that serves it.
  EXPECT_EQ(session.reader().next(), protocol::stdinFrame("y\n"));
}

TEST(AgentSessionTest, AFinishCarriesTheCodeAndTheLaunchsMessageAndIsAnswered) {
  AgentSession session = authenticated();
  AgentSession::Verdict verdict =
      session.received(bytesOf(protocol::encode(protocol::finishFrame(3, "the launch failed"))));
  EXPECT_EQ(verdict.kind, Kind::kFinish);
  EXPECT_EQ(verdict.finish.code, 3);
  EXPECT_EQ(verdict.finish.message, "the launch failed");
  EXPECT_EQ(verdict.reply, protocol::encode(protocol::pongFrame("worker-1")));
}

TEST(AgentSessionTest, ARequestTheAgentDoesNotServeIsAnsweredWithAnError) {
  AgentSession session = authenticated();
  AgentSession::Verdict verdict = session.received(bytesOf(protocol::encode(protocol::signalFrame(15))));
  EXPECT_EQ(verdict.kind, Kind::kAnswer);
  EXPECT_EQ(verdict.reply, protocol::encode(protocol::errorFrame("unexpected Signal request")));
  EXPECT_EQ(verdict.reason, "refused a Signal request");
}

TEST(AgentSessionTest, MalformedOrCutRequestsDropTheConnection) {
  AgentSession unknown = authenticated();
  AgentSession::Verdict verdict = unknown.received(bytesOf(std::string("\x00\x00\x00\x01\x63x", 6)));
  EXPECT_EQ(verdict.kind, Kind::kDrop);
  EXPECT_EQ(verdict.reason, "unknown frame type 99");

  AgentSession cut = authenticated();
  EXPECT_EQ(cut.received(bytesOf(std::string("\x00\x00\x00\x10\x03short", 10))).kind, Kind::kWait);
  verdict = cut.peerClosed("");
  EXPECT_EQ(verdict.kind, Kind::kDrop);
  EXPECT_EQ(verdict.reason, "connection closed inside a frame");
}

TEST(AgentSessionTest, TheDeadlineEndsAnUnfinishedHandshakeAsRefusedAndASilentPeerAsDropped) {
  AgentSession handshaking("worker-1", kDeadline);
  EXPECT_EQ(handshaking.timePassed(kDeadline - 1ms).kind, Kind::kWait);
  EXPECT_EQ(handshaking.timePassed(kDeadline).kind, Kind::kRefuse);

  AgentSession silent = authenticated();
  EXPECT_EQ(silent.received(bytesOf(std::string("\x00\x00", 2))).kind, Kind::kWait);
  EXPECT_EQ(silent.timePassed(kDeadline).kind, Kind::kDrop);
  EXPECT_EQ(silent.timePassed(kDeadline + 1s).kind, Kind::kWait);  // one verdict, then nothing
}

TEST(AgentSessionTest, AFailedHandshakeIsRefusedWithItsReasonAndNothingAfterCounts) {
  AgentSession session("worker-1", kDeadline);
  AgentSession::Verdict verdict = session.handshakeFailed("peer certificate was issued for x, not for y");
  EXPECT_EQ(verdict.kind, Kind::kRefuse);
  EXPECT_EQ(verdict.reason, "peer certificate was issued for x, not for y");
  EXPECT_EQ(session.received(bytesOf(protocol::encode(protocol::pingFrame()))).kind, Kind::kWait);
}

}  // namespace
}  // namespace ipu::runtime::remote
