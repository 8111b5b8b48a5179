// ipu-runtime as real processes on loopback: exec as a container's PID 1 would run it, and agent + rsh with
// the job's mutual TLS. No cluster: these run anywhere the binary does.
#include <csignal>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "eventually.h"
#include "free_port.h"
#include "net/socket.h"
#include "protocol/frame.h"
#include "remote/connection.h"
#include "runtime_fixture.h"
#include "subprocess.h"
#include "tls/tls.h"

namespace ipu::testing {
namespace {

using namespace std::chrono_literals;

class ExecTest : public ::testing::Test {
 protected:
  std::string terminationLog = ::testing::TempDir() + "/exec-termination-log-" + std::to_string(getpid());
  std::vector<std::string> env() const {
    return {"IPU_RUNTIME_TERMINATION_LOG=" + terminationLog, "IPUJOB_INSTANCE=1", "HOSTNAME=ignored"};
  }
  void TearDown() override { unlink(terminationLog.c_str()); }
};

TEST_F(ExecTest, TheCommandsExitCodeAndATerminationMessageNamingTheInstance) {
  RunResult result =
      run({runtimeBinary(), "exec", "--", "sh", "-c", "echo working; exit 3"}, {.extraEnv = env()});
  EXPECT_EQ(result.exitCode, 3);
  EXPECT_EQ(result.out, "working\n");
  std::string message = fileText(terminationLog);
  EXPECT_EQ(message.rfind("instance 1 (", 0), 0u) << message;
  EXPECT_NE(message.find("): sh -c 'echo working; exit 3' exited with code 3 after "), std::string::npos)
      << message;
}

TEST_F(ExecTest, SuccessIsAMessageToo) {
  RunResult result = run({runtimeBinary(), "exec", "--", "true"}, {.extraEnv = env()});
  EXPECT_EQ(result.exitCode, 0) << result.describe();
  EXPECT_NE(fileText(terminationLog).find(": true succeeded after "), std::string::npos);
}

TEST_F(ExecTest, AMissingCommandExits127AndSaysWhy) {
  RunResult result = run({runtimeBinary(), "exec", "--", "/no/such/trainer"}, {.extraEnv = env()});
  EXPECT_EQ(result.exitCode, 127);
  EXPECT_NE(result.err.find("cannot run /no/such/trainer: No such file or directory"), std::string::npos)
      << result.err;
  EXPECT_NE(fileText(terminationLog).find("exited with code 127"), std::string::npos);
}

TEST_F(ExecTest, SigtermReachesTheCommandAndEverythingItStarted) {
  // The shell starts a child of its own; Kubernetes signals only PID 1 (the runtime), which must pass it on
  // to the whole group, or the child would be killed only after the grace period.
  BackgroundProcess exec(
      {runtimeBinary(), "exec", "--", "sh", "-c",
       "sleep 60 & trap 'kill $!; wait; echo stopped-cleanly; exit 42' TERM; echo ready; wait"},
      env());
  ASSERT_EQ(exec.readLine(10s), "ready");
  ::kill(exec.pid(), SIGTERM);
  EXPECT_EQ(exec.readLine(10s), "stopped-cleanly");
  EXPECT_EQ(exec.wait(10s), 42);
  EXPECT_NE(fileText(terminationLog).find("exited with code 42"), std::string::npos);
}

TEST_F(ExecTest, ACommandKilledByASignalReportsIt) {
  RunResult result = run({runtimeBinary(), "exec", "--", "sh", "-c", "kill -KILL $$"}, {.extraEnv = env()});
  EXPECT_EQ(result.exitCode, 137);
  EXPECT_NE(fileText(terminationLog).find("killed by signal 9 (SIGKILL)"), std::string::npos);
}

// Settings from the environment (the operator's, or a user's override) are checked before anything starts.
TEST(RuntimeUsageTest, MalformedSettingsAreClearErrors) {
  JobSecretDir secret("ipujob/test/settings/uid-9");
  const std::vector<std::string> shape = {"IPUJOB_WORKERS_PER_INSTANCE=2", "IPUJOB_REPLICAS_PER_WORKER=1",
                                          "IPUJOB_IPUS_PER_INSTANCE=2", "IPU_RUNTIME_PEERS=a.j,b.j",
                                          secret.environment()};
  auto launchWith = [&](const std::string& extra) {
    std::vector<std::string> env;  // the shape, with `extra` in place of its own setting of that variable
    const std::string name = extra.substr(0, extra.find('=') + 1);
    for (const auto& entry : shape) {
      if (entry.rfind(name, 0) != 0) env.push_back(entry);
    }
    env.push_back(extra);
    return run({runtimeBinary(), "launch", "--", "true"}, {.timeout = 10s, .extraEnv = env});
  };
  RunResult timeout = launchWith("IPU_RUNTIME_PEER_TIMEOUT_SECONDS=10s");
  EXPECT_EQ(timeout.exitCode, 1);
  EXPECT_NE(timeout.err.find("IPU_RUNTIME_PEER_TIMEOUT_SECONDS=\"10s\" is not a whole number"),
            std::string::npos)
      << timeout.err;
  RunResult port = launchWith("IPU_RUNTIME_AGENT_PORT=99999");
  EXPECT_EQ(port.exitCode, 1);
  EXPECT_NE(port.err.find("IPU_RUNTIME_AGENT_PORT=\"99999\" is not a port (1-65535)"), std::string::npos)
      << port.err;
  RunResult workers = launchWith("IPUJOB_WORKERS_PER_INSTANCE=two");
  EXPECT_EQ(workers.exitCode, 1);
  EXPECT_NE(workers.err.find("IPUJOB_WORKERS_PER_INSTANCE=\"two\" is not a whole number"), std::string::npos)
      << workers.err;
  RunResult noSecret =
      run({runtimeBinary(), "agent"}, {.timeout = 10s, .extraEnv = {"IPU_RUNTIME_TLS_DIR=/nonexistent"}});
  EXPECT_EQ(noSecret.exitCode, 1);
  EXPECT_NE(noSecret.err.find("cannot read /nonexistent/ca.crt (is the job's runtime Secret mounted?)"),
            std::string::npos)
      << noSecret.err;
}

TEST(RuntimeUsageTest, BadArgumentsAreUsageErrors) {
  EXPECT_EQ(run({runtimeBinary()}).exitCode, 2);
  EXPECT_EQ(run({runtimeBinary(), "frobnicate"}).exitCode, 2);
  EXPECT_EQ(run({runtimeBinary(), "exec", "--"}).exitCode, 2);
  EXPECT_EQ(run({runtimeBinary(), "rsh", "host-only"}).exitCode, 2);
  RunResult port = run({runtimeBinary(), "agent", "--port", "http"});
  EXPECT_EQ(port.exitCode, 1);
  EXPECT_NE(port.err.find("--port=\"http\" is not a whole number"), std::string::npos) << port.err;
  RunResult version = run({runtimeBinary(), "version"});
  EXPECT_EQ(version.out.rfind("ipu-runtime ", 0), 0u);
}

// One agent on loopback, serving the job "test/job-a".
class AgentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    port = freeLoopbackPort();
    agent =
        std::make_unique<BackgroundProcess>(std::vector<std::string>{runtimeBinary(), "agent"}, agentEnv());
    waitUntilListening();
  }

