// The user guide's way to keep a job's files after its pods are gone (examples/outputs-on-a-volume): the
// admin's StorageClass and local PersistentVolume on a directory of the real node, the user's claim and an
// IPUJob that mounts it at /outputs and writes a profile there. The job ends, cleanPodPolicy: All deletes its
// pod, and the file is on the node's disk byte for byte. Only the image, the command and the node (this
// cluster's) differ from the example.
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <gmock/gmock.h>

#include "operator_on_real_node.h"
#include "yaml_json.h"

namespace ipu::testing {
namespace {

namespace fs = std::filesystem;

std::vector<Json> exampleDocuments(const std::string& file) {
  std::ifstream in(std::string(IPU_EXAMPLES_ROOT) + "/outputs-on-a-volume/" + file);
  return yamlDocumentsToJson(
      std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()));
}

// What the worker writes: `seq 1 20000`, as busybox prints it.
std::string expectedProfile() {
  std::string text;
  for (int i = 1; i <= 20000; ++i) text += std::to_string(i) + "\n";
  return text;
}

class OutputsVolumeTest : public OperatorOnRealNodeTest {
 protected:
  void TearDown() override {
    OperatorOnRealNodeTest::TearDown();
    // Cluster-scoped, so not removed with the namespace.
    if (!pvName_.empty()) kubectl({"delete", "pv", pvName_, "--wait=false"});
    if (!storageClass_.empty()) kubectl({"delete", "storageclass", storageClass_});
    if (!directory_.empty()) fs::remove_all(directory_);
  }

  std::string pvName_, storageClass_, directory_;
};

TEST_F(OutputsVolumeTest, AJobsFilesOutliveItsPodsOnTheExamplesLocalVolume) {
  char pattern[] = "/tmp/ipu-outputs-XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  directory_ = pattern;
  const Json node = getJson("node", TestCluster::get().value("IPU_CLUSTER_REAL_NODE"));
  const std::string hostname = node["metadata"]["labels"].value("kubernetes.io/hostname", "");
  ASSERT_FALSE(hostname.empty()) << node.dump();

  // The admin's part, named for this test (both objects are cluster-scoped).
  std::vector<Json> admin = exampleDocuments("admin-local-volume.yaml");
  ASSERT_EQ(admin.size(), 2u);
  storageClass_ = admin[0]["metadata"]["name"].get<std::string>() + "-" + ns();
  pvName_ = admin[1]["metadata"]["name"].get<std::string>() + "-" + ns();
  admin[0]["metadata"]["name"] = storageClass_;
  admin[1]["metadata"]["name"] = pvName_;
  admin[1]["spec"]["storageClassName"] = storageClass_;
  admin[1]["spec"]["local"]["path"] = directory_;
  admin[1]["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"][0]["values"] =
      Json::array({hostname});
  for (const Json& object : admin) ASSERT_TRUE(kubectl({"create", "-f", "-"}, {.input = object.dump()}).ok());

  // The user's part: the claim as it is, the job on this cluster's node and images.
  std::vector<Json> user = exampleDocuments("ipujob-with-outputs.yaml");
  ASSERT_EQ(user.size(), 2u);
  user[0]["spec"]["storageClassName"] = storageClass_;
  create(user[0].dump());
  Json job = user[1];
  const Json onRealNode =
      Json::parse(jobRunning("unused", Json::array()))["spec"]["workers"]["template"]["spec"];
  Json& podSpec = job["spec"]["workers"]["template"]["spec"];
  for (const char* field : {"nodeSelector", "tolerations", "terminationGracePeriodSeconds"})
    podSpec[field] = onRealNode[field];
  Json& container = podSpec["containers"][0];
  container["image"] = TestCluster::get().value("IPU_CLUSTER_IMAGE_BUSYBOX");
  container["imagePullPolicy"] = "Never";
  container["command"] = Json::array({"sh", "-c"});
  container["args"] = Json::array({"mkdir -p /outputs/profile && seq 1 20000 > /outputs/profile/run.pop"});
  const std::string name = createJob(job.dump());
  ASSERT_TRUE(reachesPhase(name, "Succeeded", 180s));
  EXPECT_TRUE(eventually([&] { return podsOf(name).empty(); }, 60s)) << "cleanPodPolicy: All";

  std::ifstream written(directory_ + "/profile/run.pop", std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(written)), std::istreambuf_iterator<char>());
  EXPECT_EQ(bytes.size(), expectedProfile().size());
  EXPECT_TRUE(bytes == expectedProfile()) << "the file on the node's disk differs from what the worker wrote";
  const Json claim = getJson("pvc", user[0]["metadata"]["name"].get<std::string>());
  EXPECT_EQ(claim["spec"].value("volumeName", ""), pvName_);
}

}  // namespace
}  // namespace ipu::testing
