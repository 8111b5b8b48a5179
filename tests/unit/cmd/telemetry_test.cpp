#include "cmd/telemetry.h"

// cpprestsdk's U() macro would otherwise clash with GoogleTest's template parameters named U.
#define _TURN_OFF_PLATFORM_STRING
#include <chrono>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <cpprest/http_client.h>
#include <gtest/gtest.h>

#include "free_port.h"
#include "job_store.h"

namespace ipu::cmd {
namespace {

using Json = nlohmann::json;

// /metrics as Prometheus reads it: each family's HELP and TYPE lines, then its samples. Prometheus does not
// care in which order a family's samples come, so they are sorted here; families stay in the order served.
std::string normalised(const std::string& text) {
  std::vector<std::vector<std::string>> families;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("# HELP ") || families.empty()) families.emplace_back();
    families.back().push_back(line);
  }
  std::string out;
  for (auto& family : families) {
    const auto samples = family.begin() + std::min<std::ptrdiff_t>(2, std::ssize(family));
    std::sort(samples, family.end());
    for (const auto& line : family) out += line + "\n";
  }
  return out;
}

Json job(const std::string& name, const std::string& phase, Json partitions = Json::array()) {
  Json status = {{"partitions", std::move(partitions)}};
  if (!phase.empty()) status["phase"] = phase;
  return {{"apiVersion", "graphcore.ai/v1alpha1"},
          {"kind", "IPUJob"},
          {"metadata", {{"namespace", "team"}, {"name", name}, {"uid", "uid-" + name}}},
          {"spec", Json::object()},
          {"status", std::move(status)}};
}

Json partition(const std::string& controller, int size, const std::string& state) {
  return {{"id", "k8s_" + controller + "_" + std::to_string(size)},
          {"controller", controller},
          {"size", size},
          {"state", state}};
}

class TelemetryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int attempt = 0; attempt < 5 && baseUrl_.empty(); ++attempt) {
      const metrics::BindAddress address{.host = "127.0.0.1", .port = ipu::testing::freeLoopbackPort()};
      if (telemetry_.serve(address, metrics::BindAddress{.disabled = true}).ok()) {
        baseUrl_ = "http://" + address.toString();
      }
    }
    ASSERT_FALSE(baseUrl_.empty()) << "no free port after 5 attempts";
  }

  void add(Json object) {
    jobs_.apply(kube::WatcherEvent{kube::WatcherEvent::Kind::kApply, std::move(object)});
  }

  std::string scrape() {
    web::http::client::http_client_config config;
    config.set_timeout(std::chrono::seconds(10));
    web::http::client::http_client client(baseUrl_, config);
    auto response = client.request(web::http::methods::GET, "/metrics").get();
    EXPECT_EQ(response.status_code(), 200);
    EXPECT_EQ(response.headers().content_type(), "text/plain; version=0.0.4; charset=utf-8");
    return response.extract_utf8string(/*ignore_content_type=*/true).get();
  }

  testing::JobStore jobs_;
  Telemetry telemetry_;
  std::string baseUrl_;
};

TEST_F(TelemetryTest, AStandbyReplicaServesItsOwnMetricsAtZeroAndNothingFromTheCaches) {
  // The layout of each family (HELP, buckets) is the leader's, below.
  std::vector<std::string> types;
  std::istringstream page(scrape());
  for (std::string line; std::getline(page, line);) {
    if (line.starts_with("# TYPE ")) types.push_back(line.substr(7));
    if (!line.starts_with("#")) {
      EXPECT_TRUE(line.ends_with(" 0")) << line;
    }
  }
  EXPECT_EQ(types, (std::vector<std::string>{"ipu_operator_admission_pass_duration_seconds histogram",
                                             "ipu_operator_leader gauge",
                                             "ipu_operator_reconcile_duration_seconds histogram",
                                             "ipu_operator_time_to_admit_seconds histogram",
                                             "ipu_operator_time_to_running_seconds histogram"}));
}

