#include "kube/cache_trim.h"

#include <gtest/gtest.h>

namespace ipu::kube {
namespace {

TEST(CacheTrimTest, DropsManagedFieldsAndKubectlsCopyAndKeepsEverythingElse) {
  Json job = Json::parse(R"({"metadata": {"name": "bert", "uid": "u", "labels": {"team": "nlp"},
      "managedFields": [{"manager": "kubectl", "fieldsV1": {"f:spec": {}}}],
      "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{\"spec\": {}}", "owner": "ml"}},
      "spec": {"ipusPerJobInstance": "4"}, "status": {"phase": "Running"}})");
  Json expected = job;
  expected["metadata"].erase("managedFields");
  expected["metadata"]["annotations"].erase("kubectl.kubernetes.io/last-applied-configuration");
  stripBookkeeping(job);
  EXPECT_EQ(job, expected);
}

TEST(CacheTrimTest, AnAnnotationMapLeftEmptyGoes) {
  Json job = Json::parse(
      R"({"metadata": {"name": "bert", "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"}}})");
  stripBookkeeping(job);
  EXPECT_EQ(job, Json::parse(R"({"metadata": {"name": "bert"}})"));
}

TEST(CacheTrimTest, ObjectsOfAnyShapeAreLeftAsTheyAre) {
  for (const char* text :
       {R"(null)", R"("x")", R"({"metadata": 1})", R"({"metadata": {"annotations": [1]}})"}) {
    Json object = Json::parse(text);
    stripBookkeeping(object);
    EXPECT_EQ(object, Json::parse(text));
  }
}

}  // namespace
}  // namespace ipu::kube
