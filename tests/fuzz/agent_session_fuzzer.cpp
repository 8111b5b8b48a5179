// The agent's per-connection state machine (runtime/remote/agent_session.h), driven by a script of events
// read from the input, one opcode byte each: 0 the handshake succeeded, 1 it failed, 2 <n> <n bytes> bytes
// received, 3 the peer closed cleanly, 4 the peer's connection failed, 5 <t> t×100 ms passed.
// Checks: exactly one verdict other than kWait at most, after which the session is ended and every event is
// a kWait; a refusal only before the handshake succeeded; a decision (answer, finish, run) only after it,
// and only once the bytes received hold a whole valid request frame, the decision being the one that frame
// asks for (an independent FrameReader decodes them); the session's buffer never holds more than one frame's
// worth plus one read; once the deadline has passed, the session has ended.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "fuzz_check.h"
#include "protocol/frame.h"
#include "remote/agent_session.h"

namespace {

using namespace ipu::runtime;
using remote::AgentSession;
using Kind = AgentSession::Verdict::Kind;

constexpr auto kLifetime = std::chrono::seconds(10);
const char* const kHost = "worker-1";

bool isDecision(Kind kind) {
  return kind == Kind::kAnswer || kind == Kind::kFinish || kind == Kind::kRun;
}

// The first frame of `bytes` as the protocol reads it, or nullopt (incomplete, or refused).
std::optional<protocol::Frame> firstFrame(const std::string& bytes) {
  try {
    protocol::FrameReader reader;
    reader.feed(bytes);
    return reader.next();
  } catch (const protocol::ProtocolError&) {
    return std::nullopt;
  }
}

// The decision matches what the request asks for.
void checkDecision(const AgentSession::Verdict& verdict, const protocol::Frame& request) {
  const std::string pong = protocol::encode(protocol::pongFrame(kHost));
  switch (request.type) {
    case protocol::FrameType::kPing:
      FUZZ_CHECK(verdict.kind == Kind::kAnswer && verdict.reply == pong);
      break;
    case protocol::FrameType::kFinish:
      FUZZ_CHECK(verdict.kind == Kind::kFinish && verdict.reply == pong);
      FUZZ_CHECK(verdict.finish.code == protocol::finishOf(request).code);
      break;
    case protocol::FrameType::kRun:
      FUZZ_CHECK(verdict.kind == Kind::kRun && verdict.commandLine == protocol::commandLineOf(request));
      break;
    default:
      FUZZ_CHECK(verdict.kind == Kind::kAnswer && verdict.reply.find("unexpected") != std::string::npos);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const AgentSession::Clock::time_point start{};
  AgentSession session(kHost, start + kLifetime);
  AgentSession::Clock::time_point now = start;
  bool authenticated = false;
  std::string received;  // every byte given to the session since the handshake
  int verdicts = 0;
  std::size_t at = 0;
  auto next = [&]() -> std::uint8_t { return at < size ? data[at++] : 0; };
  while (at < size) {
    const bool endedBefore = session.phase() == AgentSession::Phase::kEnded;
    AgentSession::Verdict verdict;
    std::size_t chunk = 0;
    switch (next() % 6) {
      case 0:
        verdict = session.handshakeDone();
        authenticated = authenticated || !endedBefore;
        break;
      case 1:
        verdict = session.handshakeFailed("handshake failed");
        break;
      case 2: {
        chunk = next();
        const std::size_t take = std::min(chunk, size - at);
        const std::string bytes(reinterpret_cast<const char*>(data + at), take);
        at += take;
        if (authenticated && !endedBefore) received += bytes;
        verdict = session.received(std::as_bytes(std::span(bytes)));
        break;
      }
      case 3:
        verdict = session.peerClosed("");
        break;
      case 4:
        verdict = session.peerClosed("TLS read failed");
        break;
      case 5:
        now += std::chrono::milliseconds(100) * next();
        verdict = session.timePassed(now);
        break;
    }
    if (endedBefore) FUZZ_CHECK(verdict.kind == Kind::kWait);
    if (verdict.kind == Kind::kWait) {
      if (session.phase() == AgentSession::Phase::kRequest)
        FUZZ_CHECK(session.reader().buffered() <= protocol::kHeaderSize + protocol::kMaxPayload + 255);
    } else {
      ++verdicts;
      FUZZ_CHECK(session.phase() == AgentSession::Phase::kEnded);
      if (verdict.kind == Kind::kRefuse) FUZZ_CHECK(!authenticated);
      if (isDecision(verdict.kind)) {
        FUZZ_CHECK(authenticated);
        const std::optional<protocol::Frame> request = firstFrame(received);
        FUZZ_CHECK(request.has_value());
        checkDecision(verdict, *request);
      }
    }
    FUZZ_CHECK(verdicts <= 1);
    if (now >= start + kLifetime) FUZZ_CHECK(session.phase() == AgentSession::Phase::kEnded);
  }
  return 0;
}
