#include "kube/leader_elector.h"

#include <algorithm>
#include <condition_variable>
#include <future>
#include <mutex>

#include <gtest/gtest.h>
#include <unistd.h>

#include "fake_clock.h"
#include "fake_transport.h"

namespace ipu::kube {
namespace {

using namespace std::chrono_literals;
using testing::FakeClock;
using testing::FakeTransport;

const std::string kLeasePath = "/apis/coordination.k8s.io/v1/namespaces/ops/leases/ipu-operator";
const std::string kLeasesPath = "/apis/coordination.k8s.io/v1/namespaces/ops/leases";
// FakeClock's wall time starts at 2024-01-01T00:00:00Z.
const std::string kStart = "2024-01-01T00:00:00.000000Z";

std::string microTime(int second) {
  char text[40];
  std::snprintf(text, sizeof(text), "2024-01-01T00:00:%02d.000000Z", second);
  return text;
}

// A Lease as the API server returns it.
std::string lease(const std::string& holder, const std::string& resourceVersion,
                  const std::string& renewTime = kStart, int transitions = 0, int durationSeconds = 15) {
  return Json{
      {"apiVersion", "coordination.k8s.io/v1"},
      {"kind", "Lease"},
      {"metadata", {{"name", "ipu-operator"}, {"namespace", "ops"}, {"resourceVersion", resourceVersion}}},
      {"spec",
       {{"holderIdentity", holder},
        {"leaseDurationSeconds", durationSeconds},
        {"acquireTime", kStart},
        {"renewTime", renewTime},
        {"leaseTransitions", transitions}}}}
      .dump();
}

std::string statusBody(int code, const std::string& reason) {
  return Json{{"kind", "Status"}, {"apiVersion", "v1"}, {"status", "Failure"},
              {"code", code},     {"reason", reason},   {"message", reason}}
      .dump();
}

// Plays a FakeTransport script, counts every request sent, and can make the next request hang until it is
// cancelled: a connection that stopped answering.
class TestTransport final : public Transport {
 public:
  FakeTransport script;

  void hangNextRequest() { hangNext_ = true; }

  Result<HttpResponse> send(const HttpRequest& request, std::stop_token stop) override {
    bool hang = false;
    {
      std::lock_guard lock(mutex_);
      ++sent_;
      hang = std::exchange(hangNext_, false);
      changed_.notify_all();
    }
    if (!hang) return script.send(request, stop);
    std::mutex mutex;
    std::condition_variable_any never;
    std::unique_lock lock(mutex);
    never.wait(lock, stop, [] { return false; });
    return makeError(ErrorCode::kCancelled, request.method + " " + request.pathAndQuery + ": cancelled");
  }
  Result<HttpResponse> stream(const HttpRequest& request, const LineHandler& onLine,
                              std::stop_token stop) override {
    return script.stream(request, onLine, stop);
  }

  // Real time: only bounds a hung test.
  bool waitUntilSent(size_t n) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, 10s, [&] { return sent_ >= n; });
  }
  size_t sent() const {
    std::lock_guard lock(mutex_);
    return sent_;
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  size_t sent_ = 0;
  bool hangNext_ = false;
};

class LeaderElectorTest : public ::testing::Test {
 protected:
  void TearDown() override {
    if (outcome_.valid()) finish();
    EXPECT_EQ(transport_->script.unexpected(), std::vector<std::string>{});
    EXPECT_EQ(transport_->script.remaining(), 0u) << "the elector skipped scripted requests";
  }

  static LeaderElectionConfig config() {
    return LeaderElectionConfig{.leaseName = "ipu-operator",
                                .leaseNamespace = "ops",
                                .identity = "me",
                                .leaseDuration = 15s,
                                .renewDeadline = 10s,
                                .retryPeriod = 2s,
                                .jitterFactor = 0};
  }