  void TearDown() override {
    agent.reset();  // first: it may still write its termination log while it stops
    unlink(terminationLog.c_str());
  }

  std::vector<std::string> agentEnv() const {
    std::vector<std::string> env = {secret.environment(), "IPU_RUNTIME_AGENT_PORT=" + std::to_string(port),
                                    "IPU_RUNTIME_TERMINATION_LOG=" + terminationLog};
    env.insert(env.end(), extraAgentEnv.begin(), extraAgentEnv.end());
    return env;
  }

  void waitUntilListening() {
    for (int attempt = 0; attempt < 500; ++attempt) {
      int fd = socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in address{};
      address.sin_family = AF_INET;
      address.sin_port = htons(port);
      address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      bool connected = connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
      close(fd);
      if (connected) return;
      std::this_thread::sleep_for(10ms);
    }
    FAIL() << "the agent did not listen: " << agent->stderrText();
  }

  RunResult rsh(const std::vector<std::string>& command, const JobSecretDir& credentials,
                std::string input = "") {
    std::vector<std::string> argv = {runtimeBinary(), "rsh", "127.0.0.1"};
    argv.insert(argv.end(), command.begin(), command.end());
    return run(argv,
               {.input = std::move(input),
                .timeout = 30s,
                .extraEnv = {credentials.environment(), "IPU_RUNTIME_AGENT_PORT=" + std::to_string(port)}});
  }

