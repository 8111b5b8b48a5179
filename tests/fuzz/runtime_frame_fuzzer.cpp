// The runtime's wire protocol (runtime/protocol/frame.h): the input is the byte stream a peer sends, fed to a
// FrameReader whole and in chunks (the first byte picks their size).
// Checks: a bad stream is refused with ProtocolError only; chunking changes nothing but whether the frame
// just before a refused header is handed out; every frame re-encodes to exactly the bytes it was read from;
// finish() refuses exactly when bytes of an unfinished frame are left; a payload reader that accepts a frame
// gives a value that the matching builder turns back into that frame (Signal, Exit, Run) or into one the
// reader reads the same (Finish, Pong, Error). The other way round: a frame made from the input (type byte,
// then payload) decodes to itself when its type is known, and is refused when it is not.
#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "fuzz_check.h"
#include "protocol/frame.h"

namespace {

using namespace ipu::runtime::protocol;

struct Decoded {
  std::vector<Frame> frames;
  bool refused = false;
  std::size_t consumed = 0;  // bytes of the frames handed out
  bool finishRefused = false;
};

// Feeds `bytes` in chunks of `chunk` bytes (all at once for 0), taking every frame out after each feed.
Decoded decode(const std::string& bytes, std::size_t chunk) {
  Decoded out;
  FrameReader reader;
  const std::size_t step = chunk == 0 ? bytes.size() : chunk;
  try {
    for (std::size_t at = 0; at < bytes.size(); at += step) {
      reader.feed(bytes.substr(at, step));
      while (auto frame = reader.next()) {
        out.consumed += kHeaderSize + frame->payload.size();
        out.frames.push_back(std::move(*frame));
      }
    }
  } catch (const ProtocolError&) {
    out.refused = true;
    return out;
  }
  try {
    reader.finish();
  } catch (const ProtocolError&) {
    out.finishRefused = true;
  }
  FUZZ_CHECK(out.finishRefused == reader.midFrame());
  return out;
}

bool isPrefix(const std::vector<Frame>& shorter, const std::vector<Frame>& longer) {
  if (shorter.size() > longer.size()) return false;
  for (std::size_t i = 0; i < shorter.size(); ++i) {
    if (!(shorter[i] == longer[i])) return false;
  }
  return true;
}

// What each payload reader accepts, it can give back.
void checkPayloadReaders(const Frame& frame) {
  try {
    FUZZ_CHECK(signalFrame(signalOf(frame)) == frame);
  } catch (const ProtocolError&) {
  }
  try {
    FUZZ_CHECK(exitFrame(exitStatusOf(frame)) == frame);
  } catch (const ProtocolError&) {
  }
  try {
    FUZZ_CHECK(runFrame(commandLineOf(frame)) == frame);
  } catch (const ProtocolError&) {
  }
  try {
    Finish finish = finishOf(frame);
    Finish again = finishOf(finishFrame(finish.code, finish.message));
    FUZZ_CHECK(again.code == finish.code && again.message == finish.message);
    FUZZ_CHECK(finish.message.size() + 4 == frame.payload.size());
  } catch (const ProtocolError&) {
  }
  try {
    std::string text = textOf(frame);
    FUZZ_CHECK(text.size() == frame.payload.size());
    FUZZ_CHECK(textOf(pongFrame(text)) == text && textOf(errorFrame(text)) == text);
  } catch (const ProtocolError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t chunk = 1 + data[0] % 16;
  const std::string stream(reinterpret_cast<const char*>(data) + 1, size - 1);

  const Decoded whole = decode(stream, 0);
  const Decoded chunked = decode(stream, chunk);
  FUZZ_CHECK(whole.refused == chunked.refused);
  if (whole.refused) {
    // The frame before a refused header is handed out only if the header had not yet arrived.
    const auto& [shorter, longer] = whole.frames.size() <= chunked.frames.size()
                                        ? std::tie(whole.frames, chunked.frames)
                                        : std::tie(chunked.frames, whole.frames);
    FUZZ_CHECK(isPrefix(shorter, longer) && longer.size() - shorter.size() <= 1);
  } else {
    FUZZ_CHECK(whole.frames == chunked.frames);
    FUZZ_CHECK(whole.finishRefused == chunked.finishRefused);
    FUZZ_CHECK(whole.finishRefused == (whole.consumed < stream.size()));
  }

  std::size_t at = 0;
  for (const Frame& frame : whole.frames) {
    const std::string bytes = encode(frame);
    FUZZ_CHECK(stream.compare(at, bytes.size(), bytes) == 0);
    at += bytes.size();
    checkPayloadReaders(frame);
  }

  // A frame of the input's making: encoded, then read back.
  const Frame made{static_cast<FrameType>(stream.empty() ? 0 : static_cast<std::uint8_t>(stream[0])),
                   stream.empty() ? std::string() : stream.substr(1)};
  const std::string encoded = encode(made);
  const bool known = made.type >= FrameType::kPing && made.type <= FrameType::kError;
  const Decoded read = decode(encoded, chunk);
  FUZZ_CHECK(read.refused == !known);
  if (known) {
    FUZZ_CHECK(read.frames.size() == 1 && read.frames[0] == made && !read.finishRefused);
  }
  return 0;
}
