#include "remote/served_command.h"

#include <array>
#include <cerrno>
#include <cstdio>

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "net/socket.h"
#include "process/signals.h"
#include "process/spawn.h"
#include "process/termination.h"

namespace ipu::runtime::remote {
namespace {

using Clock = std::chrono::steady_clock;
// After the command ended, how long its output pipes may stay open (held by a process it left behind).
constexpr auto kDrainAfterExit = std::chrono::seconds(2);
constexpr auto kKillGrace = std::chrono::seconds(3);
constexpr std::size_t kLoggedCommand = 160;

void say(const std::string& text) {
  std::fprintf(stderr, "ipu-runtime agent: %s\n", text.c_str());
}

struct Pipe {
  net::Fd read;
  net::Fd write;
};

Pipe makePipe() {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw net::NetError("pipe failed");
  return {net::Fd(fds[0]), net::Fd(fds[1])};
}

class ServedCommand {
 public:
  ServedCommand(Connection& connection, const std::string& commandLine, const std::string& peer)
      : connection_(connection),
        commandLine_(commandLine),
        peer_(peer),
        signals_({SIGCHLD, SIGTERM, SIGINT}) {}

  void run() {
    Pipe in = makePipe(), out = makePipe(), err = makePipe();
    process::SpawnOptions spawnOptions{in.read.get(), out.write.get(), err.write.get(), {}, true};
    say("running for " + peer_ + ": " + process::shortened(commandLine_, kLoggedCommand));
    started_ = Clock::now();
    try {
      pid_ = process::spawn({"/bin/sh", "-c", commandLine_}, spawnOptions);
    } catch (const process::SpawnError& error) {
      connection_.send(protocol::errorFrame(error.what()));
      say(std::string("could not run it: ") + error.what());
      return;
    }
    stdin_ = std::move(in.write);
    stdout_ = std::move(out.read);
    stderr_ = std::move(err.read);
    in.read.reset();
    out.write.reset();
    err.write.reset();
    loop();
  }

 private:
  void loop() {
    while (!exited_ || ((stdout_ || stderr_) && Clock::now() < exitedAt_ + kDrainAfterExit)) {
      pollfd waits[] = {{connection_.fd(), POLLIN, 0},
                        {stdout_.get(), POLLIN, 0},
                        {stderr_.get(), POLLIN, 0},
                        {signals_.fd(), POLLIN, 0}};
      int timeout = connection_.hasBufferedData() ? 0 : (exited_ ? 100 : -1);
      if (poll(waits, 4, timeout) < 0 && errno != EINTR) break;
      if ((waits[0].revents != 0 || connection_.hasBufferedData()) && !readPeer()) return lostPeer();
      if (waits[1].revents != 0) relay(stdout_, protocol::FrameType::kStdout);
      if (waits[2].revents != 0) relay(stderr_, protocol::FrameType::kStderr);
      if (waits[3].revents != 0) handleSignals();
    }
    connection_.send(protocol::exitFrame(status_));
    auto ran = std::chrono::duration<double>(Clock::now() - started_).count();
    say("command for " + peer_ + " ended with code " + std::to_string(status_.code) + " after " +
        std::to_string(static_cast<int>(ran)) + " s");
  }

  // Frames from the peer; false when the connection is gone or the peer broke the protocol.
  bool readPeer() {
    try {
      return relayPeerFrames();
    } catch (const std::exception& error) {
      say("connection from " + peer_ + " failed: " + error.what());
      return false;
    }
  }

  bool relayPeerFrames() {
    if (!connection_.readAvailable()) return false;
    while (auto frame = connection_.nextFrame()) {
      switch (frame->type) {
        case protocol::FrameType::kStdin:
          if (stdin_) writeStdin(frame->payload);
          break;
        case protocol::FrameType::kStdinClose:
          stdin_.reset();
          break;
        case protocol::FrameType::kSignal:
          if (!exited_) kill(-pid_, protocol::signalOf(*frame));
          break;
        default:
          throw protocol::ProtocolError("unexpected " + protocol::describe(frame->type) +
                                        " frame during a command");
      }
    }
    return true;
  }

  void writeStdin(const std::string& bytes) {
    std::size_t written = 0;
    while (written < bytes.size()) {
      ssize_t n = write(stdin_.get(), bytes.data() + written, bytes.size() - written);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {  // the command closed its stdin: drop the rest, as a pipe would
        stdin_.reset();
        return;
      }
      written += static_cast<std::size_t>(n);
    }
  }

  void relay(net::Fd& pipe, protocol::FrameType stream) {
    std::array<char, 32 * 1024> buffer;
    ssize_t n = read(pipe.get(), buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) return;
    if (n <= 0) {
      pipe.reset();
      return;
    }
    connection_.send(protocol::outputFrame(stream, std::string(buffer.data(), static_cast<std::size_t>(n))));
  }

  void handleSignals() {
    for (int signal : signals_.drain()) {
      if (signal == SIGCHLD) continue;
      if (!exited_) kill(-pid_, SIGTERM);  // the agent is stopping
    }
    int status;
    if (!exited_ && waitpid(pid_, &status, WNOHANG) == pid_) {
      status_ = process::exitStatusFrom(status);
      exited_ = true;
      exitedAt_ = Clock::now();
    }
  }

  // The launcher went away (killed, its pod deleted, the network cut): nothing it started may keep running.
  void lostPeer() {
    say("lost the connection from " + peer_ + "; stopping its command");
    if (exited_) return;
    kill(-pid_, SIGTERM);
    auto deadline = Clock::now() + kKillGrace;
    int status;
    while (waitpid(pid_, &status, WNOHANG) == 0) {
      if (Clock::now() > deadline) {
        kill(-pid_, SIGKILL);
        waitpid(pid_, &status, 0);
        break;
      }
      usleep(20'000);
    }
  }

  Connection& connection_;
  std::string commandLine_;
  std::string peer_;
  process::SignalFd signals_;
  pid_t pid_ = -1;
  net::Fd stdin_, stdout_, stderr_;
  bool exited_ = false;
  Clock::time_point started_, exitedAt_;
  process::ExitStatus status_;
};

}  // namespace

void serveCommand(Connection& connection, const std::string& commandLine, const std::string& peer) {
  ServedCommand(connection, commandLine, peer).run();
}

}  // namespace ipu::runtime::remote
