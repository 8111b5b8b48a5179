#include "remote/rsh.h"

#include <array>
#include <cerrno>
#include <cstdio>

#include <poll.h>
#include <unistd.h>

#include "process/signals.h"
#include "remote/peer_name.h"

namespace ipu::runtime::remote {
namespace {

constexpr int kConnectionFailed = 255;
constexpr auto kConnectTimeout = std::chrono::seconds(30);

int fail(const std::string& host, const std::string& why) {
  std::fprintf(stderr, "ipu-runtime rsh: %s: %s\n", host.c_str(), why.c_str());
  return kConnectionFailed;
}

void writeAll(int fd, const std::string& bytes) {
  std::size_t written = 0;
  while (written < bytes.size()) {
    ssize_t n = write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // our reader went away; the command's status still matters
    written += static_cast<std::size_t>(n);
  }
}

std::string joinedCommand(const std::vector<std::string>& command) {
  std::string line;
  for (const auto& arg : command) line += (line.empty() ? "" : " ") + arg;
  return line;
}

class RemoteRun {
 public:
  RemoteRun(Connection connection, std::string host)
      : connection_(std::move(connection)),
        host_(std::move(host)),
        signals_({SIGTERM, SIGINT, SIGHUP, SIGQUIT}) {}

  int run(const std::string& commandLine) {
    connection_.send(protocol::runFrame(commandLine));
    while (true) {
      pollfd waits[] = {{stdinOpen_ ? STDIN_FILENO : -1, POLLIN, 0},
                        {connection_.fd(), POLLIN, 0},
                        {signals_.fd(), POLLIN, 0}};
      if (poll(waits, 3, connection_.hasBufferedData() ? 0 : -1) < 0 && errno != EINTR)
        return fail(host_, "poll failed");
      if (waits[0].revents != 0) forwardStdin();
      if (waits[2].revents != 0) forwardSignals();
      if (waits[1].revents != 0 || connection_.hasBufferedData()) {
        try {
          if (!connection_.readAvailable())
            return fail(host_, "the agent closed the connection before the command ended");
          if (auto code = handleFrames()) return *code;
        } catch (const std::exception& error) {
          return fail(host_, std::string("lost the connection to the agent: ") + error.what());
        }
      }
    }
  }

 private:
  void forwardStdin() {
    std::array<char, 32 * 1024> buffer;
    ssize_t n = read(STDIN_FILENO, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) return;
    if (n <= 0) {
      stdinOpen_ = false;
      connection_.send(protocol::stdinCloseFrame());
      return;
    }
    connection_.send(protocol::stdinFrame(std::string(buffer.data(), static_cast<std::size_t>(n))));
  }

  void forwardSignals() {
    for (int signal : signals_.drain()) connection_.send(protocol::signalFrame(signal));
  }

  // The command's exit code once its Exit frame arrived.
  std::optional<int> handleFrames() {
    while (auto frame = connection_.nextFrame()) {
      switch (frame->type) {
        case protocol::FrameType::kStdout:
          writeAll(STDOUT_FILENO, frame->payload);
          break;
        case protocol::FrameType::kStderr:
          writeAll(STDERR_FILENO, frame->payload);
          break;
        case protocol::FrameType::kExit:
          return protocol::exitStatusOf(*frame).code;
        case protocol::FrameType::kError:
          return fail(host_, "the agent refused: " + protocol::textOf(*frame));
        default:
          throw protocol::ProtocolError("unexpected " + protocol::describe(frame->type) +
                                        " frame from the agent");
      }
    }
    return std::nullopt;
  }

  Connection connection_;
  std::string host_;
  process::SignalFd signals_;
  bool stdinOpen_ = true;
};

}  // namespace

int runRsh(const RshOptions& options) {
  std::string host = completePeerName(options.host, options.peers);
  if (options.command.empty()) return fail(host, "no command to run");
  try {
    Connection connection = connectToAgent(options.credentials, host, options.port, kConnectTimeout);
    return RemoteRun(std::move(connection), host).run(joinedCommand(options.command));
  } catch (const std::exception& error) {
    return fail(host, error.what());
  }
}

}  // namespace ipu::runtime::remote
