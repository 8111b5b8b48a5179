#include "remote/agent.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <list>

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net/socket.h"
#include "process/descendants.h"
#include "process/signals.h"
#include "process/termination.h"
#include "remote/agent_limits.h"
#include "remote/agent_session.h"
#include "remote/served_command.h"

namespace ipu::runtime::remote {
namespace {

using Clock = std::chrono::steady_clock;
using Kind = AgentSession::Verdict::Kind;

// How long a connection may take to authenticate and send its request (the launch and rsh send it at once).
constexpr auto kUnauthenticatedFor = std::chrono::seconds(10);
// At Finish or SIGTERM, how long served commands may take to end before they are killed; then how long the
// killed may take to be gone. Both well inside a pod's default grace period of 30 s.
constexpr auto kFinishGrace = std::chrono::seconds(5);
constexpr auto kKillWait = std::chrono::seconds(2);
// While it refuses connections, the agent says how many at most this often; the first few failed handshakes
// are also logged one by one with their reason, later ones only counted (a flood must not flood the log).
constexpr auto kRefusedLogEvery = std::chrono::seconds(10);
constexpr std::uint64_t kHandshakeFailuresLogged = 20;

void say(const std::string& text) {
  std::fprintf(stderr, "ipu-runtime agent: %s\n", text.c_str());
}

// "10.200.1.7" of "10.200.1.7:51234" (and "::1" of "::1:51234"): the per-source bound's key.
std::string sourceOf(const std::string& peer) {
  return peer.substr(0, peer.rfind(':'));
}

// One connection not yet handed to a process of its own: its TLS stream on a non-blocking socket, driven by
// its session.
struct PendingConnection {
  PendingConnection(const tls::Context& context, net::Fd fd, const std::string& hostName)
      : peer(net::peerAddress(fd.get())),
        stream(std::make_unique<tls::Stream>(context, fd.release())),
        session(hostName, Clock::now() + kUnauthenticatedFor) {}

