// What the tests of many namespaces share: namespaces of the test's own, each with an IPUQuota "team", how an
// admin reads them, and the operator's replicas with leader election (which one leads, killing it).
#pragma once

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "held_ipus.h"
#include "operator_fixture.h"

namespace ipu::testing {

// The replicas of the operator, with leader election in the test's namespace, and which one leads.
class Replicas {
 public:
  Replicas(std::vector<std::string> argv, std::unique_ptr<BackgroundProcess>& first)
      : argv_(std::move(argv)), first_(first) {
    second_ = std::make_unique<BackgroundProcess>(argv_);
  }

  // The identity a replica campaigns with, from its log.
  static std::string identityOf(const BackgroundProcess& replica) {
    const std::string log = replica.stderrText();
    const std::string key = "\"identity\":\"";
    const auto at = log.find(key);
    if (at == std::string::npos) return "";
    return log.substr(at + key.size(), log.find('"', at + key.size()) - at - key.size());
  }

  // Whether `identity` is one of the running replicas' (a killed leader's stays in the Lease until it
  // lapses).
  bool isReplica(const std::string& identity) const {
    const auto matches = [&](const std::unique_ptr<BackgroundProcess>& replica) {
      return replica && !identity.empty() && identityOf(*replica) == identity;
    };
    return matches(first_) || matches(second_);
  }

  // SIGKILLs the replica holding the lease (none may hold it yet: then nothing) and starts a fresh one in
  // its place. True when a leader was killed.
  bool killLeader(const std::string& holder) {
    for (auto* replica : {&first_, &second_}) {
      if (!*replica || identityOf(**replica) != holder) continue;
      ::kill((*replica)->pid(), SIGKILL);
      EXPECT_EQ((*replica)->stop(), 128 + SIGKILL);
      log_ += (*replica)->stderrText();
      *replica = std::make_unique<BackgroundProcess>(argv_);
      return true;
    }
    return false;
  }

  ~Replicas() {
    if (second_) {
      EXPECT_EQ(second_->stop(), 0) << "standby replica exit status";
    }
  }

  // What the operator fixture does not print on a failure: the killed replicas' logs, then the second
  // replica's, still running (a leader that stalled may be that one).
  std::string logs() const {
    return "---- replaced replicas ----\n" + log_ + "---- the second replica, still running ----\n" +
           (second_ ? second_->stderrText() : "");
  }

 private:
  std::string log_;
  std::vector<std::string> argv_;
  std::unique_ptr<BackgroundProcess>& first_;
  std::unique_ptr<BackgroundProcess> second_;
};

class TeamsTest : public OperatorTest {
 protected:
  // A namespace of the test's own with an IPUQuota of `maxIpus` named "team".
  std::string teamNamespace(const std::string& suffix, int maxIpus) {
    const std::string name = ns() + "-" + suffix;
    EXPECT_TRUE(cluster().kubectl({"create", "namespace", name}).ok());
    teams_.push_back(name);
    EXPECT_TRUE(eventually(
        [&] {
          return cluster().kubectl({"-n", name, "get", "serviceaccount", "default"}).ok();
        },
        30s));
    setQuota(name, maxIpus);
    return name;
  }

  // Sets maxIPUs of an existing quota; the resourceVersion the API server stored the change at (an etcd
  // revision: comparable with the jobs' in this test's cluster).
  std::uint64_t changeQuota(const std::string& team, int maxIpus) {
    auto patched = cluster().kubectl({"-n", team, "patch", "ipuquota", "team", "--type", "merge", "-p",
                                      "{\"spec\":{\"maxIPUs\":" + std::to_string(maxIpus) + "}}", "-o",
                                      "jsonpath={.metadata.resourceVersion}"});
    EXPECT_TRUE(patched.ok()) << patched.describe();
    return patched.ok() ? std::stoull(patched.out) : 0;
  }

  void setQuota(const std::string& team, int maxIpus) {
    const std::string quota =
        "apiVersion: graphcore.ai/v1alpha1\nkind: IPUQuota\nmetadata: {name: team}\n"
        "spec: {maxIPUs: " +
        std::to_string(maxIpus) + "}\n";
    auto applied = cluster().kubectl({"-n", team, "apply", "-f", "-"}, RunOptions{.input = quota});
    ASSERT_TRUE(applied.ok()) << applied.describe();
  }

  Json teamJob(const std::string& team, const std::string& job) {
    auto got = cluster().kubectl({"-n", team, "get", "ipujob", job, "-o", "json"});
    return got.ok() ? Json::parse(got.out) : Json();
  }

  std::string teamPhase(const std::string& team, const std::string& job) {
    return teamJob(team, job).value("status", Json::object()).value("phase", "");
  }

  // The IPUQuota's printed row as kubectl shows it to an admin: LIMIT USED RESERVED PENDING ADMITTED WAITING.
  std::vector<std::string> quotaRow(const std::string& team) {
    auto printed = cluster().kubectl({"-n", team, "get", "ipuquota", "team", "--no-headers"});
    std::vector<std::string> columns;
    std::istringstream words(printed.out);
    for (std::string word; words >> word;) columns.push_back(word);
    return columns.size() >= 7 ? std::vector<std::string>(columns.begin() + 1, columns.begin() + 7) : columns;
  }

  // SIGKILLs the replica that leads, once one of them holds the Lease (a killed leader's identity stays in it
  // until a replica takes it over), and starts a fresh one in its place.
  ::testing::AssertionResult killLeader(Replicas& replicas) {
    std::string holder;
    const auto led = [&] {
      const Json lease = getJson("lease", "ipu-operator");
      holder = lease.is_object() ? lease["spec"].value("holderIdentity", "") : "";
      return replicas.isReplica(holder);
    };
    if (!eventually(led, 60s)) {
      return ::testing::AssertionFailure() << "no running replica took the Lease; holder: " << holder;
    }
    if (!replicas.killLeader(holder)) return ::testing::AssertionFailure() << "could not kill " << holder;
    return ::testing::AssertionSuccess();
  }

  void TearDown() override {
    // Jobs go while the operator runs, so their finalizers are honoured; then their namespaces.
    for (const std::string& team : teams_) {
      cluster().kubectl({"-n", team, "delete", "ipujobs", "--all", "--timeout", "90s"});
      cluster().kubectl({"delete", "namespace", team, "--wait=false"});
    }
    OperatorTest::TearDown();
  }

  std::vector<std::string> teams_;
};

}  // namespace ipu::testing
