// The IPUQuota CustomResourceDefinition (crds/ipuquotas.graphcore.ai.yaml) as cluster admins meet it.
#include <gtest/gtest.h>

#include "crd_test.h"

namespace ipu::testing {
namespace {

class IpuQuotaCrdTest : public CrdTest {
 protected:
  static std::string quota(const std::string& name, const std::string& spec) {
    return "apiVersion: graphcore.ai/v1alpha1\nkind: IPUQuota\nmetadata: {name: " + name +
           "}\nspec: " + spec + "\n";
  }
};

TEST_F(IpuQuotaCrdTest, AnAdminsQuotaAppliesAndPrintsItsColumns) {
  create(quota("team", "{maxIPUs: 32, maxJobs: 4, maxPriority: 100}"));
  const auto printed = kubectl({"get", "ipuq", "team"});
  ASSERT_TRUE(printed.ok()) << printed.describe();
  for (const char* column : {"LIMIT", "USED", "RESERVED", "PENDING", "ADMITTED", "WAITING", "AGE"}) {
    EXPECT_NE(printed.out.find(column), std::string::npos) << column << " missing from: " << printed.out;
  }
  const auto wide = kubectl({"get", "ipuquotas", "team", "-o", "wide"});
  EXPECT_NE(wide.out.find("MAXJOBS"), std::string::npos) << wide.out;
  EXPECT_NE(wide.out.find("MAXPRIORITY"), std::string::npos) << wide.out;
  const auto explained = cluster().kubectl({"explain", "ipuquota.spec.maxIPUs"});
  ASSERT_TRUE(explained.ok()) << explained.describe();
  EXPECT_NE(explained.out.find("IPUs the namespace's admitted jobs may hold together"), std::string::npos)
      << explained.out;
  const auto ledger = cluster().kubectl({"explain", "ipuquota.status.admissions"});
  EXPECT_NE(ledger.out.find("The ledger"), std::string::npos) << ledger.out;
}

TEST_F(IpuQuotaCrdTest, InvalidQuotasAreRefusedWithReadableMessages) {
  expectRejected(quota("negative", "{maxIPUs: -1}"), "maxIPUs must be 0 or more");
  expectRejected(quota("missing", "{maxJobs: 2}"), "spec.maxIPUs: Required value");
  expectRejected(quota("jobs", "{maxIPUs: 8, maxJobs: -2}"), "maxJobs must be 0 or more");
  expectRejected(quota("text", "{maxIPUs: \"8\"}"), "spec.maxIPUs: Invalid value: \"string\"");
  expectRejected(quota("huge", "{maxIPUs: 4294967296}"), "spec.maxIPUs: Invalid value");
}

}  // namespace
}  // namespace ipu::testing
