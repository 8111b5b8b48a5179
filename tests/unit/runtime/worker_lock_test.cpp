// The lock by which worker 0's retention container learns that the worker's command ended: held by a real
// process, dropped by the kernel when that process dies (SIGKILL included), waited for across processes.
#include "retention/worker_lock.h"

#include <atomic>
#include <csignal>
#include <filesystem>
#include <thread>

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

namespace ipu::runtime::retention {
namespace {

class WorkerLockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("worker-lock-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    lock_ = (dir_ / "worker.lock").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // A child process that takes the lock when told to (forked before the test starts any thread), says so,
  // and then waits to be killed.
  struct Holder {
    pid_t pid = -1;
    int go = -1;
    int ready = -1;
    void takeLock() const {
      const char byte = 'g';
      EXPECT_EQ(::write(go, &byte, 1), 1);
      char answer = 0;
      EXPECT_EQ(::read(ready, &answer, 1), 1);
    }
  };
  Holder holderProcess() {
    int go[2];
    int ready[2];
    EXPECT_EQ(::pipe(go), 0);
    EXPECT_EQ(::pipe(ready), 0);
    const pid_t child = ::fork();
    if (child == 0) {
      char byte = 0;
      if (::read(go[0], &byte, 1) != 1) _exit(2);
      Fd held = holdWorkerLock(lock_);
      if (::write(ready[1], &byte, 1) != 1) _exit(2);
      for (;;) ::pause();
    }
    ::close(go[0]);
    ::close(ready[1]);
    return {child, go[1], ready[0]};
  }

  static void killAndReap(pid_t child) {
    ::kill(child, SIGKILL);
    int status = 0;
    ::waitpid(child, &status, 0);
  }

  std::filesystem::path dir_;
  std::string lock_;
};

TEST_F(WorkerLockTest, HeldWhileTheWorkerLivesFreeOnceItIsKilled) {
  EXPECT_FALSE(workerEnded(lock_)) << "no file yet: the worker has not started";
  const Holder worker = holderProcess();
  worker.takeLock();
  EXPECT_FALSE(workerEnded(lock_));
  EXPECT_FALSE(workerEnded(lock_)) << "a probe must not take the lock for good";
  killAndReap(worker.pid);
  EXPECT_TRUE(workerEnded(lock_)) << "SIGKILL leaves no chance to write a marker; the kernel drops the lock";
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir_), {}), 1) << "no partial file left";
}

TEST_F(WorkerLockTest, AWaiterStartedBeforeTheWorkerWakesOnlyAfterItsEnd) {
  const Holder worker = holderProcess();
  std::atomic<bool> woke = false;
  std::thread waiter([&] {
    awaitWorkerEnd(lock_);
    woke = true;
  });
  // The waiter watches for the file, which appears (renamed into place already locked) only now; it then
  // blocks on the lock until the kill.
  worker.takeLock();
  EXPECT_FALSE(workerEnded(lock_));
  EXPECT_FALSE(woke.load());
  killAndReap(worker.pid);
  waiter.join();
  EXPECT_TRUE(woke.load());
}

TEST_F(WorkerLockTest, TheCommandsProcessesDoNotInheritTheLock) {
  Fd held = holdWorkerLock(lock_);
  const int flags = ::fcntl(held.get(), F_GETFD);
  EXPECT_TRUE(flags & FD_CLOEXEC);
  held.reset();
  EXPECT_TRUE(workerEnded(lock_));
}

}  // namespace
}  // namespace ipu::runtime::retention
