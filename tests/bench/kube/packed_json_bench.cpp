// What a packed store keeps of each worker pod and what reading it back costs: the store's form
// (kube/packed_json) against CBOR (what it kept before) and the JSON text. At 1,000 eight-worker jobs the
// pod cache holds 8,000 of these, and every pass of a job decodes its eight.
#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kube/packed_json.h"

namespace {

using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr int kPods = 500;
constexpr int kRepeats = 15;

// A worker pod as the pod cache keeps it (trimmed: controllers/ipujob/worker_pod_cache.h), running.
Json cachedPod(int i) {
  const std::string n = std::to_string(i);
  const std::string ip = "10.244." + std::to_string(i % 250) + "." + std::to_string(2 + i / 250);
  return Json::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"job-)" + n + R"(-worker-3",
      "namespace":"bench","uid":"6f1c2a7e-0000-4000-8000-)" +
                     std::string(12 - n.size(), '0') + n + R"(","resourceVersion":")" +
                     std::to_string(100000 + i) + R"(","creationTimestamp":"2026-11-29T10:00:00Z",
      "labels":{"graphcore.ai/ipujob":"job-)" +
                     n + R"(","graphcore.ai/job-instance":"0","graphcore.ai/worker-index":"3",
      "graphcore.ai/attempt":"0"},"ownerReferences":[{"apiVersion":"graphcore.ai/v1alpha1","kind":"IPUJob",
      "name":"job-)" +
                     n + R"(","uid":"0f0e1d2c-3b4a-4958-a6b7-)" + std::string(12 - n.size(), '0') + n +
                     R"(","controller":true}]},"status":{"phase":"Running","hostIP":"10.0.0.)" +
                     std::to_string(i % 250) + R"(","podIP":")" + ip + R"(","podIPs":[{"ip":")" + ip +
                     R"("}],"conditions":[{"type":"PodScheduled","status":"True"}],
      "initContainerStatuses":[{"name":"ipu-runtime","state":{"terminated":{"exitCode":0,
      "reason":"Completed","finishedAt":"2026-11-29T10:00:01Z"}}}],
      "containerStatuses":[{"name":"worker","state":{"running":{}}}]}})");
}

bool isUid(const std::string& s) {
  return s.size() == 36 && s[8] == '-' && s[13] == '-' && s[18] == '-' && s[23] == '-';
}

// Each scalar of `value` by its JSON pointer.
void flatten(const Json& value, const std::string& path, std::map<std::string, Json>& out) {
  if (value.is_object()) {
    for (const auto& [key, member] : value.items()) flatten(member, path + "/" + key, out);
  } else if (value.is_array()) {
    for (std::size_t i = 0; i < value.size(); ++i) flatten(value[i], path + "/" + std::to_string(i), out);
  } else {
    out[path] = value;
  }
}

// What is each pod's own: the bytes of the scalars that differ from pod to pod (a uid as its 16 bytes, any
// other value as written), without a name or any structure. What every pod repeats ("Running", the
// namespace, the names of the fields) carries nothing of its own; a form that keeps each pod's own values
// as written cannot go below this.
double ownValueBytesPerPod(const std::vector<Json>& pods) {
  std::vector<std::map<std::string, Json>> flat(pods.size());
  for (std::size_t i = 0; i < pods.size(); ++i) flatten(pods[i], "", flat[i]);
  std::size_t sum = 0;
  for (const auto& pod : flat) {
    for (const auto& [path, value] : pod) {
      const bool repeated = std::all_of(flat.begin(), flat.end(), [&](const auto& other) {
        const auto found = other.find(path);
        return found != other.end() && found->second == value;
      });
      if (repeated) continue;
      if (!value.is_string())
        sum += value.dump().size();
      else
        sum += isUid(value.get_ref<const std::string&>()) ? 16 : value.get_ref<const std::string&>().size();
    }
  }
  return static_cast<double>(sum) / static_cast<double>(pods.size());
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

struct Form {
  std::string name;
  std::function<std::vector<std::uint8_t>(const Json&)> pack;
  std::function<Json(const std::vector<std::uint8_t>&)> unpack;
  std::vector<std::vector<std::uint8_t>> packed;
  std::vector<double> packUs, unpackUs;
};

}  // namespace

