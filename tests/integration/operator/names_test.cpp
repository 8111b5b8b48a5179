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
  return withName(manifestExitingWith(0, "", "1s"), name);
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

// A job deleted and created again under its name while the garbage collector still holds the earlier one's
// Service (here: a finalizer keeps it): the new job waits for it rather than adopting a Service that would
// then be collected under its pods. A user's own Service under the name fails the job, releasing its IPUs.
TEST_F(NamesTest, ANameReusedWhileTheEarlierJobsChildrenRemainWaitsAndAForeignOneFails) {
  const std::string earlier = R"({"apiVersion":"v1","kind":"Service","metadata":{"name":"reused",
      "finalizers":["ipu-operator.dev/test-hold"],
      "ownerReferences":[{"apiVersion":"graphcore.ai/v1alpha1","kind":"IPUJob","name":"reused",
                          "uid":"00000000-0000-0000-0000-000000000001","controller":true}]},
      "spec":{"clusterIP":"None","selector":{"nobody":"x"}}})";
  create(earlier);
  // The garbage collector sees that owner is gone and deletes the Service; the finalizer holds it.
  ASSERT_TRUE(eventually(
      [&] { return getJson("service", "reused")["metadata"].contains("deletionTimestamp"); }, 60s));
  const std::string job = createJob(manifestNamed("reused"));
  ASSERT_TRUE(saysInLastMessage(job, "of an earlier IPUJob named reused"));
  EXPECT_TRUE(getJson("pod", "reused-worker-0").is_null()) << "a pod started with the earlier job's Service";

  ASSERT_TRUE(kubectl({"patch", "service", "reused", "--type", "json", "-p",
                       R"([{"op":"remove","path":"/metadata/finalizers"}])"})
                  .ok());
  ASSERT_TRUE(reachesPhase(job, "Succeeded", 90s));
  const Json service = getJson("service", "reused");
  ASSERT_TRUE(service.is_object());
  EXPECT_EQ(service["metadata"]["ownerReferences"][0].value("uid", ""),
            getJson("ipujob", job)["metadata"].value("uid", ""));

  create(R"({"apiVersion":"v1","kind":"Service","metadata":{"name":"taken"},
             "spec":{"clusterIP":"None","selector":{"app":"mine"}}})");
  const std::string clash = createJob(manifestNamed("taken"));
  ASSERT_TRUE(reachesPhase(clash, "Failed", 60s));
  EXPECT_EQ(jobStatus(clash).value("lastMessage", ""),
            "Service " + ns() +
                "/taken already exists and does not belong to this job: delete it or give the "
                "job another name");
  EXPECT_TRUE(eventually([&] { return partitions().empty(); }, 30s)) << "the failed job kept its partition";
  EXPECT_TRUE(getJson("service", "taken").is_object()) << "the user's Service was touched";
}

}  // namespace
}  // namespace ipu::testing
