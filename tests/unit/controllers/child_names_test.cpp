#include "ipujob/child_names.h"

#include <regex>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "api/ipujob.h"
#include "common/stable_hash.h"

namespace ipu::controllers {
namespace {

// Kubernetes' own rules (apimachinery validation), written out independently of the code under test.
bool isDns1123Label(const std::string& s) {
  static const std::regex kLabel("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
  return s.size() <= 63 && std::regex_match(s, kLabel);
}
bool isDns1035Label(const std::string& s) {
  static const std::regex kLabel("[a-z]([-a-z0-9]*[a-z0-9])?");
  return s.size() <= 63 && std::regex_match(s, kLabel);
}
bool isDns1123Subdomain(const std::string& s) {
  static const std::regex kSubdomain("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
  return s.size() <= 253 && std::regex_match(s, kSubdomain);
}
bool isLabelValue(const std::string& s) {
  static const std::regex kValue("(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?");
  return s.size() <= 63 && std::regex_match(s, kValue);
}

// A valid IPUJob name of `length` characters: letters and digits, with a dot or dash every so often.
std::string jobName(std::size_t length, char separator = '-') {
  std::string name;
  for (std::size_t i = 0; i < length; ++i) {
    const bool edge = i == 0 || i + 1 == length;
    name += !edge && i % 7 == 6 ? separator : static_cast<char>('a' + i % 26);
  }
  return name;
}

TEST(ChildNamesTest, NamesThatFitKeepTheirPlainForm) {
  EXPECT_EQ(workerPodName("bert", 3), "bert-worker-3");
  EXPECT_EQ(workerHostname("bert", 3), "bert-worker-3");
  EXPECT_EQ(headlessServiceName("bert"), "bert");
  EXPECT_EQ(jobLabelValue("bert"), "bert");
  EXPECT_EQ(runtimeSecretGenerateName("bert"), "bert-ipu-runtime-");
  // Jobs made by earlier versions keep their Secret's derived name.
  EXPECT_EQ(legacyRuntimeSecretName({"ml", "bert", "uid-1"}),
            "bert-ipu-runtime-" + stableHashHex("uid-1", 8));
  // The longest hostname that is still plain: 54 + "-worker-0" = 63.
  const std::string name54 = jobName(54);
  EXPECT_EQ(workerHostname(name54, 0), name54 + "-worker-0");
  EXPECT_EQ(headlessServiceName(jobName(63)), jobName(63));
  EXPECT_EQ(jobLabelValue(jobName(63)), jobName(63));
}

TEST(ChildNamesTest, EveryAcceptedNameGetsValidDistinctChildNamesAtTheBoundaries) {
  for (char separator : {'-', '.'}) {
    for (std::size_t length : {1u, 2u, 52u, 53u, 54u, 55u, 62u, 63u, 64u, 100u, 235u, 236u, 243u, 244u}) {
      const std::string job = jobName(length, separator);
      ASSERT_TRUE(isDns1123Subdomain(job)) << job;
      SCOPED_TRACE(job);
      const int workers = 12;
      ASSERT_LE(static_cast<int>(length), api::maxJobNameLength(workers) + 1);
      std::set<std::string> hostnames;
      for (int k = 0; k < workers; ++k) {
        if (static_cast<int>(length) <= api::maxJobNameLength(k + 1)) {
          EXPECT_TRUE(isDns1123Subdomain(workerPodName(job, k))) << workerPodName(job, k);
        }
        const std::string host = workerHostname(job, k);
        EXPECT_TRUE(isDns1123Label(host)) << host;
        EXPECT_TRUE(host.ends_with("-worker-" + std::to_string(k))) << host;
        hostnames.insert(host);
      }
      EXPECT_EQ(hostnames.size(), static_cast<std::size_t>(workers));
      EXPECT_TRUE(isDns1035Label(headlessServiceName(job))) << headlessServiceName(job);
      EXPECT_TRUE(isLabelValue(jobLabelValue(job))) << jobLabelValue(job);
      // The API server appends 5 characters to a generateName.
      const std::string secret = runtimeSecretGenerateName(job) + "x2k9q";
      EXPECT_TRUE(isDns1123Subdomain(secret)) << secret;
      const std::string legacy = legacyRuntimeSecretName({"ns", job, "0b5ab3a2-6a4e-4f0e-9a51-3f5b2b0f1c77"});
      EXPECT_TRUE(isDns1123Subdomain(legacy)) << legacy;
      // A peer's full name, "<hostname>.<service>.<namespace>.svc.cluster.local", stays within DNS's 253.
      EXPECT_LE(workerHostname(job, workers - 1).size() + headlessServiceName(job).size() + 63 + 19, 253u);
    }
  }
}

TEST(ChildNamesTest, LeadingDigitsAndDotsAreMadeValidWithoutCollisions) {
  EXPECT_TRUE(isDns1035Label(headlessServiceName("1job"))) << headlessServiceName("1job");
  EXPECT_TRUE(headlessServiceName("1job").starts_with("j1job-"));
  EXPECT_TRUE(isDns1035Label(headlessServiceName("9"))) << headlessServiceName("9");
  // "a.b" and "a-b" may both exist in a namespace: their Services and hostnames must differ.
  EXPECT_NE(headlessServiceName("a.b"), headlessServiceName("a-b"));
  EXPECT_NE(workerHostname("a.b", 0), workerHostname("a-b", 0));
  EXPECT_TRUE(isDns1123Label(workerHostname("a.b", 0))) << workerHostname("a.b", 0);
  EXPECT_TRUE(workerHostname("a.b", 0).starts_with("a-b-"));
  // Long names that share their first 100 characters still get different shortened names.
  const std::string a = jobName(100) + "-a", b = jobName(100) + "-b";
  EXPECT_NE(workerHostname(a, 0), workerHostname(b, 0));
  EXPECT_NE(headlessServiceName(a), headlessServiceName(b));
  EXPECT_NE(jobLabelValue(a), jobLabelValue(b));
  // Stable: the same name gives the same children in every release (a new operator finds the old pods).
  EXPECT_EQ(headlessServiceName("a.b"), "a-b-" + headlessServiceName("a.b").substr(4));
  EXPECT_EQ(headlessServiceName("a.b"), headlessServiceName(std::string("a.b")));
}

}  // namespace
}  // namespace ipu::controllers
