#include "ipujob/namespace_profiles.h"

#include <gtest/gtest.h>

namespace ipu::controllers {
namespace {

using api::WorkerPodProfile;

class NamespaceProfilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    namespaces_.apply({kube::WatcherEvent::Kind::kInit, nullptr});
    namespaces_.apply({kube::WatcherEvent::Kind::kInitDone, nullptr});
  }
  void add(const std::string& name, nlohmann::json annotations) {
    nlohmann::json ns = {{"apiVersion", "v1"},
                         {"kind", "Namespace"},
                         {"metadata",
                          {{"name", name},
                           {"uid", "uid-" + name},
                           {"resourceVersion", "1"},
                           {"labels", {{"team", "a"}}},
                           {"annotations", std::move(annotations)}}},
                         {"spec", {{"finalizers", {"kubernetes"}}}}};
    trimNamespaceForCache(ns);
    namespaces_.apply({kube::WatcherEvent::Kind::kApply, ns});
  }
  kube::Store namespaces_;
};

TEST_F(NamespaceProfilesTest, TheAnnotationWinsOverTheDefaultAndATypoNeverWidens) {
  add("research", {{"graphcore.ai/worker-pod-profile", "privileged"}});
  add("teaching", {{"graphcore.ai/worker-pod-profile", "ipu-baseline"}});
  add("typo", {{"graphcore.ai/worker-pod-profile", "priviledged"}});
  add("plain", nlohmann::json::object());
  EXPECT_EQ(namespaceProfile(namespaces_, "research", WorkerPodProfile::kIpuBaseline),
            WorkerPodProfile::kPrivileged);
  EXPECT_EQ(namespaceProfile(namespaces_, "teaching", WorkerPodProfile::kPrivileged),
            WorkerPodProfile::kIpuBaseline);
  EXPECT_EQ(namespaceProfile(namespaces_, "typo", WorkerPodProfile::kPrivileged),
            WorkerPodProfile::kIpuBaseline);
  EXPECT_EQ(namespaceProfile(namespaces_, "plain", WorkerPodProfile::kPrivileged),
            WorkerPodProfile::kPrivileged);
  EXPECT_EQ(namespaceProfile(namespaces_, "unknown", WorkerPodProfile::kIpuBaseline),
            WorkerPodProfile::kIpuBaseline);
}

TEST_F(NamespaceProfilesTest, TheCacheKeepsTheNameAndTheAnnotationOnly) {
  add("research", {{"graphcore.ai/worker-pod-profile", "privileged"}, {"other", std::string(4096, 'x')}});
  const kube::ObjectPtr cached = namespaces_.get("research");
  ASSERT_TRUE(cached);
  EXPECT_EQ((*cached)["metadata"],
            (nlohmann::json{{"name", "research"},
                            {"uid", "uid-research"},
                            {"resourceVersion", "1"},
                            {"annotations", {{"graphcore.ai/worker-pod-profile", "privileged"}}}}));
  EXPECT_FALSE(cached->contains("spec"));
}

}  // namespace
}  // namespace ipu::controllers