  std::string peer;
  std::unique_ptr<tls::Stream> stream;
  AgentSession session;
  short events = POLLIN;
};

// Reads what the stream has into the session until it decides or would have to wait.
AgentSession::Verdict readRequest(PendingConnection& connection) {
  std::array<std::byte, 16 * 1024> buffer;
  while (true) {
    std::optional<std::size_t> got;
    try {
      got = connection.stream->readAvailable(buffer);
    } catch (const tls::TlsError& error) {
      return connection.session.peerClosed(error.what());
    }
    if (!got) return {};
    if (*got == 0) return connection.session.peerClosed("");
    AgentSession::Verdict verdict = connection.session.received(std::span(buffer).first(*got));
    if (verdict.kind != Kind::kWait) return verdict;
  }
}

// Takes the connection as far as it can go without waiting.
AgentSession::Verdict advance(PendingConnection& connection) {
  if (connection.session.phase() == AgentSession::Phase::kHandshake) {
    tls::Stream::HandshakeStep step;
    try {
      step = connection.stream->continueHandshake();
    } catch (const tls::TlsError& error) {
      return connection.session.handshakeFailed(error.what());
    }
    if (step != tls::Stream::HandshakeStep::kDone) {
      connection.events = step == tls::Stream::HandshakeStep::kWantWrite ? POLLOUT : POLLIN;
      return {};
    }
    connection.events = POLLIN;
    connection.session.handshakeDone();
  }
  return readRequest(connection);
}

// A Run, in a process of its own (the command's stdio relay blocks on the connection, and may run for days).
[[noreturn]] void serveRun(PendingConnection& connection, const std::string& commandLine) {
  try {
    int fd = connection.stream->fd();
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    Connection served(std::move(connection.stream), std::move(connection.session.reader()));
    serveCommand(served, commandLine, connection.peer);
    served.close();
  } catch (const std::exception& error) {
    say("connection from " + connection.peer + " ended: " + error.what());
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
        signals_(signalsToWatch()),
        limiter_(connectionLimitsFromEnvironment()) {
    // Whatever a served command leaves behind (a daemon, fork + setsid) stays ours to stop at the end.
    process::becomeSubreaper();
  }

  int run() {
    say("serving job " + options_.credentials.identity + " on port " +
        std::to_string(net::localPort(listener_.get())));
    started_ = Clock::now();
    while (true) {
      std::vector<pollfd> waits = {{listener_.get(), POLLIN, 0}, {signals_.fd(), POLLIN, 0}};
      for (const auto& connection : pending_)
        waits.push_back({connection.stream->fd(), connection.events, 0});
      if (poll(waits.data(), waits.size(), pollTimeout()) < 0 && errno != EINTR) continue;
      if (waits[0].revents & POLLIN) accept();
      if (waits[1].revents & POLLIN) {
        if (int stop = handleSignals(); stop != 0)
          return end(stop, "stopped by signal " + std::to_string(stop - 128));
      }
      if (auto finish = serveReady(waits)) return end(finish->code, "", finish->message);
      logRefusedNow();
    }
  }

 private:
  static std::vector<int> signalsToWatch() {
    std::vector<int> signals = process::forwardedSignals();
    signals.push_back(SIGCHLD);
    return signals;
  }

  // Until the nearest connection deadline or the next due report of refused connections.
  int pollTimeout() const {
    std::optional<Clock::time_point> wake;
    for (const auto& connection : pending_)
      wake = std::min(wake.value_or(Clock::time_point::max()), connection.session.deadline());
    if (refused_.total() != refusedLogged_)
      wake = std::min(wake.value_or(Clock::time_point::max()), refusedLoggedAt_ + kRefusedLogEvery);
    if (!wake) return -1;
    auto left = std::chrono::ceil<std::chrono::milliseconds>(*wake - Clock::now()).count();
    return static_cast<int>(std::clamp<std::int64_t>(left, 0, 60'000));
  }

  void accept() {
    net::Fd fd(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
    if (!fd) return;
    std::string source = sourceOf(net::peerAddress(fd.get()));
    if (!limiter_.admit(source)) {
      ++refused_.overTheBound;  // closed at once: nothing of it is read
      return;
    }
    try {
      net::enableKeepAlive(fd.get());
      pending_.emplace_back(context_, std::move(fd), options_.hostName);
    } catch (const std::exception& error) {
      limiter_.release(source);
      say("could not take a connection from " + source + ": " + error.what());
    }
  }

  // Advances every connection that poll() reported (or whose deadline passed); the Finish a peer sent, if one
  // did. Connections accepted since `waits` was made come last, with no entry of their own there yet.
  std::optional<protocol::Finish> serveReady(const std::vector<pollfd>& waits) {
    std::size_t index = 2;
    for (auto connection = pending_.begin(); connection != pending_.end(); ++index) {
      AgentSession::Verdict verdict = connection->session.timePassed(Clock::now());
      const bool ready = index < waits.size() && waits[index].revents != 0;
      if (verdict.kind == Kind::kWait && (ready || connection->stream->hasBufferedData()))
        verdict = advance(*connection);
      if (verdict.kind == Kind::kWait) {
        ++connection;
        continue;
      }
      std::optional<protocol::Finish> finish = act(*connection, verdict);
      limiter_.release(sourceOf(connection->peer));
      connection = pending_.erase(connection);
      if (finish) return finish;
    }
    return std::nullopt;
  }

  std::optional<protocol::Finish> act(PendingConnection& connection, const AgentSession::Verdict& verdict) {
    switch (verdict.kind) {
      case Kind::kRefuse:
        if (++refused_.failedHandshake <= kHandshakeFailuresLogged)
          say("refused a connection from " + connection.peer + ": " + verdict.reason);
        break;
      case Kind::kDrop:
        if (!verdict.reason.empty()) say("connection from " + connection.peer + " ended: " + verdict.reason);
        break;
      case Kind::kAnswer:
      case Kind::kFinish:
        if (!verdict.reason.empty()) say(verdict.reason + " from " + connection.peer);
        try {
          connection.stream->writeAll(std::as_bytes(std::span(verdict.reply)));
          connection.stream->shutdown();
        } catch (const std::exception& error) {
          say("could not answer " + connection.peer + ": " + error.what());
        }
        break;
      case Kind::kRun:
        fork(connection, verdict.commandLine);
        break;
      case Kind::kWait:
        break;
    }
    if (verdict.kind == Kind::kFinish) return verdict.finish;
    return std::nullopt;
  }

  void fork(PendingConnection& connection, const std::string& commandLine) {
    pid_t pid = ::fork();
    if (pid == 0) {
      listener_.reset();
      for (auto& other : pending_) {
        if (&other != &connection) other.stream.reset();
      }
      serveRun(connection, commandLine);
    }
    if (pid > 0) ++served_;
    if (pid < 0) say("could not serve " + connection.peer + ": fork failed");
  }

  // Reports refused connections at most every kRefusedLogEvery, while there are new ones.
  void logRefusedNow() {
    if (refused_.total() == refusedLogged_ || Clock::now() < refusedLoggedAt_ + kRefusedLogEvery) return;
    std::string line = refused_.describe();
    say(line.insert(line.find(" (over"), " so far"));
    refusedLogged_ = refused_.total();
    refusedLoggedAt_ = Clock::now();
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
    pending_.clear();
    // Every process this agent started, in any process group or session: a command that ignores SIGTERM
    // or left a daemon behind must not keep the pod Running (and its IPUs held) after the instance ended.
    if (!process::stopDescendants(kFinishGrace, kKillWait)) say("some served processes could not be stopped");
    auto ran = Clock::now() - started_;
    std::string detail = "served " + std::to_string(served_) + " connection(s), " + refused_.describe();
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
  ConnectionLimiter limiter_;
  std::list<PendingConnection> pending_;
  RefusedConnections refused_;
  std::uint64_t refusedLogged_ = 0;
  Clock::time_point refusedLoggedAt_ = Clock::time_point::min();
  int served_ = 0;
  Clock::time_point started_;
};

}  // namespace

int runAgent(const AgentOptions& options) {
  return Agent(options).run();
}

}  // namespace ipu::runtime::remote
