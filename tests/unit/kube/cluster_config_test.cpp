#include "kube/cluster_config.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "kube/base64.h"

namespace ipu::kube {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    char name[] = "/tmp/ipu-config-test-XXXXXX";
    path_ = ::mkdtemp(name);
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }
  void write(const std::string& name, const std::string& text) const { std::ofstream(path_ / name) << text; }

 private:
  fs::path path_;
};

const std::string kKubeconfig = R"(apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: local
  cluster:
    server: https://127.0.0.1:6443/
    certificate-authority-data: )" +
                                base64Encode("CA PEM") + R"(
- name: remote
  cluster:
    server: https://remote.example:443
    certificate-authority: certs/remote-ca.crt
users:
- name: admin
  user:
    client-certificate-data: )" +
                                base64Encode("CERT PEM") + R"(
    client-key-data: )" + base64Encode("KEY PEM") +
                                R"(
- name: robot
  user:
    tokenFile: robot.token
contexts:
- name: dev
  context: {cluster: local, user: admin, namespace: team-a}
- name: prod
  context: {cluster: remote, user: robot}
)";

TEST(KubeconfigTest, CurrentContextWithInlineData) {
  auto config = parseKubeconfig(kKubeconfig, "/etc/kube");
  ASSERT_TRUE(config.ok()) << config.error().toString();
  EXPECT_EQ(config->server, "https://127.0.0.1:6443");  // trailing slash dropped
  EXPECT_EQ(config->caPem, "CA PEM");
  EXPECT_EQ(config->clientCertPem, "CERT PEM");
  EXPECT_EQ(config->clientKeyPem, "KEY PEM");
  EXPECT_EQ(config->ns, "team-a");
  EXPECT_NE(config->source.find("context dev"), std::string::npos);
}

TEST(KubeconfigTest, NamedContextWithFilesRelativeToTheKubeconfig) {
  TempDir dir;
  fs::create_directories(dir.path() / "certs");
  dir.write("certs/remote-ca.crt", "REMOTE CA");
  dir.write("config", kKubeconfig);
  auto config = loadKubeconfig((dir.path() / "config").string(), "prod");
  ASSERT_TRUE(config.ok()) << config.error().toString();
  EXPECT_EQ(config->server, "https://remote.example:443");
  EXPECT_EQ(config->caPem, "REMOTE CA");
  EXPECT_EQ(config->tokenFile, (dir.path() / "robot.token").string());
  EXPECT_EQ(config->ns, "default");
}

TEST(KubeconfigTest, MalformedInputGivesClearErrors) {
  struct Case {
    std::string yaml;
    std::string message;
  };
  const std::string base = "current-context: c\ncontexts: [{name: c, context: {cluster: k, user: u}}]\n";
  for (const auto& c : std::vector<Case>{
           {"{{{", "malformed YAML"},
           {"- just\n- a list\n", "not a kubeconfig"},
           {"clusters: []\n", "no current-context"},
           {"current-context: nowhere\ncontexts: []\n", "no context named 'nowhere'"},
           {base, "no cluster named 'k'"},
           {base + "clusters: [{name: k, cluster: {server: http://plain:80}}]\n", "must be an https:// URL"},
           {base + "clusters: [{name: k, cluster: {server: 'https://x', insecure-skip-tls-verify: true}}]\n",
            "insecure-skip-tls-verify"},
           {base +
                "clusters: [{name: k, cluster: {server: 'https://x', certificate-authority-data: '***'}}]\n",
            "not valid base64"},
           {base +
                "clusters: [{name: k, cluster: {server: 'https://x', certificate-authority: /no/such/ca}}]\n",
            "cannot read /no/such/ca"},
           {base +
                "clusters: [{name: k, cluster: {server: 'https://x'}}]\nusers: [{name: u, user: "
                "{client-key-data: "
                "'" +
                base64Encode("k") + "'}}]\n",
            "needs both client-certificate and client-key"},
           {base + "clusters: [{name: k, cluster: {server: 'https://x'}}]\nusers: [{name: u, user: {exec: "
                   "{command: "
                   "aws}}}]\n",
            "exec or auth-provider"},
           {"current-context: c\ncontexts: {c: 1}\n", "'contexts' must be a list"},
       }) {
    auto config = parseKubeconfig(c.yaml, "");
    ASSERT_FALSE(config.ok()) << c.yaml;
    EXPECT_EQ(config.error().code, ErrorCode::kInvalidArgument) << c.yaml;
    EXPECT_NE(config.error().message.find(c.message), std::string::npos)
        << "expected '" << c.message << "' in: " << config.error().message;
  }
}