TEST_F(TelemetryTest, TheLeaderServesEveryMetricWithItsLabelsAndBuckets) {
  add(job("running", "Running", Json::array({partition("pod64", 4, "Active")})));
  add(job("new", ""));
  add(job("queued", "Queued"));
  add(job("done", "Succeeded", Json::array({partition("pod64", 8, "Released")})));
  add(job("creating", "Creating",
          Json::array({partition("pod16", 2, "Planned"), partition("pod64", 16, "Active")})));
  telemetry_.attach(
      {.jobs = &jobs_, .queueLength = [] { return std::size_t{3}; }, .synced = [] { return true; }});
  telemetry_.setLeading(true);
  // Binary fractions, so that every sum prints exactly.
  telemetry_.reconciled(true, 0.015625);
  telemetry_.reconciled(true, 0.00390625);
  telemetry_.reconciled(false, 0.25);
  telemetry_.admitted(12);
  telemetry_.admitted(4000);
  telemetry_.running(40);
  telemetry_.admissionPass(0.0078125);

  EXPECT_EQ(
      normalised(scrape()),
      normalised(
          R"(# HELP ipu_operator_admission_pass_duration_seconds Time one admission pass took (the whole queue planned against V-IPU).
# TYPE ipu_operator_admission_pass_duration_seconds histogram
ipu_operator_admission_pass_duration_seconds_bucket{le="0.005"} 0
ipu_operator_admission_pass_duration_seconds_bucket{le="0.01"} 1
ipu_operator_admission_pass_duration_seconds_bucket{le="0.025"} 1
ipu_operator_admission_pass_duration_seconds_bucket{le="0.05"} 1
ipu_operator_admission_pass_duration_seconds_bucket{le="0.1"} 1
ipu_operator_admission_pass_duration_seconds_bucket{le="0.25"} 1
ipu_operator_admission_pass_duration_seconds_bucket{le="0.5"} 1
ipu_operator_admission_pass_duration_seconds_bucket{le="1"} 1
ipu_operator_admission_pass_duration_seconds_bucket{le="2.5"} 1
ipu_operator_admission_pass_duration_seconds_bucket{le="5"} 1
ipu_operator_admission_pass_duration_seconds_bucket{le="10"} 1
ipu_operator_admission_pass_duration_seconds_bucket{le="+Inf"} 1
ipu_operator_admission_pass_duration_seconds_sum 0.0078125
ipu_operator_admission_pass_duration_seconds_count 1
# HELP ipu_operator_ipujobs IPUJobs by phase.
# TYPE ipu_operator_ipujobs gauge
ipu_operator_ipujobs{phase="Creating"} 1
ipu_operator_ipujobs{phase="Failed"} 0
ipu_operator_ipujobs{phase="Pending"} 1
ipu_operator_ipujobs{phase="Queued"} 1
ipu_operator_ipujobs{phase="Restarting"} 0
ipu_operator_ipujobs{phase="Running"} 1
ipu_operator_ipujobs{phase="Succeeded"} 1
ipu_operator_ipujobs{phase="Suspended"} 0
# HELP ipu_operator_ipus_held IPUs in partitions that IPUJobs hold, by V-IPU controller.
# TYPE ipu_operator_ipus_held gauge
ipu_operator_ipus_held{controller="pod16"} 2
ipu_operator_ipus_held{controller="pod64"} 20
# HELP ipu_operator_leader 1 while this replica runs the controller.
# TYPE ipu_operator_leader gauge
ipu_operator_leader 1
# HELP ipu_operator_reconcile_duration_seconds Time one IPUJob reconcile took.
# TYPE ipu_operator_reconcile_duration_seconds histogram
ipu_operator_reconcile_duration_seconds_bucket{le="0.005"} 1
ipu_operator_reconcile_duration_seconds_bucket{le="0.01"} 1
ipu_operator_reconcile_duration_seconds_bucket{le="0.025"} 2
ipu_operator_reconcile_duration_seconds_bucket{le="0.05"} 2
ipu_operator_reconcile_duration_seconds_bucket{le="0.1"} 2
ipu_operator_reconcile_duration_seconds_bucket{le="0.25"} 3
ipu_operator_reconcile_duration_seconds_bucket{le="0.5"} 3
ipu_operator_reconcile_duration_seconds_bucket{le="1"} 3
ipu_operator_reconcile_duration_seconds_bucket{le="2.5"} 3
ipu_operator_reconcile_duration_seconds_bucket{le="5"} 3
ipu_operator_reconcile_duration_seconds_bucket{le="10"} 3
ipu_operator_reconcile_duration_seconds_bucket{le="+Inf"} 3
ipu_operator_reconcile_duration_seconds_sum 0.26953125
ipu_operator_reconcile_duration_seconds_count 3
# HELP ipu_operator_reconcile_total IPUJob reconciles by result.
# TYPE ipu_operator_reconcile_total counter
ipu_operator_reconcile_total{result="error"} 1
ipu_operator_reconcile_total{result="success"} 2
# HELP ipu_operator_time_to_admit_seconds From an IPUJob's creation to its admission (partitions planned).
# TYPE ipu_operator_time_to_admit_seconds histogram
ipu_operator_time_to_admit_seconds_bucket{le="1"} 0
ipu_operator_time_to_admit_seconds_bucket{le="5"} 0
ipu_operator_time_to_admit_seconds_bucket{le="15"} 1
ipu_operator_time_to_admit_seconds_bucket{le="30"} 1
ipu_operator_time_to_admit_seconds_bucket{le="60"} 1
ipu_operator_time_to_admit_seconds_bucket{le="120"} 1
ipu_operator_time_to_admit_seconds_bucket{le="300"} 1
ipu_operator_time_to_admit_seconds_bucket{le="600"} 1
ipu_operator_time_to_admit_seconds_bucket{le="1800"} 1
ipu_operator_time_to_admit_seconds_bucket{le="3600"} 1
ipu_operator_time_to_admit_seconds_bucket{le="7200"} 2
ipu_operator_time_to_admit_seconds_bucket{le="21600"} 2
ipu_operator_time_to_admit_seconds_bucket{le="86400"} 2
ipu_operator_time_to_admit_seconds_bucket{le="+Inf"} 2
ipu_operator_time_to_admit_seconds_sum 4012
ipu_operator_time_to_admit_seconds_count 2
# HELP ipu_operator_time_to_running_seconds From an IPUJob's creation to all its worker pods running.
# TYPE ipu_operator_time_to_running_seconds histogram
ipu_operator_time_to_running_seconds_bucket{le="1"} 0
ipu_operator_time_to_running_seconds_bucket{le="5"} 0
ipu_operator_time_to_running_seconds_bucket{le="15"} 0
ipu_operator_time_to_running_seconds_bucket{le="30"} 0
ipu_operator_time_to_running_seconds_bucket{le="60"} 1
ipu_operator_time_to_running_seconds_bucket{le="120"} 1
ipu_operator_time_to_running_seconds_bucket{le="300"} 1
ipu_operator_time_to_running_seconds_bucket{le="600"} 1
ipu_operator_time_to_running_seconds_bucket{le="1800"} 1
ipu_operator_time_to_running_seconds_bucket{le="3600"} 1
ipu_operator_time_to_running_seconds_bucket{le="7200"} 1
ipu_operator_time_to_running_seconds_bucket{le="21600"} 1
ipu_operator_time_to_running_seconds_bucket{le="86400"} 1
ipu_operator_time_to_running_seconds_bucket{le="+Inf"} 1
ipu_operator_time_to_running_seconds_sum 40
ipu_operator_time_to_running_seconds_count 1
# HELP ipu_operator_waiting_jobs IPUJobs waiting for admission.
# TYPE ipu_operator_waiting_jobs gauge
ipu_operator_waiting_jobs 2
# HELP ipu_operator_workqueue_depth IPUJob keys ready for a worker.
# TYPE ipu_operator_workqueue_depth gauge
ipu_operator_workqueue_depth 3
)"));
}

TEST_F(TelemetryTest, EachIpuQuotaHasItsLimitUseAndPendingIpus) {
  kube::Store quotas;
  quotas.apply(
      kube::WatcherEvent{kube::WatcherEvent::Kind::kApply,
                         Json{{"metadata", {{"namespace", "team-a"}, {"name", "gold"}}},
                              {"spec", {{"maxIPUs", 24}}},
                              {"status", {{"usedIPUs", 16}, {"reservedIPUs", 4}, {"pendingIPUs", 32}}}}});
  // A quota the controller has not counted yet: its limit only.
  quotas.apply(kube::WatcherEvent{
      kube::WatcherEvent::Kind::kApply,
      Json{{"metadata", {{"namespace", "team-b"}, {"name", "q"}}}, {"spec", {{"maxIPUs", 8}}}}});
  telemetry_.attach({.jobs = &jobs_, .quotas = &quotas, .synced = [] { return true; }});
  telemetry_.setLeading(true);
  const std::string page = scrape();
  for (const char* sample : {"ipu_operator_quota_limit_ipus{namespace=\"team-a\",quota=\"gold\"} 24",
                             "ipu_operator_quota_limit_ipus{namespace=\"team-b\",quota=\"q\"} 8",
                             "ipu_operator_quota_used_ipus{namespace=\"team-a\",quota=\"gold\"} 16",
                             "ipu_operator_quota_reserved_ipus{namespace=\"team-a\",quota=\"gold\"} 4",
                             "ipu_operator_quota_pending_ipus{namespace=\"team-a\",quota=\"gold\"} 32"}) {
    EXPECT_NE(page.find(sample), std::string::npos) << sample << " missing from\n" << page;
  }
  EXPECT_EQ(page.find("ipu_operator_quota_used_ipus{namespace=\"team-b\""), std::string::npos) << page;
  telemetry_.detach();
}

}  // namespace
}  // namespace ipu::cmd