  // A connection to the agent as a peer of the job would make it: the launch's or rsh's side.
  runtime::remote::Connection connectAsJob() const {
    return runtime::remote::connectToAgent(runtime::remote::Credentials::load(secret.path, ""), "127.0.0.1",
                                           port, 5s);
  }

  std::vector<std::string> extraAgentEnv;
  JobSecretDir secret{"ipujob/test/job-a/uid-1"};
  std::string terminationLog = ::testing::TempDir() + "/agent-termination-log-" + std::to_string(getpid());
  std::uint16_t port = 0;
  std::unique_ptr<BackgroundProcess> agent;
};

TEST_F(AgentTest, RshRunsTheCommandThroughTheRemoteShellAndRelaysEverything) {
  // mpirun hands rsh its daemon's command as words meant for a remote shell, quotes included.
  RunResult result = rsh({"echo", "\"out put\";", "echo", "err", ">&2;", "exit", "3"}, secret);
  EXPECT_EQ(result.exitCode, 3);
  EXPECT_EQ(result.out, "out put\n");
  EXPECT_EQ(result.err, "err\n");

  RunResult echoed = rsh({"cat"}, secret, std::string(200'000, 'i') + "end");
  EXPECT_EQ(echoed.exitCode, 0) << echoed.describe();
  EXPECT_EQ(echoed.out.size(), 200'003u);
  EXPECT_EQ(echoed.out.substr(echoed.out.size() - 3), "end");
  EXPECT_NE(agent->stderrText().find("running for 127.0.0.1:"), std::string::npos) << agent->stderrText();
}

TEST_F(AgentTest, ACertificateOfAnotherJobIsRefused) {
  JobSecretDir otherJob("ipujob/test/job-b/uid-2");
  RunResult result = rsh({"echo", "should-not-run"}, otherJob);
  EXPECT_EQ(result.exitCode, 255);
  EXPECT_EQ(result.out, "");
  EXPECT_NE(result.err.find("ipu-runtime rsh: 127.0.0.1: "), std::string::npos) << result.err;
  EXPECT_NE(agent->stderrText().find("refused a connection from 127.0.0.1"), std::string::npos)
      << agent->stderrText();
  // The agent goes on serving its own job.
  EXPECT_EQ(rsh({"echo", "still-serving"}, secret).out, "still-serving\n");
}

TEST_F(AgentTest, KillingRshKillsTheRemoteCommand) {
  std::string marker = ::testing::TempDir() + "/rsh-kill-marker-" + std::to_string(getpid());
  BackgroundProcess client(
      {runtimeBinary(), "rsh", "127.0.0.1", "trap", "'echo killed > " + marker + "; exit 5'", "TERM;", "echo",
       "started;", "while", ":;", "do", "sleep", "0.1;", "done"},
      {secret.environment(), "IPU_RUNTIME_AGENT_PORT=" + std::to_string(port)});
  ASSERT_EQ(client.readLine(10s), "started") << client.stderrText();
  ::kill(client.pid(), SIGTERM);
  EXPECT_EQ(client.wait(10s), 5) << client.stderrText();
  EXPECT_EQ(fileText(marker), "killed\n");
  unlink(marker.c_str());
}

TEST_F(AgentTest, AnAgentKilledMidRunFailsRshWithAClearMessageAndNothingHangs) {
  BackgroundProcess client({runtimeBinary(), "rsh", "127.0.0.1", "echo", "started;", "sleep", "20"},
                           {secret.environment(), "IPU_RUNTIME_AGENT_PORT=" + std::to_string(port)});
  ASSERT_EQ(client.readLine(10s), "started") << client.stderrText();
  ::kill(-agent->pid(), SIGKILL);  // the agent and the process serving this connection
  auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(client.wait(10s), 255);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
  EXPECT_NE(client.stderrText().find("ipu-runtime rsh: 127.0.0.1: lost the connection to the agent"),
            std::string::npos)
      << client.stderrText();
}

// A peer with the job's certificate that then breaks the protocol is cut off; the agent keeps serving.
TEST_F(AgentTest, MalformedAndTruncatedFramesFromAnAuthenticatedPeerAreErrorsNotCrashes) {
  auto context = runtime::tls::Context::fromFiles(runtime::tls::Role::kClient, secret.path + "/ca.crt",
                                                  secret.path + "/tls.crt", secret.path + "/tls.key",
                                                  "ipujob/test/job-a/uid-1");
  auto sendRaw = [&](const std::string& bytes) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    runtime::tls::Stream stream(context, fd);
    stream.handshake(5s);
    stream.writeAll(std::as_bytes(std::span(bytes.data(), bytes.size())));
    stream.shutdown();
    std::array<std::byte, 256> buffer;
    try {
      while (stream.read(buffer) > 0) {
      }
    } catch (const runtime::tls::TlsError&) {
      // the agent may cut the connection without close_notify
    }
  };
  sendRaw(std::string("\xff\xff\xff\xff\x03", 5));                              // oversized
  sendRaw(std::string("\x00\x00\x00\x01\x63x", 6));                             // unknown type
  sendRaw(std::string("\x00\x00\x00\x10\x03short", 10));                        // truncated
  sendRaw(runtime::protocol::encode(runtime::protocol::signalFrame(SIGTERM)));  // not a request
  std::this_thread::sleep_for(200ms);
  std::string log = agent->stderrText();
  EXPECT_NE(log.find("exceeds the limit of 1048576"), std::string::npos) << log;
  EXPECT_NE(log.find("unknown frame type 99"), std::string::npos) << log;
  EXPECT_NE(log.find("connection closed inside a frame"), std::string::npos) << log;
  EXPECT_NE(log.find("refused a Signal request"), std::string::npos) << log;
  EXPECT_EQ(rsh({"echo", "alive"}, secret).out, "alive\n");
}

// Whether `pid` is a process that has not ended (a zombie has).
bool running(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return false;
  return stat.rfind(')') != std::string::npos && stat[stat.rfind(')') + 2] != 'Z';
}

std::vector<pid_t> pidsIn(const std::string& path) {
  std::vector<pid_t> pids;
  std::istringstream in(fileText(path));
  for (pid_t pid; in >> pid;) pids.push_back(pid);
  return pids;
}

TEST_F(AgentTest, FinishStopsEveryServedProcessEvenOneIgnoringSigtermAndADaemonThatLeftItsGroup) {
  const std::string pidFile = ::testing::TempDir() + "/served-pids-" + std::to_string(getpid());
  unlink(pidFile.c_str());
  // The shell and everything it starts ignore SIGTERM; the daemon runs in a session of its own, and its
  // parent (the subshell) exits at once, so it is re-parented.
  BackgroundProcess client({runtimeBinary(), "rsh", "127.0.0.1",
                            "trap '' TERM; echo $$ >> " + pidFile + "; (setsid sh -c 'echo $$ >> " + pidFile +
                                "; exec sleep 1000' &); echo started; sleep 1000"},
                           {secret.environment(), "IPU_RUNTIME_AGENT_PORT=" + std::to_string(port)});
  ASSERT_EQ(client.readLine(10s), "started") << client.stderrText();
  ASSERT_TRUE(eventually([&] { return pidsIn(pidFile).size() == 2; }, 10s)) << fileText(pidFile);
  const std::vector<pid_t> served = pidsIn(pidFile);
  for (pid_t pid : served) ASSERT_TRUE(running(pid)) << pid;

  runtime::remote::Connection launch = connectAsJob();
  launch.send(runtime::protocol::finishFrame(0, ""));
  auto reply = launch.receive(5s);
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->type, runtime::protocol::FrameType::kPong);
  // SIGTERM is ignored: the agent waits its grace (5 s), then kills.
  EXPECT_EQ(agent->wait(20s), 0) << agent->stderrText();
  for (pid_t pid : served) EXPECT_TRUE(eventually([&] { return !running(pid); }, 5s)) << "pid " << pid;
  unlink(pidFile.c_str());
}

// An agent that lets few connections wait for their handshake at once.
class BoundedAgentTest : public AgentTest {
 protected:
  BoundedAgentTest() {
    extraAgentEnv = {"IPU_RUNTIME_AGENT_MAX_UNAUTHENTICATED=8",
                     "IPU_RUNTIME_AGENT_MAX_UNAUTHENTICATED_PER_SOURCE=4"};
  }
};

// A TCP connection from `source` (a loopback address) to the agent that never says anything; the connect
// is not waited for.
runtime::net::Fd silentConnection(const char* source, std::uint16_t port) {
  runtime::net::Fd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  sockaddr_in from{};
  from.sin_family = AF_INET;
  inet_pton(AF_INET, source, &from.sin_addr);
  EXPECT_EQ(bind(fd.get(), reinterpret_cast<sockaddr*>(&from), sizeof from), 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(port);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  connect(fd.get(), reinterpret_cast<sockaddr*>(&to), sizeof to);
  return fd;
}

TEST_F(BoundedAgentTest, AFloodOfSilentConnectionsIsRefusedWhileTheJobIsStillServed) {
  std::vector<runtime::net::Fd> flood;
  for (int i = 0; i < 500; ++i) flood.push_back(silentConnection("127.0.0.2", port));
  ASSERT_TRUE(
      eventually([&] { return !linesWith(agent->stderrText(), "connection(s) so far").empty(); }, 10s))
      << agent->stderrText();

  EXPECT_EQ(rsh({"echo", "alive"}, secret).out, "alive\n");
  runtime::remote::Connection launch = connectAsJob();
  launch.send(runtime::protocol::pingFrame());
  auto pong = launch.receive(5s);
  ASSERT_TRUE(pong.has_value());
  EXPECT_EQ(pong->type, runtime::protocol::FrameType::kPong);

  runtime::remote::Connection finish = connectAsJob();
  finish.send(runtime::protocol::finishFrame(0, ""));
  EXPECT_TRUE(finish.receive(5s).has_value());
  EXPECT_EQ(agent->wait(20s), 0) << agent->stderrText();
  std::smatch refused;
  std::string message = fileText(terminationLog);
  ASSERT_TRUE(std::regex_search(message, refused,
                                std::regex(R"(refused (\d+) connection\(s\) \(over the bound: (\d+))")))
      << message;
  EXPECT_GT(std::stoi(refused[2]), 0) << message;
  EXPECT_NE(message.find("served 1 connection(s)"), std::string::npos) << message;  // rsh's Run
}

TEST_F(AgentTest, BytesThatAreNotTlsAreRefused) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  std::string junk = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
  ASSERT_EQ(write(fd, junk.data(), junk.size()), static_cast<ssize_t>(junk.size()));
  char buffer[64];
  EXPECT_LE(read(fd, buffer, sizeof buffer), 7);  // at most a TLS alert, then the connection ends
  close(fd);
  EXPECT_EQ(rsh({"echo", "alive"}, secret).out, "alive\n");
}

}  // namespace
}  // namespace ipu::testing
