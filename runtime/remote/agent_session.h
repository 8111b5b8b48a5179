#pragma once

#include <chrono>
#include <cstddef>
#include <span>
#include <string>

#include "protocol/frame.h"

namespace ipu::runtime::remote {

// What the agent does with one connection from its accept until the peer is authenticated and has said what
// it wants: a pure state machine over events (the TLS handshake's outcome, decrypted bytes, the peer's close,
// time passing), with no socket, process or clock of its own. The agent's poll loop drives one per
// connection; the agent_session fuzzer drives it with arbitrary events.
//
// It ends with exactly one verdict other than kWait; after that every event gets kWait and changes nothing.
// No verdict is a decision (kAnswer, kFinish, kRun) before a whole valid request frame has arrived; every
// connection ends at its deadline at the latest.
class AgentSession {
 public:
  using Clock = std::chrono::steady_clock;
  enum class Phase { kHandshake, kRequest, kEnded };

  struct Verdict {
    enum class Kind {
      kWait,    // nothing to do yet
      kAnswer,  // send `reply`, then close (a Ping's Pong, an Error for a request the agent does not serve)
      kFinish,  // send `reply` (Pong), close, then end the agent as `finish` says
      kRun,     // serve `commandLine` on this connection
      kRefuse,  // close: the peer never authenticated (handshake failed or timed out); counted as refused
      kDrop,    // close: an authenticated peer broke the protocol, left, or asked nothing in time
    };
    Kind kind = Kind::kWait;
    std::string reply;
    protocol::Finish finish;
    std::string commandLine;
    std::string
        reason;  // why it was refused or dropped, or what was refused in words (kAnswer); may be empty
  };

  // `hostName`: what a Pong says; `deadline`: when the handshake and the request must both be done.
  AgentSession(std::string hostName, Clock::time_point deadline);

  Verdict handshakeDone();
  Verdict handshakeFailed(const std::string& why);
  Verdict received(std::span<const std::byte> bytes);
  // `why` empty: a clean close (close_notify); otherwise the read error.
  Verdict peerClosed(const std::string& why);
  Verdict timePassed(Clock::time_point now);

  Phase phase() const { return phase_; }
  Clock::time_point deadline() const { return deadline_; }
  // After kRun: the bytes that came after the request (the command's first Stdin frames, …).
  protocol::FrameReader& reader() { return reader_; }

 private:
  Verdict end(Verdict verdict);
  Verdict decide(const protocol::Frame& request);

  std::string hostName_;
  Clock::time_point deadline_;
  Phase phase_ = Phase::kHandshake;
  protocol::FrameReader reader_;
};

}  // namespace ipu::runtime::remote
