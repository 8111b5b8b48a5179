#include "retention/worker_lock.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <system_error>
#include <thread>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <unistd.h>

namespace ipu::runtime::retention {
namespace {

[[noreturn]] void fail(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

int flockRetrying(int fd, int operation) {
  int result = 0;
  do {
    result = ::flock(fd, operation);
  } while (result != 0 && errno == EINTR);
  return result;
}

// Waits until `path` exists: a watch on its directory first, then a look, so a file made in between is not
// missed.
void awaitFile(const std::string& path) {
  const std::filesystem::path file(path);
  Fd watcher(::inotify_init1(IN_CLOEXEC));
  if (!watcher) fail("inotify_init1");
  if (::inotify_add_watch(watcher.get(), file.parent_path().c_str(), IN_CREATE | IN_MOVED_TO) < 0)
    fail("inotify_add_watch " + file.parent_path().string());
  while (::access(path.c_str(), F_OK) != 0) {
    alignas(inotify_event) char events[4096];
    if (::read(watcher.get(), events, sizeof events) < 0 && errno != EINTR) fail("reading inotify events");
  }
}

std::string utcIn(std::chrono::seconds from_now) {
  const std::time_t when = std::time(nullptr) + from_now.count();
  std::tm parts{};
  ::gmtime_r(&when, &parts);
  char text[32] = {};
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &parts);
  return text;
}

extern "C" void endNow(int) {
  _exit(0);  // the pod is being deleted: nothing is left to keep
}

}  // namespace

Fd holdWorkerLock(const std::string& path) {
  const std::string partial = path + ".partial." + std::to_string(::getpid());
  Fd lock(::open(partial.c_str(), O_CREAT | O_RDWR | O_CLOEXEC | O_TRUNC, 0644));
  if (!lock) fail("creating " + partial);
  if (flockRetrying(lock.get(), LOCK_EX) != 0) fail("locking " + partial);
  if (::rename(partial.c_str(), path.c_str()) != 0) fail("renaming " + partial + " to " + path);
  return lock;
}

bool workerEnded(const std::string& path) {
  Fd file(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!file) return false;
  return flockRetrying(file.get(), LOCK_EX | LOCK_NB) == 0;
}

void awaitWorkerEnd(const std::string& path) {
  awaitFile(path);
  Fd file(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!file) fail("opening " + path);
  if (flockRetrying(file.get(), LOCK_EX) != 0) fail("locking " + path);
}

int runRetain(const RetainOptions& options) {
  // PID 1 of its container: without handlers, SIGTERM would be ignored and the pod's deletion would wait out
  // its whole grace period.
  std::signal(SIGTERM, endNow);
  std::signal(SIGINT, endNow);
  std::printf("ipu-runtime retain: waiting for the worker's command to end; %s is then kept for %lld s\n",
              options.outputsPath.c_str(), static_cast<long long>(options.retain.count()));
  std::fflush(stdout);
  awaitWorkerEnd(options.lockPath);
  std::printf("ipu-runtime retain: the worker's command ended: %s is kept until %s for kubectl ipu cp\n",
              options.outputsPath.c_str(), utcIn(options.retain).c_str());
  std::fflush(stdout);
  std::this_thread::sleep_for(options.retain);
  std::printf("ipu-runtime retain: %s is no longer kept\n", options.outputsPath.c_str());
  return 0;
}

}  // namespace ipu::runtime::retention
