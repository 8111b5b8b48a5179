// /metrics, /healthz and /readyz of the running operator, as Prometheus and the kubelet read them.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "free_port.h"
#include "operator_fixture.h"

namespace ipu::testing {
namespace {

class TelemetryTest : public OperatorTest {
 protected:
  bool startsOperatorInSetUp() const override { return false; }
};

TEST_F(TelemetryTest, MetricsAndProbesReportTheJobs) {
  const std::string metrics = "127.0.0.1:" + std::to_string(freeLoopbackPort());
  const std::string probes = "127.0.0.1:" + std::to_string(freeLoopbackPort());
  startOperator({"--metrics-bind-address", metrics, "--health-probe-bind-address", probes});
  const auto get = [](const std::string& url) { return run({"curl", "-sS", "-w", "\n%{http_code}", url}); };

  ASSERT_TRUE(eventually([&] { return get("http://" + probes + "/readyz").out == "ok\n200"; }, 60s))
      << get("http://" + probes + "/readyz?verbose").describe();
  EXPECT_EQ(get("http://" + probes + "/healthz").out, "ok\n200");

  const std::string job = createJob(readFile(kFourIpuManifest));
  ASSERT_TRUE(reachesPhase(job, "Running"));
  std::string text;
  ASSERT_TRUE(eventually(
      [&] {
        text = get("http://" + metrics + "/metrics").out;
        return text.find("ipu_operator_time_to_running_seconds_count 1") != std::string::npos;
      },
      30s))
      << text;
  for (const char* expected :
       {"ipu_operator_leader 1", "ipu_operator_ipujobs{phase=\"Running\"} 1",
        "ipu_operator_ipus_held{controller=\"pod64\"} 4", "ipu_operator_time_to_admit_seconds_count 1",
        "ipu_operator_waiting_jobs 0", "# TYPE ipu_operator_reconcile_duration_seconds histogram",
        "ipu_operator_reconcile_total{result=\"success\"}"}) {
    EXPECT_NE(text.find(expected), std::string::npos) << expected << " missing from\n" << text;
  }
  EXPECT_NE(get("http://" + metrics + "/healthz").out.find("404"), std::string::npos)
      << "probes have their own port";
}

TEST_F(TelemetryTest, ATakenPortStopsTheOperatorWithAClearMessage) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(::listen(fd, 1), 0);
  socklen_t length = sizeof(address);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  const std::string taken = "127.0.0.1:" + std::to_string(ntohs(address.sin_port));
  startOperator({"--metrics-bind-address", taken});
  ASSERT_TRUE(eventually([&] { return exited(operator_->pid()); }, 30s))
      << "the operator ran with its port taken";
  const int status = operator_->stop();
  ::close(fd);
  EXPECT_EQ(status, 1);
  EXPECT_NE(operator_->stderrText().find(taken), std::string::npos) << operator_->stderrText();
  operator_.reset();  // nothing to stop in TearDown
}

}  // namespace
}  // namespace ipu::testing
