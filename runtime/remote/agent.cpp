#include "remote/agent.h"

#include <climits>
#include <cstdio>

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "net/socket.h"
#include "process/descendants.h"
#include "process/signals.h"
#include "process/termination.h"
#include "remote/served_command.h"

namespace ipu::runtime::remote {
namespace {

constexpr auto kHandshakeTimeout = std::chrono::seconds(10);
constexpr auto kFirstFrameTimeout = std::chrono::seconds(30);
// At Finish or SIGTERM, how long served commands may take to end before they are killed; then how long the
// killed may take to be gone. Both well inside a pod's default grace period of 30 s.
constexpr auto kFinishGrace = std::chrono::seconds(5);
constexpr auto kKillWait = std::chrono::seconds(2);

void say(const std::string& text) {
  std::fprintf(stderr, "ipu-runtime agent: %s\n", text.c_str());
}

// One connection, in a process of its own: authenticate, read the request, serve it. Its exit code tells the
// agent nothing; a Finish is passed up through `finishPipe`.
[[noreturn]] void serveConnection(const AgentOptions& options, const tls::Context& context, int fd,
                                  int finishPipe) {
  std::string peer = net::peerAddress(fd);
  auto stream = std::make_unique<tls::Stream>(context, fd);
  try {
    stream->handshake(kHandshakeTimeout);
  } catch (const std::exception& error) {
    say("refused a connection from " + peer + ": " + error.what());
    _exit(1);
  }
  Connection connection(std::move(stream));
  try {
    auto request = connection.receive(kFirstFrameTimeout);
    if (!request) _exit(0);
    switch (request->type) {
      case protocol::FrameType::kPing:
        connection.send(protocol::pongFrame(options.hostName));
        break;
      case protocol::FrameType::kFinish: {
        // One write of at most PIPE_BUF bytes is atomic: the code, then the launch's message.
        protocol::Finish finish = protocol::finishOf(*request);
        std::string note(1, static_cast<char>(finish.code));
        note += finish.message.substr(0, process::kMaxTerminationMessage);
        ssize_t ignored = write(finishPipe, note.data(), note.size());
        (void)ignored;
        connection.send(protocol::pongFrame(options.hostName));
        break;
      }
      case protocol::FrameType::kRun:
        serveCommand(connection, protocol::commandLineOf(*request), peer);
        break;
      default:
        connection.send(protocol::errorFrame("unexpected " + protocol::describe(request->type) + " request"));
        say("refused a " + protocol::describe(request->type) + " request from " + peer);
    }
    connection.close();
  } catch (const std::exception& error) {
    say("connection from " + peer + " ended: " + error.what());
    _exit(1);
  }
  _exit(0);
}

class Agent {
 public:
  explicit Agent(const AgentOptions& options)
      : options_(options),
        context_(options.credentials.context(tls::Role::kServer)),
        listener_(net::listenTcp(options.port)),
        signals_(signalsToWatch()) {
    // Whatever a served command leaves behind (a daemon, fork + setsid) stays ours to stop at the end.
    process::becomeSubreaper();
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) throw net::NetError("pipe failed");
    finishRead_ = net::Fd(fds[0]);
    finishWrite_ = net::Fd(fds[1]);
  }

  int run() {
    say("serving job " + options_.credentials.identity + " on port " +
        std::to_string(net::localPort(listener_.get())));
    started_ = std::chrono::steady_clock::now();
    while (true) {
      pollfd waits[] = {
          {listener_.get(), POLLIN, 0}, {signals_.fd(), POLLIN, 0}, {finishRead_.get(), POLLIN, 0}};
      if (poll(waits, 3, -1) < 0) continue;
      if (waits[0].revents & POLLIN) accept();
      if (waits[1].revents & POLLIN) {
        if (int stop = handleSignals(); stop != 0)
          return end(stop, "stopped by signal " + std::to_string(stop - 128));
      }
      if (waits[2].revents & POLLIN) {
        char note[PIPE_BUF];
        ssize_t got = read(finishRead_.get(), note, sizeof note);
        if (got >= 1)
          return end(static_cast<unsigned char>(note[0]), "",
                     std::string(note + 1, static_cast<std::size_t>(got - 1)));
      }
    }
  }

 private:
  static std::vector<int> signalsToWatch() {
    std::vector<int> signals = process::forwardedSignals();
    signals.push_back(SIGCHLD);
    return signals;
  }

  void accept() {
    net::Fd fd(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!fd) return;
    net::enableKeepAlive(fd.get());
    pid_t pid = fork();
    if (pid == 0) {
      listener_.reset();
      finishRead_.reset();
      serveConnection(options_, context_, fd.release(), finishWrite_.get());
    }
    if (pid > 0) ++served_;
  }

  // Reaps what ended. Returns 128 + signal when the agent must stop.
  int handleSignals() {
    int stop = 0;
    for (int signal : signals_.drain()) {
      if (signal != SIGCHLD) stop = 128 + signal;
    }
    process::reapEndedChildren();
    return stop;
  }

  // Lets the served commands end (they were told to by Finish's sender or by SIGTERM), then leaves.
  // `launchMessage`: how the launch on worker 0 ended, in its own words; it leads this pod's message too, so
  // that whichever worker the operator sees fail first explains the instance.
  int end(int code, const std::string& why, const std::string& launchMessage = "") {
    // Every process this agent started, in any process group or session: a command that ignores SIGTERM
    // or left a daemon behind must not keep the pod Running (and its IPUs held) after the instance ended.
    if (!process::stopDescendants(kFinishGrace, kKillWait)) say("some served processes could not be stopped");
    auto ran = std::chrono::steady_clock::now() - started_;
    std::string detail = "served " + std::to_string(served_) + " connection(s)";
    std::string message =
        !launchMessage.empty()
            ? launchMessage + " (reported by the agent of " + options_.worker + ", which " + detail + ")"
            : process::terminationMessage({options_.worker,
                                           options_.instance,
                                           why.empty() ? "agent (launch finished)" : "agent",
                                           {code, 0},
                                           ran,
                                           why.empty() ? detail : why + "; " + detail});
    message = process::shortened(message, process::kMaxTerminationMessage);
    say(message);
    process::writeTerminationMessage(options_.terminationLog, message);
    // As the container's PID 1, whatever is still there (unseen as ours) goes too; never as an ordinary
    // process, where kill(-1) would reach every process of the user's.
    if (getpid() == 1) kill(-1, SIGKILL);
    return code;
  }

  AgentOptions options_;
  tls::Context context_;
  net::Fd listener_;
  process::SignalFd signals_;
  net::Fd finishRead_;
  net::Fd finishWrite_;
  int served_ = 0;
  std::chrono::steady_clock::time_point started_;
};

}  // namespace

int runAgent(const AgentOptions& options) {
  return Agent(options).run();
}

}  // namespace ipu::runtime::remote
