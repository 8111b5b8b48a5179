#include "protocol/frame.h"

#include <csignal>

namespace ipu::runtime::protocol {
namespace {

// Error and Pong texts are shown to users: a peer must not flood a log line.
constexpr std::size_t kMaxText = 4096;

void putU32(std::string& out, std::uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((value >> shift) & 0xffu));
}

std::uint32_t getU32(const std::string& bytes, std::size_t at) {
  std::uint32_t value = 0;
  for (std::size_t i = 0; i < 4; ++i) value = (value << 8) | static_cast<std::uint8_t>(bytes[at + i]);
  return value;
}

bool knownType(std::uint8_t type) {
  return type >= static_cast<std::uint8_t>(FrameType::kPing) &&
         type <= static_cast<std::uint8_t>(FrameType::kError);
}

bool allowedSignal(int signal) {
  return signal == SIGTERM || signal == SIGINT || signal == SIGHUP || signal == SIGQUIT ||
         signal == SIGKILL || signal == SIGUSR1 || signal == SIGUSR2;
}

void expectType(const Frame& frame, FrameType type) {
  if (frame.type != type)
    throw ProtocolError("expected a " + describe(type) + " frame, got " + describe(frame.type));
}

void expectSize(const Frame& frame, std::size_t size) {
  if (frame.payload.size() != size)
    throw ProtocolError(describe(frame.type) + " frame of " + std::to_string(frame.payload.size()) +
                        " bytes (expected " + std::to_string(size) + ")");
}

// Text a peer sent, safe for a log line: control characters become '?'.
std::string printable(const std::string& text) {
  std::string safe;
  for (char c : text) safe.push_back(static_cast<unsigned char>(c) < 0x20 && c != '\t' ? '?' : c);
  return safe;
}

std::string i32Payload(std::int32_t value) {
  std::string out;
  putU32(out, static_cast<std::uint32_t>(value));
  return out;
}

std::int32_t i32At(const std::string& payload, std::size_t at) {
  return static_cast<std::int32_t>(getU32(payload, at));
}

}  // namespace

std::string describe(FrameType type) {
  switch (type) {
    case FrameType::kPing:
      return "Ping";
    case FrameType::kPong:
      return "Pong";
    case FrameType::kRun:
      return "Run";
    case FrameType::kStdin:
      return "Stdin";
    case FrameType::kStdinClose:
      return "StdinClose";
    case FrameType::kStdout:
      return "Stdout";
    case FrameType::kStderr:
      return "Stderr";
    case FrameType::kSignal:
      return "Signal";
    case FrameType::kExit:
      return "Exit";
    case FrameType::kFinish:
      return "Finish";
    case FrameType::kError:
      return "Error";
  }
  return "type " + std::to_string(static_cast<int>(type));
}

std::string encode(const Frame& frame) {
  if (frame.payload.size() > kMaxPayload)
    throw ProtocolError(describe(frame.type) + " payload of " + std::to_string(frame.payload.size()) +
                        " bytes exceeds the limit of " + std::to_string(kMaxPayload));
  std::string out;
  out.reserve(kHeaderSize + frame.payload.size());
  putU32(out, static_cast<std::uint32_t>(frame.payload.size()));
  out.push_back(static_cast<char>(frame.type));
  out += frame.payload;
  return out;
}

Frame pingFrame() {
  return {FrameType::kPing, ""};
}
Frame pongFrame(const std::string& hostName) {
  return {FrameType::kPong, hostName.substr(0, kMaxText)};
}
Frame runFrame(const std::string& commandLine) {
  return {FrameType::kRun, commandLine};
}
Frame stdinFrame(std::string bytes) {
  return {FrameType::kStdin, std::move(bytes)};
}
Frame stdinCloseFrame() {
  return {FrameType::kStdinClose, ""};
}
Frame signalFrame(int signal) {
  return {FrameType::kSignal, i32Payload(signal)};
}
Frame finishFrame(int exitCode, const std::string& message) {
  return {FrameType::kFinish, i32Payload(exitCode) + message.substr(0, kMaxText)};
}
Frame errorFrame(const std::string& message) {
  return {FrameType::kError, message.substr(0, kMaxText)};
}

