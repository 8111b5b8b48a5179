// `kubectl ipu cp` on the real node: profile-like files a worker wrote, copied out of an image without tar
// (busybox without its tar link, where `kubectl cp` fails) through `kubectl exec` of `ipu-runtime files`,
// byte-identical to what the container holds; and, with spec.outputs, after worker 0's command ended, from
// the pod that keeps them while the job is over and its partition released.
#include <filesystem>
#include <iostream>
#include <map>
#include <sstream>
#include <string>

#include "kubectl_ipu_plugin.h"
#include "operator_on_real_node.h"

namespace ipu::testing {
namespace {

namespace fs = std::filesystem;

class KubectlIpuCpTest : public OperatorOnRealNodeTest {
 protected:
  // "sha256  path" lines, by path relative to `root`, from sha256sum's output.
  static std::map<std::string, std::string> digestsOf(const std::string& text, const std::string& root) {
    std::map<std::string, std::string> digests;
    std::istringstream lines(text);
    for (std::string digest, path; lines >> digest >> path;) digests[path.substr(root.size())] = digest;
    return digests;
  }
};

TEST_F(KubectlIpuCpTest, FilesAWorkerWroteComeOutByteIdenticalFromAnImageWithoutTar) {
  const std::string image = TestCluster::get().value("IPU_CLUSTER_IMAGE_BUSYBOX_NOTAR");
  ASSERT_FALSE(image.empty()) << "the e2e cluster has no busybox-notar image";
  // A profile directory of a few files (one of several megabytes, one empty, one nested), then the worker
  // stays up.
  const std::string script =
      "mkdir -p /work/profiles/run1 && cd /work && "
      "head -c 3000000 /dev/urandom > profiles/run1/graph.pop && "
      "seq 1 50000 > profiles/run1/execution.txt && : > profiles/empty.log && "
      "head -c 1000 /dev/urandom > profiles/archive.bin && echo written && exec sleep 3600";
  ASSERT_EQ(createJob(jobRunning("profiled", Json::array({"sh", "-c", script}), "", image)), "profiled");
  ASSERT_TRUE(reachesPhase("profiled", "Running", 120s)) << jobStatus("profiled").dump();
  ASSERT_TRUE(eventually(
      [&] {
        const auto logs = kubectl({"logs", "profiled-worker-0", "-c", "train"});
        return logs.ok() && logs.out.find("written") != std::string::npos;
      },
      60s));

  // The image has no tar on PATH (busybox's own shell still knows its applet, but kubectl cp execs `tar`
  // directly), and kubectl cp fails.
  const auto tarFile =
      kubectl({"exec", "profiled-worker-0", "-c", "train", "--", "sh", "-c",
               "for d in $(echo $PATH | tr : ' '); do [ -e $d/tar ] && echo $d/tar; done; true"});
  ASSERT_TRUE(tarFile.ok()) << tarFile.describe();
  EXPECT_EQ(tarFile.out, "") << "tar is in the image";
  EXPECT_FALSE(kubectl({"exec", "profiled-worker-0", "-c", "train", "--", "tar", "--help"}).ok());
  const std::string viaKubectl = directory_ + "/via-kubectl";
  EXPECT_FALSE(kubectl({"cp", "profiled-worker-0:/work/profiles", viaKubectl, "-c", "train"}).ok());

  const auto inContainer = kubectl({"exec", "profiled-worker-0", "-c", "train", "--", "sh", "-c",
                                    "find /work/profiles -type f | sort | xargs sha256sum"});
  ASSERT_TRUE(inContainer.ok()) << inContainer.describe();
  const auto expected = digestsOf(inContainer.out, "/work/profiles/");
  ASSERT_EQ(expected.size(), 4u) << inContainer.out;

  // A directory, by a path relative to the worker's working directory (here /), and one file.
  const std::string destination = directory_ + "/profiles";
  const auto copied = kubectlIpu({"cp", "-n", ns(), "profiled:work/profiles", destination});
  ASSERT_TRUE(copied.ok()) << copied.describe();
  std::cout << "$ kubectl ipu cp profiled:work/profiles ./profiles\n" << copied.out;
  EXPECT_NE(copied.out.find("copied 4 files"), std::string::npos) << copied.out;
  const auto here = run({"sh", "-c", "cd " + destination + " && find . -type f | sort | xargs sha256sum"});
  ASSERT_TRUE(here.ok()) << here.describe();
  EXPECT_EQ(digestsOf(here.out, "./"), expected);

  const std::string one = directory_ + "/graph.pop";
  const auto file = kubectlIpu({"cp", "-n", ns(), "profiled:/work/profiles/run1/graph.pop", one});
  ASSERT_TRUE(file.ok()) << file.describe();
  const auto oneDigest = run({"sha256sum", one});
  ASSERT_TRUE(oneDigest.ok());
  EXPECT_EQ(oneDigest.out.substr(0, 64), expected.at("run1/graph.pop"));

  // What is not there, and a worker that does not exist, say so and exit 1.
  const auto missing = kubectlIpu({"cp", "-n", ns(), "profiled:/work/nothing", directory_ + "/nothing"});
  EXPECT_EQ(missing.exitCode, 1) << missing.describe();
  EXPECT_NE(missing.err.find("cannot read /work/nothing"), std::string::npos) << missing.err;
  EXPECT_FALSE(fs::exists(directory_ + "/nothing"));
  const auto noWorker = kubectlIpu({"cp", "-n", ns(), "--worker", "3", "profiled:/work", directory_ + "/w3"});
  EXPECT_EQ(noWorker.exitCode, 1);
  EXPECT_NE(noWorker.err.find("has no worker 3"), std::string::npos) << noWorker.err;
}

TEST_F(KubectlIpuCpTest, WorkerZeroKeepsItsOutputsAfterItsCommandEndedWhileTheJobIsOverAndItsIpusReleased) {
  const std::string image = TestCluster::get().value("IPU_CLUSTER_IMAGE_BUSYBOX_NOTAR");
  ASSERT_FALSE(image.empty()) << "the e2e cluster has no busybox-notar image";
  // The command writes a profile directory, prints its digests, and ends; cleanPodPolicy All would delete
  // every pod at the job's end but for the retention.
  const std::string script =
      "mkdir -p /outputs/run1 && cd /outputs && head -c 2000000 /dev/urandom > run1/graph.pop && "
      "seq 1 20000 > run1/execution.txt && : > empty.log && find /outputs -type f | sort | xargs sha256sum";
  ASSERT_EQ(createJob(jobRunning(
                "kept", Json::array({"sh", "-c", script}),
                R"({"cleanPodPolicy": "All", "outputs": {"path": "/outputs", "retainSeconds": 30}})", image)),
            "kept");
  ASSERT_TRUE(reachesPhase("kept", "Succeeded", 120s)) << jobStatus("kept").dump();
  EXPECT_TRUE(eventually([&] { return partitions().empty(); }, 30s)) << "partition not released";
  ASSERT_TRUE(eventually([&] { return jobStatus("kept").contains("outputs"); }, 30s))
      << jobStatus("kept").dump();
  const Json kept = jobStatus("kept")["outputs"];
  EXPECT_EQ(kept.value("path", ""), "/outputs");
  EXPECT_FALSE(kept.value("retainedUntil", "").empty());
  EXPECT_NE(eventWithReason("kept", "OutputsRetained").find("kubectl ipu cp kept:/outputs"),
            std::string::npos);

  // The pod is still there, its worker container ended, and its only running container (the runtime's image)
  // has no tar either: kubectl cp cannot copy from it.
  const auto pod = kubectl({"get", "pod", "kept-worker-0", "-o", "json"});
  ASSERT_TRUE(pod.ok()) << pod.describe();
  const Json podJson = Json::parse(pod.out);
  EXPECT_EQ(podJson["status"]["phase"], "Running");
  for (const Json& container : podJson["status"]["containerStatuses"]) {
    if (container["name"] == "train") {
      EXPECT_TRUE(container["state"].contains("terminated")) << container.dump();
    }
  }
  EXPECT_FALSE(kubectl({"exec", "kept-worker-0", "-c", "ipu-outputs", "--", "tar", "--help"}).ok());
  EXPECT_FALSE(
      kubectl({"cp", "kept-worker-0:/outputs", directory_ + "/via-kubectl", "-c", "ipu-outputs"}).ok());

  const auto logs = kubectl({"logs", "kept-worker-0", "-c", "train"});
  ASSERT_TRUE(logs.ok()) << logs.describe();
  const auto expected = digestsOf(logs.out, "/outputs/");
  ASSERT_EQ(expected.size(), 3u) << logs.out;
  const std::string destination = directory_ + "/outputs";
  const auto copied = kubectlIpu({"cp", "-n", ns(), "kept:/outputs", destination});
  ASSERT_TRUE(copied.ok()) << copied.describe();
  std::cout << "$ kubectl ipu cp kept:/outputs ./outputs\n" << copied.out;
  const auto here = run({"sh", "-c", "cd " + destination + " && find . -type f | sort | xargs sha256sum"});
  ASSERT_TRUE(here.ok()) << here.describe();
  EXPECT_EQ(digestsOf(here.out, "./"), expected);
  const auto elsewhere = kubectlIpu({"cp", "-n", ns(), "kept:/etc", directory_ + "/etc"});
  EXPECT_EQ(elsewhere.exitCode, 1);
  EXPECT_NE(elsewhere.err.find("only /outputs is kept"), std::string::npos) << elsewhere.err;

  // The retention ends by itself; the pod then goes by cleanPodPolicy.
  EXPECT_TRUE(eventually(
      [&] {
        return !kubectl({"get", "pod", "kept-worker-0"}).ok();
      },
      90s))
      << "worker 0 still there after its retention";
}

}  // namespace
}  // namespace ipu::testing
