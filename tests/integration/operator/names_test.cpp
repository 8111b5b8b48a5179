// Every IPUJob name the API server accepts runs: worker pods keep the names users type, and the names the
// operator derives (hostnames, the headless Service, label values) are made to fit their own limits.
// What cannot fit is refused at `kubectl apply`, naming the limit.
#include "operator_fixture.h"

namespace ipu::testing {
namespace {

using NamesTest = OperatorTest;

// A valid IPUJob name of `length` characters, a dash every seventh one.
std::string nameOfLength(std::size_t length) {
  std::string name;
  for (std::size_t i = 0; i < length; ++i) {
    name += i > 0 && i + 1 < length && i % 7 == 6 ? '-' : static_cast<char>('a' + i % 26);
  }
  return name;
}

// The user's 4-IPU manifest under `name` (instead of generateName), ending after a second.
std::string manifestNamed(const std::string& name) {
  std::string manifest = manifestExitingWith(0, "", "1s");
  const std::string generated = "generateName: bert-training-multi-ipu-";
  manifest.replace(manifest.find(generated), generated.size(), "name: " + name);
  return manifest;
}

TEST_F(NamesTest, EveryNameTheApiServerAcceptsRunsAndLongerOnesAreRefusedAtTheDoor) {
  const std::vector<std::string> names = {
      nameOfLength(52), nameOfLength(53),  nameOfLength(54),  nameOfLength(55),  nameOfLength(63),
      nameOfLength(64), nameOfLength(244), "7-leading-digit", "dotted.job.name", "dotted-job-name"};
  for (const std::string& name : names) ASSERT_EQ(createJob(manifestNamed(name)), name);

  for (const std::string& name : names) {
    SCOPED_TRACE(name.substr(0, 20) + "… (" + std::to_string(name.size()) + " characters)");
    EXPECT_TRUE(reachesPhase(name, "Succeeded", 120s));
    const Json pod = getJson("pod", name + "-worker-0");
    ASSERT_TRUE(pod.is_object()) << "no pod " << name << "-worker-0";
    const Json spec = pod["spec"];
    const std::string hostname = spec.value("hostname", ""), subdomain = spec.value("subdomain", "");
    EXPECT_LE(hostname.size(), 63u);
    EXPECT_EQ(hostname.find('.'), std::string::npos) << hostname;
    EXPECT_TRUE(getJson("service", subdomain).is_object()) << "no Service " << subdomain;
    // The scale subresource's selector finds the job's pods, whatever the name's length.
    const std::string selector = jobStatus(name).value("selector", "");
    const auto selected = kubectl({"get", "pods", "-l", selector, "-o", "name"});
    ASSERT_TRUE(selected.ok()) << selected.describe();
    EXPECT_EQ(selected.out, "pod/" + name + "-worker-0\n");
  }
  // "dotted.job.name" and "dotted-job-name" share the namespace without sharing a Service or hostname.
  EXPECT_NE(getJson("pod", "dotted.job.name-worker-0")["spec"]["subdomain"],
            getJson("pod", "dotted-job-name-worker-0")["spec"]["subdomain"]);

  for (const std::size_t length : {245u, 253u}) {
    const auto refused =
        kubectl({"create", "-f", "-"}, RunOptions{.input = manifestNamed(nameOfLength(length))});
    EXPECT_FALSE(refused.ok()) << length << " characters accepted";
    EXPECT_NE(refused.err.find("metadata.name is too long: worker pods are named <name>-worker-<index> and a "
                               "pod name has at most 253 characters"),
              std::string::npos)
        << refused.err;
  }
  EXPECT_TRUE(eventually([&] { return partitions().empty(); }, 30s)) << partitions().size() << " left";
}

}  // namespace
}  // namespace ipu::testing