TEST(KubeconfigTest, InsecureSkipTlsVerifyIsRefusedInEverySpellingOfTrue) {
  const std::string base = "current-context: c\ncontexts: [{name: c, context: {cluster: k}}]\n";
  for (const std::string value : {"true", "True", "TRUE", "yes", "on", "1", "y", "'true'"}) {
    auto config = parseKubeconfig(
        base + "clusters: [{name: k, cluster: {server: 'https://x', insecure-skip-tls-verify: " + value +
            "}}]\n",
        "");
    ASSERT_FALSE(config.ok()) << value;
    EXPECT_NE(config.error().message.find("insecure-skip-tls-verify"), std::string::npos) << value;
  }
  for (const std::string value : {"false", "False", "no", "off", "0"}) {
    auto config = parseKubeconfig(
        base + "clusters: [{name: k, cluster: {server: 'https://x', insecure-skip-tls-verify: " + value +
            "}}]\n",
        "");
    EXPECT_TRUE(config.ok()) << value << ": " << config.error().toString();
  }
}

// $KUBECONFIG=a:b as kubectl reads it: the first file to name an entry wins, the first current-context wins,
// each file's relative paths are its own, missing and empty files are skipped.
TEST(KubeconfigTest, AListOfKubeconfigsMergesAsKubectlDoes) {
  TempDir one, two;
  fs::create_directories(two.path() / "certs");
  two.write("certs/remote-ca.crt", "REMOTE CA FROM TWO");
  one.write("config",
            "current-context: prod\nclusters: [{name: remote, cluster: {server: 'https://first:443'}}]\n");
  two.write("config", kKubeconfig);
  two.write("empty", "");
  const std::vector<std::string> list = {(one.path() / "config").string(), "/no/such/kubeconfig",
                                         (two.path() / "empty").string(), (two.path() / "config").string()};
  auto config = loadKubeconfigList(list);
  ASSERT_TRUE(config.ok()) << config.error().toString();
  // Context prod comes from the second file, its cluster "remote" from the first (which named it first).
  EXPECT_EQ(config->server, "https://first:443");
  EXPECT_EQ(config->caPem, "");
  EXPECT_EQ(config->tokenFile, (two.path() / "robot.token").string());
  EXPECT_NE(config->source.find((one.path() / "config").string()), std::string::npos) << config->source;

  // The first current-context wins even when a later file sets another; a context can be asked for.
  auto dev = loadKubeconfigList({(two.path() / "config").string(), (one.path() / "config").string()}, "prod");
  ASSERT_TRUE(dev.ok()) << dev.error().toString();
  EXPECT_EQ(dev->server, "https://remote.example:443");
  EXPECT_EQ(dev->caPem, "REMOTE CA FROM TWO") << "a relative path is resolved against its own file";
}

TEST(KubeconfigTest, AListWithNoFileOrABadFileSaysWhich) {
  auto none = loadKubeconfigList({"/no/such/a", "/no/such/b"});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().code, ErrorCode::kNotFound);
  EXPECT_NE(none.error().message.find("/no/such/a:/no/such/b"), std::string::npos) << none.error().message;

  TempDir dir;
  dir.write("good", kKubeconfig);
  dir.write("bad", "clusters: {not: a list}\n");
  auto bad = loadKubeconfigList({(dir.path() / "good").string(), (dir.path() / "bad").string()});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find((dir.path() / "bad").string() + ": 'clusters' must be a list"),
            std::string::npos)
      << bad.error().message;
  dir.write("broken", "{{{");
  auto broken = loadKubeconfigList({(dir.path() / "broken").string()});
  ASSERT_FALSE(broken.ok());
  EXPECT_NE(broken.error().message.find("malformed YAML"), std::string::npos);
}

// The same merge on texts already read, with the files they name read by the caller (as the fuzzer drives
// it).
TEST(KubeconfigTest, AListOfTextsMergesLikeAListOfFiles) {
  std::vector<std::string> asked;
  FileReader reader = [&](const std::string& path) -> Result<std::string> {
    asked.push_back(path);
    if (path == "/two/certs/remote-ca.crt") return std::string("REMOTE CA FROM TWO");
    return makeError(ErrorCode::kNotFound, "cannot read " + path);
  };
  const KubeconfigText one{
      "/one/config",
      "current-context: prod\nclusters: [{name: remote, cluster: {server: 'https://first:443'}}]\n"};
  const KubeconfigText two{"/two/config", kKubeconfig};
  auto config = parseKubeconfigList({one, {"/two/empty", ""}, two}, "", reader);
  ASSERT_TRUE(config.ok()) << config.error().toString();
  EXPECT_EQ(config->server, "https://first:443");
  EXPECT_EQ(config->caPem, "");
  EXPECT_EQ(config->tokenFile, "/two/robot.token");
  EXPECT_EQ(config->source, "kubeconfig /one/config:/two/config (context prod)");
  EXPECT_EQ(asked, std::vector<std::string>{});

  auto prod = parseKubeconfigList({two, one}, "prod", reader);
  ASSERT_TRUE(prod.ok()) << prod.error().toString();
  EXPECT_EQ(prod->caPem, "REMOTE CA FROM TWO");
  EXPECT_EQ(asked, std::vector<std::string>{"/two/certs/remote-ca.crt"});

  auto none = parseKubeconfigList({{"/a", ""}, {"/b", "# only a comment\n"}});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(none.error().message, "no kubeconfig file in the list '/a:/b' exists");
  auto broken = parseKubeconfigList({two, {"/x/broken", "{{{"}});
  ASSERT_FALSE(broken.ok());
  EXPECT_NE(broken.error().message.find("/x/broken: malformed YAML"), std::string::npos)
      << broken.error().message;
}

