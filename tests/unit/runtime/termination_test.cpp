#include "process/termination.h"

#include <csignal>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

namespace ipu::runtime::process {
namespace {

using std::chrono::milliseconds;

TEST(TerminationTest, TheMessageNamesTheInstanceTheWorkerAndTheOutcome) {
  EXPECT_EQ(terminationMessage({"job-worker-0", "0", "python3 train.py", {3, 0}, milliseconds(12'400), ""}),
            "instance 0 (job-worker-0): python3 train.py exited with code 3 after 12.4 s");
  EXPECT_EQ(
      terminationMessage({"job-worker-2", "1", "mpirun", {137, SIGKILL}, milliseconds(3'000), "peer lost"}),
      "instance 1 (job-worker-2): mpirun killed by signal 9 (SIGKILL) after 3.0 s: peer lost");
  EXPECT_EQ(terminationMessage({"w", "0", "true", {0, 0}, milliseconds(50), ""}),
            "instance 0 (w): true succeeded after 0.1 s");
  EXPECT_EQ(
      terminationMessage({"", "", "", {127, 0}, milliseconds(0), "cannot run x: No such file or directory"}),
      "instance ?: command exited with code 127 after 0.0 s: cannot run x: No such file or directory");
}

TEST(TerminationTest, LongCommandsAndDetailsAreCut) {
  std::string message =
      terminationMessage({"w", "0", std::string(5000, 'c'), {1, 0}, milliseconds(1), std::string(5000, 'd')});
  EXPECT_EQ(message.size(), kMaxTerminationMessage);
  EXPECT_NE(message.find(std::string(197, 'c') + "... exited with code 1"), std::string::npos);
  EXPECT_EQ(message.substr(message.size() - 3), "...");
}

TEST(TerminationTest, TheMessageIsWrittenWhereTheContainerSaysAndAMissingPathIsNoError) {
  std::string path = testing::TempDir() + "/termination-log";
  writeTerminationMessage(path, "instance 0: done");
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "instance 0: done\n");
  EXPECT_NO_THROW(writeTerminationMessage("/nonexistent-dir/termination-log", "x"));
  EXPECT_NO_THROW(writeTerminationMessage("", "x"));
}

}  // namespace
}  // namespace ipu::runtime::process
