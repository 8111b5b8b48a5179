// The manager's start and stop: a stop while the caches cannot sync is a clean stop, a cache that never syncs
// fails run() with the resource named, and a controller's reconciler sees the cached object.
#include "ctrl/manager.h"

#include <thread>

#include <gtest/gtest.h>

#include "fake_transport.h"

namespace ipu::ctrl {
namespace {

using namespace std::chrono_literals;

const kube::ResourceRef kJobs{"graphcore.ai", "v1alpha1", "ipujobs", true};

class ManagerTest : public ::testing::Test {
 protected:
  // No request is scripted: every list fails, so no cache ever syncs.
  std::shared_ptr<testing::FakeTransport> transport_ = std::make_shared<testing::FakeTransport>();
  kube::RestClient client_{transport_, kube::ClusterConfig{}, kube::ClientOptions{.maxRetries = 0}};
};

TEST_F(ManagerTest, AStopWhileTheCachesCannotSyncIsACleanStop) {
  Manager manager(client_, {.leaderElection = std::nullopt, .cacheSyncTimeout = 60s});
  manager.informer(kJobs);
  std::stop_source stop;
  std::jthread stopper([&stop] {
    std::this_thread::sleep_for(200ms);
    stop.request_stop();
  });
  const auto started = std::chrono::steady_clock::now();
  const Status ran = manager.run(stop.get_token());
  EXPECT_TRUE(ran.ok()) << ran.error().toString();
  EXPECT_LT(std::chrono::steady_clock::now() - started, 10s) << "the stop waited for the sync timeout";
  EXPECT_FALSE(manager.cachesSynced());
}

TEST_F(ManagerTest, ACacheThatNeverSyncsFailsRunNamingIt) {
  Manager manager(client_, {.leaderElection = std::nullopt, .cacheSyncTimeout = 300ms});
  manager.informer(kJobs);
  const Status ran = manager.run({});
  ASSERT_FALSE(ran.ok());
  EXPECT_EQ(ran.error().code, ErrorCode::kDeadlineExceeded);
  EXPECT_NE(ran.error().message.find("ipujobs"), std::string::npos) << ran.error().message;
}

TEST_F(ManagerTest, InformersAreSharedPerResourceAndSelector) {
  Manager manager(client_);
  EXPECT_EQ(&manager.informer(kJobs), &manager.informer(kJobs));
  EXPECT_NE(&manager.informer(kube::ResourceRef::pods(), {.labelSelector = "a"}),
            &manager.informer(kube::ResourceRef::pods(), {.labelSelector = "b"}));
}

}  // namespace
}  // namespace ipu::ctrl