TEST(KubeconfigTest, FilesAKubeconfigNamesCanBeReadByTheCaller) {
  const std::string yaml =
      "current-context: c\ncontexts: [{name: c, context: {cluster: k}}]\n"
      "clusters: [{name: k, cluster: {server: 'https://x', certificate-authority: ca.crt}}]\n";
  auto read = parseKubeconfig(
      yaml, "/etc/kube", "", [](const std::string& path) -> Result<std::string> { return "PEM OF " + path; });
  ASSERT_TRUE(read.ok()) << read.error().toString();
  EXPECT_EQ(read->caPem, "PEM OF /etc/kube/ca.crt");
  auto missing = parseKubeconfig(yaml, "/etc/kube", "", [](const std::string& path) -> Result<std::string> {
    return makeError(ErrorCode::kNotFound, "cannot read " + path);
  });
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message, "/etc/kube: certificate-authority: cannot read /etc/kube/ca.crt");
}

TEST(KubeconfigTest, MissingFileIsNotFound) {
  auto config = loadKubeconfig("/no/such/kubeconfig");
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.error().code, ErrorCode::kNotFound);
}

TEST(InClusterConfigTest, ReadsTheServiceAccountMount) {
  TempDir dir;
  dir.write("token", "tok\n");
  dir.write("ca.crt", "CLUSTER CA");
  dir.write("namespace", "ipu-system\n");
  auto config = inClusterConfig(
      {{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}, {"KUBERNETES_SERVICE_PORT", "443"}}, dir.path().string());
  ASSERT_TRUE(config.ok()) << config.error().toString();
  EXPECT_EQ(config->server, "https://10.96.0.1:443");
  EXPECT_EQ(config->caPem, "CLUSTER CA");
  EXPECT_EQ(config->tokenFile, (dir.path() / "token").string());
  EXPECT_EQ(config->ns, "ipu-system");

  auto ipv6 = inClusterConfig({{"KUBERNETES_SERVICE_HOST", "fd00::1"}, {"KUBERNETES_SERVICE_PORT", "443"}},
                              dir.path().string());
  ASSERT_TRUE(ipv6.ok());
  EXPECT_EQ(ipv6->server, "https://[fd00::1]:443");
}

TEST(InClusterConfigTest, OutsideAPodOrWithoutAMountFails) {
  EXPECT_EQ(inClusterConfig({}, "/nonexistent").error().code, ErrorCode::kNotFound);
  auto noToken =
      inClusterConfig({{"KUBERNETES_SERVICE_HOST", "h"}, {"KUBERNETES_SERVICE_PORT", "1"}}, "/nonexistent");
  ASSERT_FALSE(noToken.ok());
  EXPECT_NE(noToken.error().message.find("no service-account token"), std::string::npos);
}

TEST(Base64Test, RoundTripsAndRejectsGarbage) {
  for (const std::string& text : std::vector<std::string>{"", "f", "fo", "foo", "foob", "fooba", "foobar",
                                                          std::string("\0\xff\x10", 3)}) {
    auto decoded = base64Decode(base64Encode(text));
    ASSERT_TRUE(decoded.has_value());
    EXPECT_EQ(*decoded, text);
  }
  EXPECT_EQ(base64Encode("foobar"), "Zm9vYmFy");
  EXPECT_EQ(base64Decode("Zm9v\nYmE=\n"), "fooba");  // line breaks are skipped
  EXPECT_FALSE(base64Decode("Zm9").has_value());     // not a multiple of four
  EXPECT_FALSE(base64Decode("Zm=v").has_value());    // padding in the middle
  EXPECT_FALSE(base64Decode("Zm9*").has_value());    // outside the alphabet
}

}  // namespace
}  // namespace ipu::kube