int main(int argc, char** argv) {
  std::vector<Json> pods;
  for (int i = 0; i < kPods; ++i) pods.push_back(cachedPod(i));
  const double lowerBound = ownValueBytesPerPod(pods);
  std::vector<Form> forms{
      {"JSON text",
       [](const Json& pod) {
         const std::string text = pod.dump();
         return std::vector<std::uint8_t>(text.begin(), text.end());
       },
       [](const std::vector<std::uint8_t>& bytes) { return Json::parse(bytes.begin(), bytes.end()); }},
      {"CBOR (nlohmann to_cbor)",
       [](const Json& pod) {
         auto bytes = Json::to_cbor(pod);
         bytes.shrink_to_fit();
         return bytes;
       },
       [](const std::vector<std::uint8_t>& bytes) { return Json::from_cbor(bytes); }},
      {"packed (kube::packJson)", [](const Json& pod) { return ipu::kube::packJson(pod); },
       [](const std::vector<std::uint8_t>& bytes) { return ipu::kube::unpackJson(bytes); }},
  };

  std::size_t sink = 0;
  for (int repeat = 0; repeat < kRepeats; ++repeat) {
    for (Form& form : forms) {
      auto started = Clock::now();
      form.packed.clear();
      for (const Json& pod : pods) form.packed.push_back(form.pack(pod));
      form.packUs.push_back(std::chrono::duration<double, std::micro>(Clock::now() - started).count() /
                            kPods);
      started = Clock::now();
      for (const auto& bytes : form.packed) sink += form.unpack(bytes).size();
      form.unpackUs.push_back(std::chrono::duration<double, std::micro>(Clock::now() - started).count() /
                              kPods);
    }
  }
  for (Form& form : forms) {
    for (int i = 0; i < kPods; ++i) {
      if (form.unpack(form.packed[static_cast<std::size_t>(i)]) != pods[static_cast<std::size_t>(i)]) {
        std::cerr << "packed_json_bench: " << form.name << " did not give pod " << i << " back\n";
        return 1;
      }
    }
  }

  const auto bytesOf = [](const Form& form) {
    std::size_t sum = 0;
    for (const auto& bytes : form.packed) sum += bytes.size();
    return static_cast<double>(sum) / kPods;
  };
  const Form& ours = forms.back();
  Json out{{"benchmark", "packed_json"},
           {"pods", kPods},
           {"repeats", kRepeats},
           {"lower_bound_bytes_per_pod",
            {{"what", "the values that differ from pod to pod, uids as 16 bytes"}, {"bytes", lowerBound}}},
           {"forms", Json::array()}};
  std::cout << kPods << " worker pods as the pod cache keeps them, median of " << kRepeats << " rounds:\n"
            << "  lower bound (the values that differ from pod to pod, uids as 16 bytes): " << lowerBound
            << " bytes per pod\n";
  for (const Form& form : forms) {
    const double bytes = bytesOf(form), pack = median(form.packUs), unpack = median(form.unpackUs);
    out["forms"].push_back({{"name", form.name},
                            {"bytes_per_pod", bytes},
                            {"bytes_over_lower_bound", bytes / lowerBound},
                            {"pack_us_per_pod", pack},
                            {"unpack_us_per_pod", unpack},
                            {"packed_bytes_over_this", bytesOf(ours) / bytes},
                            {"packed_unpack_time_over_this", median(ours.unpackUs) / unpack}});
    std::cout << "  " << form.name << ": " << bytes << " bytes (" << bytes / lowerBound << "x the bound)"
              << ", pack " << pack << " us, read back " << unpack << " us per pod; packed / this: bytes "
              << bytesOf(ours) / bytes << ", read back " << median(ours.unpackUs) / unpack << "\n";
  }
  out["checksum"] = sink;
  if (argc > 1) std::ofstream(argv[1]) << out.dump(2) << "\n";
  return 0;
}
