#include "remote/agent_session.h"

#include <utility>

#include "process/termination.h"

namespace ipu::runtime::remote {

using Kind = AgentSession::Verdict::Kind;

AgentSession::AgentSession(std::string hostName, Clock::time_point deadline)
    : hostName_(std::move(hostName)), deadline_(deadline) {}

AgentSession::Verdict AgentSession::end(Verdict verdict) {
  phase_ = Phase::kEnded;
  return verdict;
}

AgentSession::Verdict AgentSession::handshakeDone() {
  if (phase_ == Phase::kHandshake) phase_ = Phase::kRequest;
  return {};
}

AgentSession::Verdict AgentSession::handshakeFailed(const std::string& why) {
  if (phase_ != Phase::kHandshake) return {};
  return end({.kind = Kind::kRefuse, .reason = why});
}

AgentSession::Verdict AgentSession::received(std::span<const std::byte> bytes) {
  if (phase_ == Phase::kHandshake) return end({.kind = Kind::kRefuse, .reason = "data before the handshake"});
  if (phase_ != Phase::kRequest) return {};
  try {
    reader_.feed(bytes);
    if (auto request = reader_.next()) return end(decide(*request));
  } catch (const protocol::ProtocolError& error) {
    return end({.kind = Kind::kDrop, .reason = error.what()});
  }
  return {};
}

AgentSession::Verdict AgentSession::peerClosed(const std::string& why) {
  switch (phase_) {
    case Phase::kHandshake:
      return end({.kind = Kind::kRefuse, .reason = why.empty() ? "the peer closed the connection" : why});
    case Phase::kRequest:
      if (why.empty() && reader_.midFrame())
        return end({.kind = Kind::kDrop, .reason = "connection closed inside a frame"});
      return end(
          {.kind = Kind::kDrop, .reason = why});  // empty: asked nothing and left, as a port check does
    case Phase::kEnded:
      break;
  }
  return {};
}

AgentSession::Verdict AgentSession::timePassed(Clock::time_point now) {
  if (now < deadline_) return {};
  switch (phase_) {
    case Phase::kHandshake:
      return end({.kind = Kind::kRefuse, .reason = "no TLS handshake in time"});
    case Phase::kRequest:
      return end({.kind = Kind::kDrop, .reason = "no request in time"});
    case Phase::kEnded:
      break;
  }
  return {};
}

AgentSession::Verdict AgentSession::decide(const protocol::Frame& request) {
  switch (request.type) {
    case protocol::FrameType::kPing:
      return {.kind = Kind::kAnswer, .reply = protocol::encode(protocol::pongFrame(hostName_))};
    case protocol::FrameType::kFinish: {
      protocol::Finish finish = protocol::finishOf(request);
      finish.message = finish.message.substr(0, process::kMaxTerminationMessage);
      return {
          .kind = Kind::kFinish, .reply = protocol::encode(protocol::pongFrame(hostName_)), .finish = finish};
    }
    case protocol::FrameType::kRun:
      return {.kind = Kind::kRun, .commandLine = protocol::commandLineOf(request)};
    default:
      return {.kind = Kind::kAnswer,
              .reply = protocol::encode(
                  protocol::errorFrame("unexpected " + protocol::describe(request.type) + " request")),
              .reason = "refused a " + protocol::describe(request.type) + " request"};
  }
}

}  // namespace ipu::runtime::remote
