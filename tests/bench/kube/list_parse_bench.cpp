// How fast the informers' parse reads a list page of 500 worker pods (what a restart reads 16 times at 1,000
// eight-worker jobs, and a watch event at a time while jobs run), leaving out what the pod cache drops
// (`spec`, `metadata.managedFields`), against three references in the same run:
// - the lower bound for any parse built on nlohmann_json: its lexer reading the page, building nothing;
// - a whole parse (`Json::parse`), as a client that drops the fields afterwards does;
// - nlohmann's parser callback leaving out the same fields (what parseListSkipping did before).
// Each is run 15 times, interleaved; the fastest and the median are reported, the ratios use the medians.
// Usage: list_parse_bench [OUTPUT.json]; JSON also goes to stdout. Fails (exit 1) only when the parse's tree
// differs from the whole parse's with the fields erased.
#include <algorithm>
#include <array>
#include <chrono>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kube/list_parse.h"

namespace {

using ipu::kube::Json;
using Clock = std::chrono::steady_clock;

constexpr int kPods = 500;
constexpr int kRepeats = 15;
const std::vector<std::string> kSkipped{"spec", "metadata.managedFields"};

// A worker pod as the API server returns it in a list (kwok node, three field managers), about 4 KB.
std::string pod(int i) {
  const std::string n = std::to_string(i);
  return R"({"metadata":{"name":"job-)" + n + R"(-worker-0","generateName":"","namespace":"bench",
"uid":"6f1c2a7e-0000-4000-8000-)" +
         std::string(12 - n.size(), '0') + n + R"(","resourceVersion":")" + std::to_string(100000 + i) +
         R"(","creationTimestamp":"2026-11-29T10:00:00Z",
"labels":{"graphcore.ai/job-name":"job-)" +
         n + R"(","graphcore.ai/worker-index":"0","graphcore.ai/job-uid":"0f0e"},
"annotations":{"graphcore.ai/partition":"job-)" +
         n + R"(-0","graphcore.ai/runtime-version":"1"},
"ownerReferences":[{"apiVersion":"graphcore.ai/v1alpha1","kind":"IPUJob","name":"job-)" +
         n + R"(",
"uid":"0f0e","controller":true,"blockOwnerDeletion":true}],"finalizers":["graphcore.ai/worker"],
"managedFields":[{"manager":"ipu-operator","operation":"Update","apiVersion":"v1","time":"2026-11-29T10:00:00Z",
"fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:annotations":{".":{},"f:graphcore.ai/partition":{}},
"f:labels":{".":{},"f:graphcore.ai/job-name":{},"f:graphcore.ai/worker-index":{}},"f:ownerReferences":{
".":{},"k:{\"uid\":\"0f0e\"}":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"worker\"}":{".":{},"f:args":{},
"f:command":{},"f:env":{".":{},"k:{\"name\":\"IPUOF_VIPU_API_PARTITION_ID\"}":{".":{},"f:name":{},"f:value":{}}},
"f:image":{},"f:name":{},"f:resources":{},"f:securityContext":{".":{},"f:capabilities":{".":{},"f:add":{}}},
"f:volumeMounts":{}}},"f:hostIPC":{},"f:nodeSelector":{},"f:restartPolicy":{},"f:volumes":{}}}},
{"manager":"kwok","operation":"Update","apiVersion":"v1","time":"2026-11-29T10:00:01Z","fieldsType":"FieldsV1",
"fieldsV1":{"f:status":{"f:conditions":{},"f:containerStatuses":{},"f:hostIP":{},"f:phase":{},"f:podIP":{},
"f:startTime":{}}},"subresource":"status"}]},
"spec":{"volumes":[{"name":"shm","emptyDir":{"medium":"Memory","sizeLimit":"64Gi"}},{"name":"ipu-runtime",
"emptyDir":{}},{"name":"job-tls","secret":{"secretName":"job-)" +
         n + R"(-tls","defaultMode":256}}],
"initContainers":[{"name":"ipu-runtime","image":"ipu-runtime:dev","command":["/ipu-runtime","install","/opt/ipu"],
"volumeMounts":[{"name":"ipu-runtime","mountPath":"/opt/ipu"}],"imagePullPolicy":"IfNotPresent"}],
"containers":[{"name":"worker","image":"debian-mpi:dev","command":["/opt/ipu/ipu-runtime","run","--"],
"args":["python3","train.py","--epochs","10"],"env":[{"name":"IPUOF_VIPU_API_PARTITION_ID","value":"job-)" +
         n + R"(-0"},{"name":"IPU_JOB_WORKERS","value":"8"}],"resources":{"limits":{"memory":"8Gi"}},
"volumeMounts":[{"name":"shm","mountPath":"/dev/shm"},{"name":"ipu-runtime","mountPath":"/opt/ipu"},
{"name":"job-tls","mountPath":"/etc/ipu-job/tls","readOnly":true}],"terminationMessagePath":"/dev/termination-log",
"terminationMessagePolicy":"File","imagePullPolicy":"IfNotPresent","securityContext":{"capabilities":
{"add":["IPC_LOCK"]}}}],"restartPolicy":"Never","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst",
"nodeSelector":{"graphcore.ai/ipu-host":"true"},"serviceAccountName":"default","nodeName":"kwok-node-)" +
         n + R"(","hostIPC":true,"hostname":"job-)" + n + R"(-worker-0","subdomain":"job-)" + n + R"(",
"schedulerName":"default-scheduler","tolerations":[{"key":"kwok.x-k8s.io/node","operator":"Exists",
"effect":"NoSchedule"},{"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute",
"tolerationSeconds":300}],"priority":0,"enableServiceLinks":true,"preemptionPolicy":"PreemptLowerPriority"},
"status":{"phase":"Running","conditions":[{"type":"Initialized","status":"True","lastProbeTime":null,
"lastTransitionTime":"2026-11-29T10:00:01Z"},{"type":"Ready","status":"True","lastProbeTime":null,
"lastTransitionTime":"2026-11-29T10:00:01Z"},{"type":"PodScheduled","status":"True","lastProbeTime":null,
"lastTransitionTime":"2026-11-29T10:00:00Z"}],"hostIP":"10.0.0.)" +
         std::to_string(i % 250) + R"(",
"podIP":"10.244.)" +
         std::to_string(i % 250) + R"(.2","podIPs":[{"ip":"10.244.)" + std::to_string(i % 250) +
         R"(.2"}],"startTime":"2026-11-29T10:00:01Z","containerStatuses":[{"name":"worker","state":{"running":
{"startedAt":"2026-11-29T10:00:01Z"}},"lastState":{},"ready":true,"restartCount":0,"image":"debian-mpi:dev",
"imageID":"","started":true}],"qosClass":"Burstable"}})";
}

