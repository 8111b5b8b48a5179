#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>

#include "process/exit_status.h"

// The wire protocol between `ipu-runtime rsh` (or the launch) and an `ipu-runtime agent`, inside the
// mutual-TLS connection. Every message is one frame:
//
//   u32 payload length (big-endian) | u8 type | payload
//
// A reader that meets an unknown type, a length over kMaxPayload, a payload that does not parse for its type,
// or a connection that ends inside a frame reports a ProtocolError: it never crashes, never allocates what
// the peer claims before it is bounded, and never waits for bytes the peer will not send (a truncated frame
// ends at EOF).
//
// A conversation is one of:
//   client Ping                      → agent Pong(agent's host name)                 (the launch's "are you
//   up") client Run(command line)         → agent Stdout/Stderr…, Exit(code, signal)      (a remote start,
//   ssh-like:
//          Stdin…, StdinClose, Signal(n)                                             run by /bin/sh -c)
//   client Finish(exit code, text)   → agent Pong                                    (the launch ended: the
//   agent
//                                                                                   exits with that code)
//   agent Error(message) in place of any reply when it refuses the request.
namespace ipu::runtime::protocol {

struct ProtocolError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class FrameType : std::uint8_t {
  kPing = 1,
  kPong = 2,
  kRun = 3,
  kStdin = 4,
  kStdinClose = 5,
  kStdout = 6,
  kStderr = 7,
  kSignal = 8,
  kExit = 9,
  kFinish = 10,
  kError = 11,
};

// 1 MiB: far above what a command line or a stdio chunk needs, small enough that a hostile length costs
// nothing.
inline constexpr std::size_t kMaxPayload = 1u << 20;
inline constexpr std::size_t kHeaderSize = 5;

struct Frame {
  FrameType type = FrameType::kPing;
  std::string payload;

  bool operator==(const Frame&) const = default;
};

// How a remote command ended (exit code or signal).
using process::ExitStatus;

// Frame builders: each returns the bytes to send.
std::string encode(const Frame& frame);
Frame pingFrame();
Frame pongFrame(const std::string& hostName);
Frame runFrame(const std::string& commandLine);
Frame stdinFrame(std::string bytes);
Frame stdinCloseFrame();
Frame outputFrame(FrameType stream, std::string bytes);  // kStdout or kStderr
Frame signalFrame(int signal);
Frame exitFrame(ExitStatus status);
// `message`: the launch's own termination message, which the agent's pod then reports too.
Frame finishFrame(int exitCode, const std::string& message = "");
Frame errorFrame(const std::string& message);

// Payload readers: ProtocolError when the payload does not fit its type.
int signalOf(const Frame& frame);  // only signals a peer may send: TERM, INT, HUP, QUIT, KILL, USR1, USR2
ExitStatus exitStatusOf(const Frame& frame);
// How the launch ended, as a Finish frame tells it.
struct Finish {
  int code = 0;  // 0..255
  std::string message;
};
Finish finishOf(const Frame& frame);
std::string commandLineOf(const Frame& frame);  // non-empty, no NUL
std::string textOf(const Frame& frame);         // Pong / Error: printable text, bounded

std::string describe(FrameType type);

// Accumulates bytes as they arrive and hands out whole frames.
class FrameReader {
 public:
  // Appends received bytes. Throws ProtocolError as soon as a header is invalid (unknown type, oversized).
  void feed(std::span<const std::byte> bytes);
  void feed(const std::string& bytes);
  // The next whole frame, if one has arrived.
  std::optional<Frame> next();
  // The peer closed the connection: an error if it did so in the middle of a frame.
  void finish() const;
  bool midFrame() const { return buffer_.size() > consumed_; }
  // Bytes received and not yet handed out as frames.
  std::size_t buffered() const { return buffer_.size() - consumed_; }

 private:
  void checkHeader() const;
  std::string buffer_;  // received, not yet handed out: bytes from `consumed_` on
  std::size_t consumed_ = 0;
};

}  // namespace ipu::runtime::protocol
