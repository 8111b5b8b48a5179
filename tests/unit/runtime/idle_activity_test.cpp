// What counts as activity of an interactive worker's container (pure): a table of looks, the container's
// processes and the pod's TCP sockets as the kernel shows them for each case the user guide names.
#include <gtest/gtest.h>

#include "idle/activity.h"

namespace ipu::runtime::idle {
namespace {

using State = SocketSample::State;

// The runtime (1), the notebook it started (7) and the notebook's kernel (9); the notebook listens on 8888
// and talks to its kernel over loopback.
Look notebook(std::uint64_t cpu = 100) {
  Look look;
  look.processes = {{1, 0, 5}, {7, 1, cpu}, {9, 7, 50}};
  look.sockets = {{State::kListen, "0.0.0.0", 8888, "0.0.0.0", 0, 11, 0},
                  {State::kListen, "127.0.0.1", 50001, "0.0.0.0", 0, 12, 0},
                  {State::kEstablished, "127.0.0.1", 41000, "127.0.0.1", 50001, 13, 900},
                  {State::kEstablished, "127.0.0.1", 50001, "127.0.0.1", 41000, 14, 900}};
  look.containerSockets = {11, 12, 13, 14};
  return look;
}

const ActivityRules kRules{1, 7, 10};

// A port-forward connection to the notebook: the container runtime's end (not the container's) and the
// notebook's accepted end.
void addPortForward(Look& look, std::uint64_t bytes, int port = 52000) {
  look.sockets.push_back({State::kEstablished, "127.0.0.1", port, "127.0.0.1", 8888, 30, bytes});
  look.sockets.push_back({State::kEstablished, "127.0.0.1", 8888, "127.0.0.1", port, 31, bytes});
  look.containerSockets.insert(31);
}

TEST(IdleActivity, TheNotebookAloneWithItsKernelIsIdle) {
  Look later = notebook(104);
  later.sockets[2].bytes = later.sockets[3].bytes = 1900;  // the kernel's heartbeats
  const Activity activity = activityBetween(notebook(), later, kRules);
  EXPECT_FALSE(activity.any()) << activity.what;
}

TEST(IdleActivity, CpuAboveTheThresholdIsActivityAndANewProcessCountsFromZero) {
  EXPECT_TRUE(activityBetween(notebook(100), notebook(111), kRules).cpu);
  Look later = notebook(100);
  later.processes.push_back({20, 9, 30});  // started and used 30 ticks since the last look
  EXPECT_TRUE(activityBetween(notebook(), later, kRules).cpu);
  Look reused = notebook(3);  // pid 7 is a new process now
  EXPECT_FALSE(activityBetween(notebook(100), reused, kRules).cpu);
}

TEST(IdleActivity, AProcessFromKubectlExecOrLeftBehindByItIsActivity) {
  Look session = notebook();
  session.processes.push_back({40, 0, 1});  // kubectl exec -- bash: its parent is outside the container
  session.processes.push_back({41, 40, 0});
  const Activity open = activityBetween(notebook(), session, kRules);
  EXPECT_TRUE(open.exec);
  EXPECT_NE(open.what.find("pid 40"), std::string::npos) << open.what;
  Look leftBehind = notebook();
  leftBehind.processes.push_back({41, 1, 0});  // the session ended; its background job was adopted by PID 1
  EXPECT_TRUE(activityBetween(notebook(), leftBehind, kRules).exec);
  Look deep = notebook();
  deep.processes.push_back({50, 9, 0});  // the kernel's own child: part of the command
  EXPECT_FALSE(activityBetween(notebook(), deep, kRules).exec);
}

TEST(IdleActivity, PortForwardTrafficIsActivityAnOpenSilentConnectionIsNot) {
  Look open = notebook();
  addPortForward(open, 500);
  EXPECT_TRUE(activityBetween(notebook(), open, kRules).portForward) << "a new connection";
  Look silent = notebook();
  addPortForward(silent, 500);
  EXPECT_FALSE(activityBetween(open, silent, kRules).portForward) << "no byte moved";
  Look traffic = notebook();
  addPortForward(traffic, 800);
  EXPECT_TRUE(activityBetween(open, traffic, kRules).portForward);
}

TEST(IdleActivity, AShortPortForwardConnectionBetweenLooksIsSeenByItsTimeWait) {
  Look ended = notebook();
  ended.sockets.push_back({State::kTimeWait, "127.0.0.1", 52001, "127.0.0.1", 8888, 0, 0});  // client closed
  EXPECT_TRUE(activityBetween(notebook(), ended, kRules).portForward);
  EXPECT_FALSE(activityBetween(ended, ended, kRules).portForward) << "the same TIME_WAIT a second time";
  Look serverClosed = notebook();
  serverClosed.sockets.push_back({State::kTimeWait, "127.0.0.1", 8888, "127.0.0.1", 52002, 0, 0});
  EXPECT_TRUE(activityBetween(notebook(), serverClosed, kRules).portForward);
}

TEST(IdleActivity, ConnectionsBetweenTheContainersOwnProcessesAreNotPortForward) {
  Look internal = notebook();
  internal.sockets.push_back({State::kEstablished, "127.0.0.1", 43000, "127.0.0.1", 8888, 40, 100});
  internal.containerSockets.insert(40);
  EXPECT_FALSE(activityBetween(notebook(), internal, kRules).portForward);
  Look ended = notebook();
  ended.sockets.push_back({State::kTimeWait, "127.0.0.1", 43000, "127.0.0.1", 8888, 0, 0});
  EXPECT_FALSE(activityBetween(internal, ended, kRules).portForward) << "seen held by the container before";
  Look outgoing = notebook();
  outgoing.sockets.push_back({State::kTimeWait, "10.0.0.5", 44000, "151.101.0.223", 443, 0, 0});
  EXPECT_FALSE(activityBetween(notebook(), outgoing, kRules).portForward) << "pip, not a port we listen on";
}

}  // namespace
}  // namespace ipu::runtime::idle
