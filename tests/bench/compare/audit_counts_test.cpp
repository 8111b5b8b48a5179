#include "audit_counts.h"

#include <sstream>

#include <gtest/gtest.h>

namespace ipu::bench {
namespace {

std::string event(const std::string& id, const std::string& agent, const std::string& verb,
                  const std::string& resource, const std::string& subresource = "",
                  const std::string& stage = "ResponseComplete") {
  nlohmann::json ref = {{"resource", resource}};
  if (!subresource.empty()) ref["subresource"] = subresource;
  return nlohmann::json{
      {"auditID", id}, {"userAgent", agent}, {"verb", verb}, {"stage", stage}, {"objectRef", ref}}
      .dump();
}

std::string byPrefix(const std::string& agent) {
  if (agent.starts_with("mpi-operator")) return "mpi-operator";
  if (agent == "ipu-operator") return "ipu-operator";
  return "";
}

TEST(AuditCountsTest, CountsEachRequestOncePerClientByVerbAndResource) {
  std::istringstream log(event("a", "ipu-operator", "create", "pods") + "\n" +
                         event("b", "ipu-operator", "patch", "ipujobs", "status") + "\n" +
                         event("c", "mpi-operator/v0.8.2 (linux/amd64) kubernetes/$Format", "watch", "pods",
                               "", "ResponseStarted") +
                         "\n" +
                         event("c", "mpi-operator/v0.8.2 (linux/amd64) kubernetes/$Format", "watch", "pods") +
                         "\n" + event("d", "kubectl/v1.37.2", "get", "pods") + "\n");
  const AuditCounts counts = countRequests(log, byPrefix);
  EXPECT_EQ(counts.malformedLines, 0);
  ASSERT_EQ(counts.clients.size(), 2u);
  EXPECT_EQ(counts.clients.at("ipu-operator").total, 2);
  EXPECT_EQ(counts.clients.at("ipu-operator").byVerbResource.at("patch ipujobs/status"), 1);
  EXPECT_EQ(counts.clients.at("mpi-operator").total, 1) << "a watch logged at two stages is one request";
  EXPECT_EQ(counts.clients.at("mpi-operator").byVerbResource.at("watch pods"), 1);
}

TEST(AuditCountsTest, MalformedLinesAreCountedAndSkipped) {
  std::istringstream log(
      "{\"auditID\": \"a\", \"userAgent\": \"ipu-operator\", \"verb\": \"get\"\n"  // torn
      "not json at all\n"
      "[1, 2]\n"
      "{\"auditID\": 7, \"verb\": \"get\"}\n"
      "{\"auditID\": \"x\", \"verb\": 3}\n"
      "{\"auditID\": \"y\", \"verb\": \"get\", \"userAgent\": 5}\n"
      "\n" +
      event("z", "ipu-operator", "list", "nodes") + "\n");
  const AuditCounts counts = countRequests(log, byPrefix);
  EXPECT_EQ(counts.malformedLines, 5);
  EXPECT_EQ(counts.clients.at("ipu-operator").total, 1);
  EXPECT_EQ(counts.clients.at("ipu-operator").byVerbResource.at("list nodes"), 1);
}

TEST(AuditCountsTest, AMissingLogSaysSo) {
  const AuditCounts counts = countRequestsInFile("/nonexistent/audit.log", byPrefix);
  EXPECT_EQ(counts.malformedLines, -1);
  EXPECT_TRUE(counts.clients.empty());
}

}  // namespace
}  // namespace ipu::bench