std::string page() {
  std::string body = R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"200000",)"
                     R"("continue":"eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ"},"items":[)";
  for (int i = 0; i < kPods; ++i) body += (i ? "," : "") + pod(i);
  return body + "]}";
}

// Reads past every value, keeps nothing: no parse built on this lexer can be faster.
struct LexOnly final : nlohmann::json_sax<Json> {
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }
};

// nlohmann's parser callback leaving out the same item fields: a value of every key, a call per event.
Json parseWithCallback(const std::string& body) {
  std::array<std::string, 5> keys;
  return Json::parse(
      body,
      [&keys](int depth, Json::parse_event_t event, Json& parsed) {
        if (event != Json::parse_event_t::key || depth > 4) return true;
        keys[static_cast<std::size_t>(depth)] = parsed.get<std::string>();
        if (depth < 3 || keys[1] != "items") return true;
        const std::string path = depth == 3 ? keys[3] : keys[3] + "." + keys[4];
        return std::find(kSkipped.begin(), kSkipped.end(), path) == kSkipped.end();
      },
      false);
}

struct Contender {
  std::string name;
  std::function<std::size_t(const std::string&)> run;  // returns something of the result, kept alive
  std::vector<double> ms;
};

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const std::string body = page();

  Json expected = Json::parse(body);
  for (Json& item : expected["items"]) {
    item.erase("spec");
    item["metadata"].erase("managedFields");
  }
  if (ipu::kube::parseListSkipping(body, kSkipped) != expected || parseWithCallback(body) != expected) {
    std::cerr << "list_parse_bench: a parse's tree differs from the whole parse's with the fields erased\n";
    return 1;
  }

  std::vector<Contender> contenders{
      {"lexer only (lower bound)",
       [](const std::string& text) {
         LexOnly handler;
         return static_cast<std::size_t>(Json::sax_parse(text, &handler));
       },
       {}},
      {"whole parse (Json::parse)",
       [](const std::string& text) { return Json::parse(text)["items"].size(); },
       {}},
      {"parser callback, fields left out",
       [](const std::string& text) { return parseWithCallback(text)["items"].size(); },
       {}},
      {"parseListSkipping",
       [](const std::string& text) { return ipu::kube::parseListSkipping(text, kSkipped)["items"].size(); },
       {}},
  };
  std::size_t sink = 0;
  for (int repeat = 0; repeat < kRepeats; ++repeat) {
    for (auto& contender : contenders) {
      const auto started = Clock::now();
      sink += contender.run(body);
      contender.ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - started).count());
    }
  }

  const double ours = median(contenders.back().ms);
  Json out{{"benchmark", "list_parse"},
           {"page", {{"pods", kPods}, {"bytes", body.size()}, {"left_out", kSkipped}}},
           {"repeats", kRepeats},
           {"contenders", Json::array()}};
  std::cout << "one page of " << kPods << " worker pods, " << body.size() / 1024 << " KiB, median of "
            << kRepeats << ":\n";
  for (const auto& contender : contenders) {
    const double med = median(contender.ms);
    const double mbPerSecond = static_cast<double>(body.size()) / 1e6 / (med / 1e3);
    out["contenders"].push_back({{"name", contender.name},
                                 {"fastest_ms", *std::min_element(contender.ms.begin(), contender.ms.end())},
                                 {"median_ms", med},
                                 {"mb_per_second", mbPerSecond},
                                 {"parseListSkipping_over_this", ours / med}});
    std::cout << "  " << contender.name << ": " << med << " ms (" << mbPerSecond
              << " MB/s); parseListSkipping / this " << ours / med << "\n";
  }
  out["checksum"] = sink;
  std::cout << out.dump(2) << "\n";
  if (argc > 1) std::ofstream(argv[1]) << out.dump(2) << "\n";
  return 0;
}