Frame outputFrame(FrameType stream, std::string bytes) {
  if (stream != FrameType::kStdout && stream != FrameType::kStderr)
    throw ProtocolError("output goes to Stdout or Stderr, not " + describe(stream));
  return {stream, std::move(bytes)};
}

Frame exitFrame(ExitStatus status) {
  return {FrameType::kExit, i32Payload(status.code) + i32Payload(status.signal)};
}

int signalOf(const Frame& frame) {
  expectType(frame, FrameType::kSignal);
  expectSize(frame, 4);
  int signal = i32At(frame.payload, 0);
  if (!allowedSignal(signal))
    throw ProtocolError("signal " + std::to_string(signal) + " may not be sent to an agent");
  return signal;
}

ExitStatus exitStatusOf(const Frame& frame) {
  expectType(frame, FrameType::kExit);
  expectSize(frame, 8);
  ExitStatus status{i32At(frame.payload, 0), i32At(frame.payload, 4)};
  if (status.code < 0 || status.code > 255 || status.signal < 0 || status.signal > 64)
    throw ProtocolError("exit status out of range: code " + std::to_string(status.code) + ", signal " +
                        std::to_string(status.signal));
  return status;
}

Finish finishOf(const Frame& frame) {
  expectType(frame, FrameType::kFinish);
  if (frame.payload.size() < 4 || frame.payload.size() > 4 + kMaxText)
    throw ProtocolError("Finish frame of " + std::to_string(frame.payload.size()) + " bytes (expected 4 to " +
                        std::to_string(4 + kMaxText) + ")");
  int code = i32At(frame.payload, 0);
  if (code < 0 || code > 255)
    throw ProtocolError("exit code " + std::to_string(code) + " out of range 0-255");
  return {code, printable(frame.payload.substr(4))};
}

std::string commandLineOf(const Frame& frame) {
  expectType(frame, FrameType::kRun);
  if (frame.payload.empty()) throw ProtocolError("Run frame with an empty command line");
  if (frame.payload.find('\0') != std::string::npos)
    throw ProtocolError("Run frame with a NUL in its command line");
  return frame.payload;
}

std::string textOf(const Frame& frame) {
  if (frame.type != FrameType::kPong && frame.type != FrameType::kError)
    throw ProtocolError("expected a Pong or Error frame, got " + describe(frame.type));
  if (frame.payload.size() > kMaxText) throw ProtocolError(describe(frame.type) + " text too long");
  return printable(frame.payload);
}

void FrameReader::feed(std::span<const std::byte> bytes) {
  if (consumed_ > 0 && consumed_ == buffer_.size()) {
    buffer_.clear();
    consumed_ = 0;
  }
  buffer_.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  checkHeader();
}

void FrameReader::feed(const std::string& bytes) {
  feed(std::as_bytes(std::span(bytes.data(), bytes.size())));
}

void FrameReader::checkHeader() const {
  if (buffer_.size() - consumed_ < kHeaderSize) return;
  std::uint32_t length = getU32(buffer_, consumed_);
  auto type = static_cast<std::uint8_t>(buffer_[consumed_ + 4]);
  if (!knownType(type)) throw ProtocolError("unknown frame type " + std::to_string(type));
  if (length > kMaxPayload)
    throw ProtocolError("frame of " + std::to_string(length) + " bytes exceeds the limit of " +
                        std::to_string(kMaxPayload));
}

std::optional<Frame> FrameReader::next() {
  std::size_t available = buffer_.size() - consumed_;
  if (available < kHeaderSize) return std::nullopt;
  std::uint32_t length = getU32(buffer_, consumed_);
  if (available < kHeaderSize + length) return std::nullopt;
  Frame frame{static_cast<FrameType>(buffer_[consumed_ + 4]),
              buffer_.substr(consumed_ + kHeaderSize, length)};
  consumed_ += kHeaderSize + length;
  // Drop what was handed out once it is most of the buffer, so a long stream does not grow it.
  if (consumed_ > 64 * 1024 && consumed_ * 2 > buffer_.size()) {
    buffer_.erase(0, consumed_);
    consumed_ = 0;
  }
  checkHeader();
  return frame;
}

void FrameReader::finish() const {
  if (midFrame())
    throw ProtocolError("connection closed inside a frame (" + std::to_string(buffer_.size() - consumed_) +
                        " bytes of an unfinished frame)");
}

}  // namespace ipu::runtime::protocol