  void start(LeaderElectionConfig electionConfig = config()) {
    auto created = LeaderElector::create(client_, std::move(electionConfig), clock_);
    ASSERT_TRUE(created.ok()) << created.error().toString();
    elector_ = std::move(*created);
    LeaderCallbacks callbacks{
        .onStartedLeading =
            [this](std::stop_token leading) {
              note("started");
              if (work_) work_(leading);
            },
        .onStoppedLeading = [this] { note("stopped"); },
        .onNewLeader = [this](const std::string& identity) { note("leader " + identity); }};
    outcome_ = std::async(std::launch::async,
                          [this, callbacks] { return elector_->run(stop_.get_token(), callbacks); });
  }

  // Waits until the elector has sent `sent` requests in all and sleeps again: its own thread and its request
  // timer both wait on the clock. Waiting for the requests first matters: right after advance(), a waiter
  // that has been woken may still be counted.
  void settle(size_t sent) {
    ASSERT_TRUE(transport_->waitUntilSent(sent))
        << "sent " << transport_->sent() << " requests, not " << sent;
    ASSERT_TRUE(clock_.waitForWaiters(2));
    EXPECT_EQ(transport_->sent(), sent);
  }

  LeaderElector::Outcome finish() {
    stop_.request_stop();
    EXPECT_EQ(outcome_.wait_for(10s), std::future_status::ready) << "run() did not return";
    return outcome_.get();
  }

  // run() returning on its own, without a stop.
  LeaderElector::Outcome outcomeWithoutStop() {
    EXPECT_EQ(outcome_.wait_for(10s), std::future_status::ready) << "run() did not return";
    return outcome_.get();
  }

  void note(const std::string& entry) {
    std::lock_guard lock(mutex_);
    notes_.push_back(entry);
    noted_.notify_all();
  }
  bool waitForNote(const std::string& entry) {
    std::unique_lock lock(mutex_);
    return noted_.wait_for(lock, 10s,
                           [&] { return std::find(notes_.begin(), notes_.end(), entry) != notes_.end(); });
  }
  std::vector<std::string> notes() const {
    std::lock_guard lock(mutex_);
    return notes_;
  }

  // The body of the i-th request the script played.
  Json sentBody(size_t i) const {
    auto played = transport_->script.played();
    EXPECT_LT(i, played.size());
    return i < played.size() ? Json::parse(played[i].seen.body) : Json();
  }

  FakeClock clock_;
  std::shared_ptr<TestTransport> transport_ = std::make_shared<TestTransport>();
  RestClient client_{transport_, ClusterConfig{}, ClientOptions{.maxRetries = 0}, clock_};
  std::unique_ptr<LeaderElector> elector_;
  std::stop_source stop_;
  std::future<LeaderElector::Outcome> outcome_;
  std::function<void(std::stop_token)> work_;

