// How long an interactive job lives: the ttl in force and status.interactive from when its workers run.
#include "ipujob/interactive_session.h"

#include <gtest/gtest.h>

#include "common/time_format.h"

namespace ipu::controllers {
namespace {

using namespace std::chrono_literals;
using Json = nlohmann::json;

const InteractiveLimits kLimits{4h, 24h};
const Clock::WallTime kNoon = *parseTime("2026-11-27T12:00:00Z");

TEST(InteractiveSessionTest, TheTtlInForceIsTheSpecsTheDefaultForZeroAndAtMostTheMaximum) {
  EXPECT_EQ(interactiveTtl({3600}, kLimits).ttl, 3600s);
  EXPECT_FALSE(interactiveTtl({3600}, kLimits).capped);
  EXPECT_EQ(interactiveTtl({0}, kLimits).ttl, 4h);
  EXPECT_EQ(interactiveTtl({86400}, kLimits).ttl, 24h);
  EXPECT_FALSE(interactiveTtl({86400}, kLimits).capped);
  EXPECT_EQ(interactiveTtl({86401}, kLimits).ttl, 24h);
  EXPECT_TRUE(interactiveTtl({86401}, kLimits).capped);
}

TEST(InteractiveSessionTest, TheSessionStartsOnceAndEndsItsTtlLaterWhateverTheTtlBecomes) {
  const api::InteractiveStatus started = interactiveStatus(std::nullopt, 600s, kNoon);
  EXPECT_EQ(started, (api::InteractiveStatus{"2026-11-27T12:00:00Z", 600, "2026-11-27T12:10:00Z"}));
  EXPECT_EQ(interactiveExpiry(started), kNoon + 600s);

  // Later passes keep when it started; a raised ttl moves the end only.
  EXPECT_EQ(interactiveStatus(started, 600s, kNoon + 5min), started);
  EXPECT_EQ(interactiveStatus(started, 1800s, kNoon + 5min),
            (api::InteractiveStatus{"2026-11-27T12:00:00Z", 1800, "2026-11-27T12:30:00Z"}));
  // A start time the operator cannot read starts the session again rather than never ending it.
  EXPECT_EQ(interactiveStatus(api::InteractiveStatus{"soon", 600, "later"}, 600s, kNoon + 1min).runningSince,
            "2026-11-27T12:01:00Z");
  EXPECT_EQ(interactiveExpiry({"", 0, "not a time"}), std::nullopt);
}

TEST(InteractiveSessionTest, IdleReclaimIsTheJobsCappedByTheAdminsOrTheAdminsOrOff) {
  const InteractiveLimits off{4h, 24h, 0s};
  const InteractiveLimits admin{4h, 24h, 1800s};
  EXPECT_EQ(idleReclaimAfter({600, 0}, off), 0s) << "off by default";
  EXPECT_EQ(idleReclaimAfter({600, 120}, off), 120s) << "the job asks for it";
  EXPECT_EQ(idleReclaimAfter({600, 0}, admin), 1800s);
  EXPECT_EQ(idleReclaimAfter({600, 600}, admin), 600s);
  EXPECT_EQ(idleReclaimAfter({600, 7200}, admin), 1800s) << "no job waits longer than the admin says";
}

api::IpuJobSpec interactiveSpec(int workers, const Json& container) {
  api::IpuJobSpec spec;
  spec.ipusPerJobInstance = 4;
  spec.workersPerJobInstance = workers;
  spec.interactive = api::InteractiveSpec{600, 60};
  spec.workerTemplate = {{"spec", {{"containers", Json::array({container})}}}};
  return spec;
}

TEST(InteractiveSessionTest, AJobWhoseWorkerIsNotWatchedIsToldItLivesItsTtl) {
  const Json notebook = {{"name", "nb"}, {"image", "x"}, {"command", {"jupyter-notebook"}}};
  EXPECT_EQ(idleReclaimNotWatchedMessage(interactiveSpec(1, notebook), kLimits, true), std::nullopt);
  EXPECT_NE(idleReclaimNotWatchedMessage(interactiveSpec(2, notebook), kLimits, true)
                .value_or("")
                .find("only a single-worker instance's worker is watched"),
            std::string::npos);
  EXPECT_NE(idleReclaimNotWatchedMessage(interactiveSpec(1, notebook), kLimits, false)
                .value_or("")
                .find("without --runtime-image"),
            std::string::npos);
  const Json entrypoint = {{"name", "nb"}, {"image", "x"}};
  EXPECT_NE(idleReclaimNotWatchedMessage(interactiveSpec(1, entrypoint), kLimits, true)
                .value_or("")
                .find("no command"),
            std::string::npos);
  api::IpuJobSpec noReclaim = interactiveSpec(2, notebook);
  noReclaim.interactive->idleSeconds = 0;
  EXPECT_EQ(idleReclaimNotWatchedMessage(noReclaim, kLimits, true), std::nullopt) << "off: nothing to say";
}

TEST(InteractiveSessionTest, TheRuntimesIdleReasonIsReadFromASucceededWorker) {
  const std::vector<WorkerOutcome> reclaimed = {
      {"nb-worker-0", WorkerOutcome::State::kSucceeded, 0, "reclaimed as idle: nothing for 60 s"}};
  EXPECT_EQ(idleReclaimReason(reclaimed), "nothing for 60 s");
  const std::vector<WorkerOutcome> ended = {
      {"nb-worker-0", WorkerOutcome::State::kSucceeded, 0, "nb-worker-0 (instance 0): exited 0"}};
  EXPECT_EQ(idleReclaimReason(ended), std::nullopt);
  const std::vector<WorkerOutcome> failed = {
      {"nb-worker-0", WorkerOutcome::State::kFailed, 1, "reclaimed as idle: said a failing program"}};
  EXPECT_EQ(idleReclaimReason(failed), std::nullopt);
}

}  // namespace
}  // namespace ipu::controllers
