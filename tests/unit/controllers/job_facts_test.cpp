#include "admission/job_facts.h"

#include <memory>
#include <vector>

#include <gtest/gtest.h>

namespace ipu::controllers {
namespace {

using Json = nlohmann::json;

Json job(const std::string& name, const std::string& version) {
  return {{"apiVersion", "graphcore.ai/v1alpha1"},
          {"kind", "IPUJob"},
          {"metadata",
           {{"namespace", "ns"},
            {"name", name},
            {"uid", "uid-" + name},
            {"resourceVersion", version},
            {"generation", 1}}},
          {"spec", {{"ipusPerJobInstance", "4"}}}};
}

Json holdingOne(Json object) {
  object["status"] = {
      {"phase", "Running"},
      {"partitions",
       Json::array({{{"id", "p-1"}, {"size", 4}, {"controller", "pod64"}, {"state", "Active"}}})}};
  return object;
}

TEST(JobFactsTest, ReadFromTheObject) {
  const JobFacts facts = factsOf(holdingOne(job("a", "7")));
  EXPECT_EQ(facts.key, "ns/a");
  EXPECT_EQ(facts.uid, "uid-a");
  EXPECT_EQ(facts.generation, "1");
  EXPECT_TRUE(facts.alive);
  EXPECT_FALSE(facts.suspended);
  ASSERT_EQ(facts.held.size(), 1u);
  EXPECT_EQ(facts.held.front().id, "p-1");
  ASSERT_TRUE(facts.heldQuota);
  EXPECT_EQ(facts.heldQuota->ipus, 4);
  EXPECT_FALSE(facts.request) << "parsed only when a pass asks";
}

std::shared_ptr<const Json> cached(Json object) {
  return std::make_shared<const Json>(std::move(object));
}

TEST(JobFactsTest, TakenAgainForEachNewObjectAndOnlyThen) {
  JobFactsCache cache;
  const auto version1 = cached(job("a", "1"));
  EXPECT_TRUE(cache.of(version1).held.empty());
  cache.of(version1).request = std::optional<AdmissionRequest>();  // what a pass parsed for this object
  EXPECT_TRUE(cache.of(version1).request) << "the same object: the same facts, the request kept";
  const auto version2 = cached(holdingOne(job("a", "2")));  // the store's next version of the job
  const JobFacts& moved = cache.of(version2);
  EXPECT_EQ(moved.held.size(), 1u) << "a new object is read afresh";
  EXPECT_FALSE(moved.request) << "and its request parsed afresh when asked";
}

TEST(JobFactsTest, AnObjectMadeWhereAFreedOneWasIsReadAfresh) {
  JobFactsCache cache;
  auto first = cached(job("a", "1"));
  const Json* address = first.get();
  cache.of(first).request = std::optional<AdmissionRequest>();
  first.reset();
  // Allocate until the allocator hands the freed address out again (it usually does at once).
  std::vector<std::shared_ptr<const Json>> made;
  for (int i = 0; i < 1000; ++i) {
    made.push_back(cached(holdingOne(job("b", "1"))));
    if (made.back().get() == address) break;
  }
  for (const auto& object : made) {
    const JobFacts& facts = cache.of(object);
    EXPECT_EQ(facts.key, "ns/b");
    EXPECT_FALSE(facts.request);
  }
}

TEST(JobFactsTest, ASweepForgetsTheJobsNotLookedAtSinceTheLastOne) {
  JobFactsCache cache;
  const auto a = cached(job("a", "1"));
  const auto b = cached(job("b", "1"));
  cache.of(a);
  cache.of(b);
  cache.sweep();
  EXPECT_EQ(cache.size(), 2u);
  cache.of(a);  // b is gone from the store: the next walk does not meet it
  cache.sweep();
  EXPECT_EQ(cache.size(), 1u);
  cache.of(a);
  cache.sweep();
  EXPECT_EQ(cache.size(), 1u);
}

}  // namespace
}  // namespace ipu::controllers
