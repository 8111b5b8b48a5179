#include "protocol/frame.h"

#include <csignal>

#include <gtest/gtest.h>

namespace ipu::runtime::protocol {
namespace {

std::string header(std::uint32_t length, std::uint8_t type) {
  std::string bytes;
  for (int shift = 24; shift >= 0; shift -= 8) bytes.push_back(static_cast<char>((length >> shift) & 0xffu));
  bytes.push_back(static_cast<char>(type));
  return bytes;
}

std::vector<Frame> readAll(const std::string& bytes) {
  FrameReader reader;
  reader.feed(bytes);
  std::vector<Frame> frames;
  while (auto frame = reader.next()) frames.push_back(*frame);
  reader.finish();
  return frames;
}

TEST(FrameTest, EveryFrameRoundTrips) {
  std::vector<Frame> frames = {pingFrame(),
                               pongFrame("job-worker-1"),
                               runFrame("orted -mca ess \"env\""),
                               stdinFrame("in"),
                               stdinCloseFrame(),
                               outputFrame(FrameType::kStdout, "out"),
                               outputFrame(FrameType::kStderr, std::string("e\0rr", 4)),
                               signalFrame(SIGTERM),
                               exitFrame({3, 0}),
                               finishFrame(0),
                               finishFrame(3, "instance 0 (w0): mpirun exited with code 3"),
                               errorFrame("refused")};
  std::string wire;
  for (const auto& frame : frames) wire += encode(frame);
  EXPECT_EQ(readAll(wire), frames);
}

TEST(FrameTest, TheHeaderIsALengthThenAType) {
  EXPECT_EQ(encode(runFrame("ab")), header(2, 3) + "ab");
  EXPECT_EQ(encode(pingFrame()), header(0, 1));
}

TEST(FrameTest, FramesArriveInAnyChunking) {
  std::string wire =
      encode(runFrame("hostname")) + encode(stdinFrame(std::string(100'000, 'x'))) + encode(pingFrame());
  FrameReader reader;
  std::vector<Frame> frames;
  for (char byte : wire) {
    reader.feed(std::string(1, byte));
    while (auto frame = reader.next()) frames.push_back(*frame);
  }
  reader.finish();
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_EQ(frames[1].payload.size(), 100'000u);
  EXPECT_EQ(frames[2].type, FrameType::kPing);
}

TEST(FrameTest, AnUnknownTypeIsAnErrorAsSoonAsTheHeaderArrives) {
  FrameReader reader;
  EXPECT_THROW(reader.feed(header(0, 0)), ProtocolError);
  FrameReader another;
  try {
    another.feed(header(4, 200));
    FAIL() << "no error";
  } catch (const ProtocolError& error) {
    EXPECT_STREQ(error.what(), "unknown frame type 200");
  }
}

TEST(FrameTest, AnOversizedLengthIsRefusedBeforeItsPayloadIsRead) {
  FrameReader reader;
  try {
    reader.feed(header(0xffffffffu, 6));
    FAIL() << "no error";
  } catch (const ProtocolError& error) {
    EXPECT_STREQ(error.what(), "frame of 4294967295 bytes exceeds the limit of 1048576");
  }
  FrameReader atLimit;
  EXPECT_NO_THROW(atLimit.feed(header(kMaxPayload, 6)));
  FrameReader overLimit;
  EXPECT_THROW(overLimit.feed(header(kMaxPayload + 1, 6)), ProtocolError);
  EXPECT_THROW(encode(stdinFrame(std::string(kMaxPayload + 1, 'x'))), ProtocolError);
}

TEST(FrameTest, AConnectionEndingInsideAFrameIsTruncatedNotAHang) {
  std::string wire = encode(runFrame("hostname"));
  for (std::size_t cut = 1; cut < wire.size(); ++cut) {
    FrameReader reader;
    reader.feed(wire.substr(0, cut));
    EXPECT_EQ(reader.next(), std::nullopt) << cut;
    EXPECT_THROW(reader.finish(), ProtocolError) << cut;
  }
  FrameReader whole;
  whole.feed(wire);
  ASSERT_TRUE(whole.next());
  EXPECT_NO_THROW(whole.finish());
}

TEST(FrameTest, PayloadsThatDoNotFitTheirTypeAreErrors) {
  EXPECT_EQ(signalOf(signalFrame(SIGINT)), SIGINT);
  EXPECT_THROW(signalOf(signalFrame(SIGSEGV)), ProtocolError);  // a peer may not crash our processes
  EXPECT_THROW(signalOf(Frame{FrameType::kSignal, "abc"}), ProtocolError);
  EXPECT_THROW(signalOf(pingFrame()), ProtocolError);

  EXPECT_EQ(exitStatusOf(exitFrame({137, 9})), (ExitStatus{137, 9}));
  EXPECT_THROW(exitStatusOf(exitFrame({256, 0})), ProtocolError);
  EXPECT_THROW(exitStatusOf(exitFrame({-1, 0})), ProtocolError);
  EXPECT_THROW(exitStatusOf(Frame{FrameType::kExit, "1234567"}), ProtocolError);

  EXPECT_EQ(finishOf(finishFrame(3)).code, 3);
  EXPECT_EQ(finishOf(finishFrame(3, "mpirun\nexited")).message, "mpirun?exited");
  EXPECT_THROW(finishOf(finishFrame(300)), ProtocolError);
  EXPECT_THROW(finishOf(Frame{FrameType::kFinish, "abc"}), ProtocolError);
  EXPECT_THROW(finishOf(Frame{FrameType::kFinish, std::string(5000, 'x')}), ProtocolError);

  EXPECT_EQ(commandLineOf(runFrame("echo hi")), "echo hi");
  EXPECT_THROW(commandLineOf(runFrame("")), ProtocolError);
  EXPECT_THROW(commandLineOf(runFrame(std::string("echo\0hi", 7))), ProtocolError);

  EXPECT_EQ(textOf(errorFrame("bad\x1b[31m\nthing")), "bad?[31m?thing");
  EXPECT_THROW(textOf(Frame{FrameType::kPong, std::string(5000, 'x')}), ProtocolError);
  EXPECT_THROW(textOf(stdinFrame("x")), ProtocolError);
  EXPECT_THROW(outputFrame(FrameType::kStdin, "x"), ProtocolError);
}

}  // namespace
}  // namespace ipu::runtime::protocol
