// The pure parts of `kubectl ipu logs`: which pods are a job's workers, the line prefix, timestamps, merging.
#include "kubectl-ipu/worker_logs.h"

#include <gtest/gtest.h>

#include "common/time_format.h"

namespace ipu::kubectl_ipu {
namespace {

Json workerPod(const std::string& name, const std::string& owner, int attempt, int instance, int worker,
               const Json& state, bool controller = true) {
  return {{"metadata",
           {{"name", name},
            {"uid", "pod-" + name},
            {"labels",
             {{"graphcore.ai/ipujob", "train"},
              {"graphcore.ai/attempt", std::to_string(attempt)},
              {"graphcore.ai/job-instance", std::to_string(instance)},
              {"graphcore.ai/worker-index", std::to_string(worker)}}},
            {"ownerReferences", {{{"kind", "IPUJob"}, {"uid", owner}, {"controller", controller}}}}}},
          {"spec", {{"containers", {{{"name", "train"}}, {{"name", "sidecar"}}}}}},
          {"status", {{"containerStatuses", {{{"name", "train"}, {"state", state}}}}}}};
}

TEST(WorkerPodsTest, OnlyPodsTheJobControlsInAttemptAndWorkerOrder) {
  const Json running = {{"running", {{"startedAt", "2026-11-28T01:00:00Z"}}}};
  const Json done = {{"terminated", {{"exitCode", 3}}}};
  const Json waiting = {{"waiting", {{"reason", "ContainerCreating"}}}};
  const Json pods = {workerPod("train-worker-1", "uid-1", 1, 0, 1, waiting),
                     workerPod("train-worker-0", "uid-1", 1, 0, 0, running),
                     workerPod("old-worker-0", "uid-1", 0, 0, 0, done),
                     workerPod("posing-worker-0", "uid-1", 1, 0, 0, running, /*controller=*/false),
                     workerPod("other-worker-0", "uid-2", 1, 0, 0, running)};
  const std::vector<WorkerPod> workers = workerPodsOf("uid-1", pods);
  ASSERT_EQ(workers.size(), 3u);
  EXPECT_EQ(workers[0].name, "old-worker-0");
  EXPECT_TRUE(workers[0].started);
  EXPECT_TRUE(workers[0].finished);
  EXPECT_EQ(workers[1].name, "train-worker-0");
  EXPECT_TRUE(workers[1].started);
  EXPECT_FALSE(workers[1].finished);
  EXPECT_EQ(workers[1].container, "train");
  EXPECT_EQ(workers[2].name, "train-worker-1");
  EXPECT_FALSE(workers[2].started);
  EXPECT_EQ(linePrefix(workers[2]), "a1 i0 w1 | ");
}

TEST(LogLineTest, ReadsTheTimestampToTheNanosecond) {
  const auto line = parseLogLine("2026-11-28T01:40:00.123456789Z hello world");
  ASSERT_TRUE(line);
  EXPECT_EQ(line->text, "hello world");
  EXPECT_EQ(line->time - *parseTime("2026-11-28T01:40:00Z"), std::chrono::nanoseconds(123456789));
  // RFC 3339 with fewer digits (the fraction is not zero-padded): 0.5 s is after 0.123 s.
  EXPECT_GT(parseLogLine("2026-11-28T01:40:00.5Z x")->time, parseLogLine("2026-11-28T01:40:00.123Z x")->time);
  EXPECT_EQ(parseLogLine("2026-11-28T01:40:01Z ")->text, "");
  for (const char* bad :
       {"no timestamp here", "2026-11-28T01:40:00.12x3Z a", "", "2026-11-28T01:40:00.Z a"}) {
    EXPECT_FALSE(parseLogLine(bad)) << bad;
  }
}

TEST(MergeLogsTest, InterleavesWorkersByTimeKeepingEachWorkersOrder) {
  WorkerPod w0{"j-worker-0", "u0", 0, 0, 0, "train"};
  WorkerPod w1{"j-worker-1", "u1", 0, 1, 1, "train"};
  auto at = [](const char* time, const char* text) { return LogLine{*parseTime(time), text}; };
  const std::string merged = mergeLogs(
      {{w0, {at("2026-11-28T01:00:00Z", "w0 first"), at("2026-11-28T01:00:02Z", "w0 second")}},
       {w1, {at("2026-11-28T01:00:01Z", "w1 first"), at("2026-11-28T01:00:01Z", "w1 same second")}}});
  EXPECT_EQ(merged,
            "a0 i0 w0 | w0 first\n"
            "a0 i1 w1 | w1 first\n"
            "a0 i1 w1 | w1 same second\n"
            "a0 i0 w0 | w0 second\n");
}

}  // namespace
}  // namespace ipu::kubectl_ipu
