#include "process/spawn.h"

#include <cstdio>

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace ipu::runtime::process {
namespace {

ExitStatus waitFor(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return exitStatusFrom(status);
}

TEST(SpawnTest, TheChildSeesTheOverriddenEnvironmentAndItsExitCodeComesBack) {
  SpawnOptions options;
  options.environment = {{"IPU_SPAWN_TEST", "value"}};
  pid_t pid = spawn({"/bin/sh", "-c", "test \"$IPU_SPAWN_TEST\" = value && exit 7"}, options);
  EXPECT_EQ(waitFor(pid), (ExitStatus{7, 0}));
}

TEST(SpawnTest, ASignalledChildReportsTheShellCode) {
  pid_t pid = spawn({"/bin/sh", "-c", "kill -KILL $$"});
  EXPECT_EQ(waitFor(pid), (ExitStatus{137, 9}));
}

TEST(SpawnTest, AMissingCommandIsAnErrorWithTheShellsCodeNotAChildThatExited) {
  try {
    spawn({"/nonexistent/program", "arg"});
    FAIL() << "no error";
  } catch (const SpawnError& error) {
    EXPECT_EQ(error.exitCode, 127);
    EXPECT_STREQ(error.what(), "cannot run /nonexistent/program: No such file or directory");
  }
  std::string plainFile = testing::TempDir() + "/not-executable";
  FILE* file = std::fopen(plainFile.c_str(), "w");
  std::fclose(file);
  try {
    spawn({plainFile});
    FAIL() << "no error";
  } catch (const SpawnError& error) {
    EXPECT_EQ(error.exitCode, 126);
  }
  EXPECT_THROW(spawn({}), SpawnError);
}

TEST(SpawnTest, OnPathFindsExecutablesOnly) {
  EXPECT_TRUE(onPath("sh"));
  EXPECT_TRUE(onPath("/bin/sh"));
  std::string plainFile = testing::TempDir() + "/not-executable-either";
  FILE* file = std::fopen(plainFile.c_str(), "w");
  std::fclose(file);
  chmod(plainFile.c_str(), 0644);
  EXPECT_FALSE(onPath(plainFile));
  EXPECT_FALSE(onPath("ipu-runtime-no-such-program"));
}

}  // namespace
}  // namespace ipu::runtime::process