  mutable std::mutex mutex_;
  std::condition_variable noted_;
  std::vector<std::string> notes_;
};

TEST_F(LeaderElectorTest, CreatesTheLeaseWhenMissingLeadsAndReleasesItOnStop) {
  transport_->script.expect("GET", kLeasePath, 404, statusBody(404, "NotFound"))
      .expect("POST", kLeasesPath, 201, lease("me", "1"))
      .expect("PUT", kLeasePath, 200, lease("", "2"));
  start();
  ASSERT_TRUE(waitForNote("started"));
  settle(2);
  EXPECT_TRUE(elector_->isLeader());

  Json created = sentBody(1);
  EXPECT_EQ(created["kind"], "Lease");
  EXPECT_EQ(created["apiVersion"], "coordination.k8s.io/v1");
  EXPECT_EQ(created["metadata"]["name"], "ipu-operator");
  EXPECT_EQ(created["metadata"]["namespace"], "ops");
  EXPECT_EQ(created["spec"], (Json{{"holderIdentity", "me"},
                                   {"leaseDurationSeconds", 15},
                                   {"acquireTime", kStart},
                                   {"renewTime", kStart},
                                   {"leaseTransitions", 0}}));

  EXPECT_EQ(finish(), LeaderElector::Outcome::kStopped);
  Json released = sentBody(2);
  EXPECT_EQ(released["metadata"]["resourceVersion"], "1") << "the release must be conditional";
  EXPECT_EQ(released["spec"]["holderIdentity"], "");
  EXPECT_EQ(released["spec"]["leaseDurationSeconds"], 1);
  EXPECT_EQ(released["spec"]["leaseTransitions"], 0);
  EXPECT_FALSE(elector_->isLeader());
  EXPECT_EQ(notes(), (std::vector<std::string>{"leader me", "started", "stopped"}));
}

TEST_F(LeaderElectorTest, RenewsEveryRetryPeriodOnTheLatestResourceVersion) {
  transport_->script.expect("GET", kLeasePath, 404, statusBody(404, "NotFound"))
      .expect("POST", kLeasesPath, 201, lease("me", "1"))
      .expect("PUT", kLeasePath, 200, lease("me", "2", microTime(2)))
      .expect("PUT", kLeasePath, 200, lease("me", "3", microTime(4)))
      .expect("PUT", kLeasePath, 200, lease("", "4"));
  start();
  settle(2);
  clock_.advance(1999ms);
  ASSERT_TRUE(clock_.waitForWaiters(2));
  EXPECT_EQ(transport_->sent(), 2u) << "renewed before retryPeriod";
  clock_.advance(1ms);
  settle(3);
  clock_.advance(2s);
  settle(4);

  Json first = sentBody(2), second = sentBody(3);
  EXPECT_EQ(first["metadata"]["resourceVersion"], "1");
  EXPECT_EQ(first["spec"]["renewTime"], microTime(2));
  EXPECT_EQ(first["spec"]["acquireTime"], kStart);
  EXPECT_EQ(first["spec"]["holderIdentity"], "me");
  EXPECT_EQ(second["metadata"]["resourceVersion"], "2");
  EXPECT_EQ(second["spec"]["renewTime"], microTime(4));
  EXPECT_TRUE(elector_->isLeader());
  EXPECT_EQ(finish(), LeaderElector::Outcome::kStopped);
  EXPECT_EQ(sentBody(4)["metadata"]["resourceVersion"], "3");
}

TEST_F(LeaderElectorTest, AFreshLeaseHeldByAnotherIsNotTaken) {
  for (int i = 0; i < 8; ++i)
    transport_->script.expect("GET", kLeasePath, 200, lease("other", "5", kStart, 3));
  start();
  settle(1);
  // Unchanged for 14 s of our clock: less than the holder's 15 s.
  for (size_t i = 2; i <= 8; ++i) {
    clock_.advance(2s);
    settle(i);
  }
  EXPECT_FALSE(elector_->isLeader());
  EXPECT_EQ(finish(), LeaderElector::Outcome::kStopped);
  EXPECT_EQ(notes(), (std::vector<std::string>{"leader other"})) << "never led, so never stopped leading";
}

TEST_F(LeaderElectorTest, ARecordUnchangedForTheLeaseDurationOnOurClockIsTaken) {
  // The holder's clock is years ahead: its timestamps must not matter, only how long the record stays the
  // same.
  const std::string future = "2030-06-01T00:00:00.000000Z";
  for (int i = 0; i < 9; ++i)
    transport_->script.expect("GET", kLeasePath, 200, lease("other", "5", future, 3));
  transport_->script.expect("PUT", kLeasePath, 200, lease("me", "6", microTime(16), 4))
      .expect("PUT", kLeasePath, 200, lease("", "7", microTime(16), 4));
  start();
  settle(1);
  for (size_t i = 2; i <= 8; ++i) {
    clock_.advance(2s);
    settle(i);
  }
  EXPECT_FALSE(elector_->isLeader()) << "taken before the record was unchanged for 15 s";
  clock_.advance(2s);  // 16 s unchanged
  ASSERT_TRUE(waitForNote("started"));
  settle(10);
  EXPECT_TRUE(elector_->isLeader());

  Json takeover = sentBody(9);
  EXPECT_EQ(takeover["metadata"]["resourceVersion"], "5") << "the takeover must be conditional";
  EXPECT_EQ(takeover["spec"]["holderIdentity"], "me");
  EXPECT_EQ(takeover["spec"]["leaseTransitions"], 4);
  EXPECT_EQ(takeover["spec"]["acquireTime"], microTime(16));
  EXPECT_EQ(takeover["spec"]["renewTime"], microTime(16));
  EXPECT_EQ(takeover["spec"]["leaseDurationSeconds"], 15);
  EXPECT_EQ(finish(), LeaderElector::Outcome::kStopped);
  EXPECT_EQ(notes(), (std::vector<std::string>{"leader other", "leader me", "started", "stopped"}));
}

TEST_F(LeaderElectorTest, ARecordThatKeepsChangingIsNotTakenHoweverOldItsTimestamps) {
  // The holder's clock is stuck in 2001, but it renews: the record changes at every look.
  for (int i = 0; i <= 12; ++i) {
    char renewTime[40];
    std::snprintf(renewTime, sizeof(renewTime), "2001-01-01T00:00:%02d.000000Z", i);
    transport_->script.expect("GET", kLeasePath, 200, lease("other", std::to_string(100 + i), renewTime));
  }
  start();
  settle(1);
  for (size_t i = 2; i <= 13; ++i) {
    clock_.advance(2s);
    settle(i);
  }
  EXPECT_FALSE(elector_->isLeader())
      << "24 s of a live holder's renewals must not look like an expired lease";
  EXPECT_EQ(finish(), LeaderElector::Outcome::kStopped);
}

TEST_F(LeaderElectorTest, TheHoldersDeclaredDurationIsWhatAFollowerWaitsFor) {
  // A holder with a longer lease than ours is given its own duration, not ours.
  for (int i = 0; i < 12; ++i)
    transport_->script.expect("GET", kLeasePath, 200, lease("other", "5", kStart, 0, 22));
  transport_->script.expect("PUT", kLeasePath, 200, lease("me", "6"))
      .expect("PUT", kLeasePath, 200, lease("", "7"));
  start();
  settle(1);
  for (size_t i = 2; i <= 12; ++i) {  // up to 22 s: exactly its duration, and now expired
    clock_.advance(2s);
    settle(i + (i == 12 ? 1 : 0));
  }
  EXPECT_TRUE(elector_->isLeader());
  EXPECT_EQ(sentBody(12)["spec"]["leaseTransitions"], 1);
}

TEST_F(LeaderElectorTest, AConflictOnTakeoverMeansAnotherCandidateWon) {
  transport_->script
      .expect("GET", kLeasePath, 200, lease("", "7", kStart, 2, 1))  // released by its holder
      .expect("PUT", kLeasePath, 409, statusBody(409, "Conflict"))
      .expect("GET", kLeasePath, 200, lease("other", "8", microTime(0), 3));
  start();
  settle(2);
  Json attempt = sentBody(1);
  EXPECT_EQ(attempt["metadata"]["resourceVersion"], "7");
  EXPECT_EQ(attempt["spec"]["holderIdentity"], "me");
  EXPECT_EQ(attempt["spec"]["leaseTransitions"], 3);
  EXPECT_FALSE(elector_->isLeader());
  clock_.advance(2s);
  settle(3);
  EXPECT_FALSE(elector_->isLeader());
  EXPECT_EQ(finish(), LeaderElector::Outcome::kStopped);
  EXPECT_EQ(notes(), (std::vector<std::string>{"leader other"}));
}

TEST_F(LeaderElectorTest, LosingTheRaceToCreateTheLeaseIsNotLeadership) {
  transport_->script.expect("GET", kLeasePath, 404, statusBody(404, "NotFound"))
      .expect("POST", kLeasesPath, 409, statusBody(409, "AlreadyExists"))
      .expect("GET", kLeasePath, 200, lease("other", "1"));
  start();
  settle(2);
  clock_.advance(2s);
  settle(3);
  EXPECT_FALSE(elector_->isLeader());
  EXPECT_EQ(finish(), LeaderElector::Outcome::kStopped);
}

TEST_F(LeaderElectorTest, ReadFailuresWhileFollowingAreRetriedEveryRetryPeriod) {
  transport_->script
      .expectFailure("GET", kLeasePath, makeError(ErrorCode::kUnavailable, "connection refused"))
      .expect("GET", kLeasePath, 500, statusBody(500, "InternalError"))
      .expect("GET", kLeasePath, 404, statusBody(404, "NotFound"))
      .expect("POST", kLeasesPath, 201, lease("me", "1"))
      .expect("PUT", kLeasePath, 200, lease("", "2"));
  start();
  settle(1);
  clock_.advance(2s);
  settle(2);
  clock_.advance(2s);
  ASSERT_TRUE(waitForNote("started"));
  settle(4);
  EXPECT_EQ(finish(), LeaderElector::Outcome::kStopped);
}

TEST_F(LeaderElectorTest, RenewalFailuresForTheRenewDeadlineLoseLeadershipAtOnce) {
  transport_->script.expect("GET", kLeasePath, 404, statusBody(404, "NotFound"))
      .expect("POST", kLeasesPath, 201, lease("me", "1"));
  for (int i = 0; i < 4; ++i)
    transport_->script.expect("PUT", kLeasePath, 500, statusBody(500, "InternalError"));
  start();
  settle(2);
  ASSERT_TRUE(waitForNote("started"));  // before the loss: the two callbacks run on different threads
  for (size_t i = 3; i <= 6; ++i) {     // failed renewals at 2, 4, 6 and 8 s
    clock_.advance(2s);
    settle(i);
    EXPECT_TRUE(elector_->isLeader()) << "still within renewDeadline";
  }
  clock_.advance(1999ms);
  ASSERT_TRUE(clock_.waitForWaiters(2));
  EXPECT_TRUE(elector_->isLeader());
  clock_.advance(1ms);  // 10 s after the last renewal: lost, with no need of another request
  EXPECT_EQ(outcomeWithoutStop(), LeaderElector::Outcome::kLost);
  EXPECT_FALSE(elector_->isLeader());
  EXPECT_EQ(transport_->sent(), 6u) << "a lost lease is not released: it is not ours";
  EXPECT_EQ(notes(), (std::vector<std::string>{"leader me", "started", "stopped"}));
}

TEST_F(LeaderElectorTest, AHungRenewalIsCancelledAtTheRenewDeadline) {
  transport_->script.expect("GET", kLeasePath, 404, statusBody(404, "NotFound"))
      .expect("POST", kLeasesPath, 201, lease("me", "1"));
  start();
  settle(2);
  ASSERT_TRUE(waitForNote("started"));  // before the loss: the two callbacks run on different threads
  transport_->hangNextRequest();
  clock_.advance(2s);
  ASSERT_TRUE(transport_->waitUntilSent(3));
  ASSERT_TRUE(clock_.waitForWaiters(1));  // the request timer
  clock_.advance(7999ms);
  ASSERT_TRUE(clock_.waitForWaiters(1));
  EXPECT_TRUE(elector_->isLeader());
  EXPECT_EQ(outcome_.wait_for(0s), std::future_status::timeout);
  clock_.advance(1ms);  // the renew deadline: the hung request is cancelled and leadership given up
  EXPECT_EQ(outcomeWithoutStop(), LeaderElector::Outcome::kLost);
  EXPECT_EQ(notes(), (std::vector<std::string>{"leader me", "started", "stopped"}));
}

TEST_F(LeaderElectorTest, AConflictOnRenewalWithAnotherHolderLosesAtOnce) {
  transport_->script.expect("GET", kLeasePath, 404, statusBody(404, "NotFound"))
      .expect("POST", kLeasesPath, 201, lease("me", "1"))
      .expect("PUT", kLeasePath, 409, statusBody(409, "Conflict"))
      .expect("GET", kLeasePath, 200, lease("other", "9", microTime(2), 1));
  start();
  settle(2);
  ASSERT_TRUE(waitForNote("started"));
  clock_.advance(2s);
  EXPECT_EQ(outcomeWithoutStop(), LeaderElector::Outcome::kLost);
  EXPECT_EQ(notes(), (std::vector<std::string>{"leader me", "started", "leader other", "stopped"}));
}

TEST_F(LeaderElectorTest, AConflictOnRenewalThatLeavesTheLeaseOursRenewsOnTheNewVersion) {
  transport_->script.expect("GET", kLeasePath, 404, statusBody(404, "NotFound"))
      .expect("POST", kLeasesPath, 201, lease("me", "1"))
      .expect("PUT", kLeasePath, 409, statusBody(409, "Conflict"))
      .expect("GET", kLeasePath, 200, lease("me", "4"))
      .expect("PUT", kLeasePath, 200, lease("me", "5", microTime(2)))
      .expect("PUT", kLeasePath, 200, lease("", "6"));
  start();
  settle(2);
  clock_.advance(2s);
  settle(5);
  EXPECT_TRUE(elector_->isLeader());
  EXPECT_EQ(sentBody(4)["metadata"]["resourceVersion"], "4");
  EXPECT_EQ(finish(), LeaderElector::Outcome::kStopped);
  EXPECT_EQ(sentBody(5)["metadata"]["resourceVersion"], "5");
}

TEST_F(LeaderElectorTest, ADeletedLeaseLosesLeadership) {
  transport_->script.expect("GET", kLeasePath, 404, statusBody(404, "NotFound"))
      .expect("POST", kLeasesPath, 201, lease("me", "1"))
      .expect("PUT", kLeasePath, 404, statusBody(404, "NotFound"));
  start();
  settle(2);
  clock_.advance(2s);
  EXPECT_EQ(outcomeWithoutStop(), LeaderElector::Outcome::kLost);
}

TEST_F(LeaderElectorTest, RenewalsCoverTheLeadingWorkUntilItHasEndedThenTheLeaseIsReleased) {
  std::promise<void> mayEnd;
  std::shared_future<void> mayEndSignal = mayEnd.get_future().share();
  work_ = [this, mayEndSignal](std::stop_token leading) {
    std::mutex mutex;
    std::condition_variable_any cv;
    std::unique_lock lock(mutex);
    cv.wait(lock, leading, [] { return false; });
    note("work stopping");
    mayEndSignal.wait();
    note("work ended");
  };
  transport_->script.expect("GET", kLeasePath, 404, statusBody(404, "NotFound"))
      .expect("POST", kLeasesPath, 201, lease("me", "1"))
      .expect("PUT", kLeasePath, 200, lease("me", "2", microTime(2)))
      .expect("PUT", kLeasePath, 200, lease("", "3", microTime(2)));
  start();
  settle(2);
  stop_.request_stop();
  ASSERT_TRUE(waitForNote("work stopping"));
  clock_.advance(2s);
  settle(3);  // still renewing while the work winds down
  EXPECT_TRUE(elector_->isLeader());
  EXPECT_EQ(sentBody(2)["spec"]["holderIdentity"], "me");
  mayEnd.set_value();
  EXPECT_EQ(outcomeWithoutStop(), LeaderElector::Outcome::kStopped);
  EXPECT_EQ(sentBody(3)["spec"]["holderIdentity"], "") << "released only after the work ended";
  EXPECT_EQ(notes(),
            (std::vector<std::string>{"leader me", "started", "work stopping", "work ended", "stopped"}));
}

TEST_F(LeaderElectorTest, WithoutReleaseOnStopTheLeaseIsLeftToExpire) {
  transport_->script.expect("GET", kLeasePath, 404, statusBody(404, "NotFound"))
      .expect("POST", kLeasesPath, 201, lease("me", "1"));
  LeaderElectionConfig noRelease = config();
  noRelease.releaseOnStop = false;
  start(noRelease);
  settle(2);
  EXPECT_EQ(finish(), LeaderElector::Outcome::kStopped);
  EXPECT_EQ(notes(), (std::vector<std::string>{"leader me", "started", "stopped"}));
}

TEST_F(LeaderElectorTest, FollowersJitterTheirRetries) {
  transport_->script.expect("GET", kLeasePath, 200, lease("other", "1"));
  LeaderElectionConfig jittered = config();
  jittered.jitterFactor = 1.2;
  start(jittered);
  settle(1);
  auto next = clock_.nextDeadline();
  ASSERT_TRUE(next.has_value());
  EXPECT_GE(*next - clock_.now(), 2s);
  EXPECT_LE(*next - clock_.now(), 4400ms);
  EXPECT_EQ(finish(), LeaderElector::Outcome::kStopped);
}

TEST(LeaderElectionConfigTest, InvalidConfigsAreRejectedWithAClearMessage) {
  const LeaderElectionConfig valid{.leaseName = "l", .leaseNamespace = "ns", .identity = "me"};
  EXPECT_TRUE(validate(valid).ok());
  struct Case {
    std::function<void(LeaderElectionConfig&)> change;
    std::string message;
  };
  const std::vector<Case> cases = {
      {[](auto& c) { c.leaseDuration = 10s; },
       "leaseDuration (10s) must be greater than renewDeadline (10s)"},
      {[](auto& c) { c.renewDeadline = 2s; },
       "renewDeadline (2s) must be greater than retryPeriod (2s) x 1.2"},
      {[](auto& c) { c.renewDeadline = 2400ms; },
       "renewDeadline (2400ms) must be greater than retryPeriod (2s) x 1.2"},
      {[](auto& c) { c.retryPeriod = 0s; }, "retryPeriod must be positive"},
      {[](auto& c) { c.leaseName.clear(); }, "leaseName is required"},
      {[](auto& c) { c.leaseNamespace.clear(); }, "leaseNamespace is required"},
      {[](auto& c) { c.jitterFactor = -1; }, "jitterFactor must be zero or positive"},
  };
  for (const auto& testCase : cases) {
    LeaderElectionConfig config = valid;
    testCase.change(config);
    Status status = validate(config);
    ASSERT_FALSE(status.ok()) << testCase.message;
    EXPECT_EQ(status.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(status.error().message.find(testCase.message), std::string::npos) << status.error().message;
    EXPECT_EQ(status.error().message.rfind("leader election: ", 0), 0u) << status.error().message;
  }

  // create() refuses them too, and accepts short timings in the right order.
  auto transport = std::make_shared<FakeTransport>();
  RestClient client(transport, ClusterConfig{});
  LeaderElectionConfig bad = valid;
  bad.renewDeadline = 20s;
  EXPECT_FALSE(LeaderElector::create(client, bad).ok());
  LeaderElectionConfig fast = valid;
  fast.leaseDuration = 4s;
  fast.renewDeadline = 3s;
  fast.retryPeriod = 500ms;
  EXPECT_TRUE(LeaderElector::create(client, fast).ok());
}

TEST(LeaderElectionConfigTest, AnEmptyIdentityBecomesTheHostNameAndARandomSuffix) {
  auto transport = std::make_shared<FakeTransport>();
  RestClient client(transport, ClusterConfig{});
  auto first = LeaderElector::create(client, LeaderElectionConfig{.leaseName = "l", .leaseNamespace = "ns"});
  auto second = LeaderElector::create(client, LeaderElectionConfig{.leaseName = "l", .leaseNamespace = "ns"});
  ASSERT_TRUE(first.ok() && second.ok());
  char host[256] = {};
  ASSERT_EQ(::gethostname(host, sizeof(host) - 1), 0);
  const std::string& identity = (*first)->identity();
  EXPECT_EQ(identity.rfind(std::string(host) + "_", 0), 0u) << identity;
  EXPECT_EQ(identity.size(), std::string(host).size() + 17);
  EXPECT_NE(identity, (*second)->identity());
}

}  // namespace
}  // namespace ipu::kube
