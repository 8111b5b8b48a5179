#include "kube/packed_json.h"

#include <array>
#include <bit>
#include <string>
#include <string_view>
#include <unordered_map>

namespace ipu::kube {
namespace {

using Json = nlohmann::json;

// One byte says what follows. Tags below kFirstCode are the JSON types; each byte from kFirstCode up is one
// string of kDictionary.
enum Tag : std::uint8_t {
  kNull = 0x00,
  kFalse = 0x01,
  kTrue = 0x02,
  kUnsigned = 0x03,  // LEB128
  kSigned = 0x04,    // zigzag, LEB128
  kFloat = 0x05,     // IEEE 754 binary64, little-endian
  kString = 0x06,    // LEB128 length, the bytes
  kArray = 0x07,     // LEB128 count, the elements
  kObject = 0x08,    // LEB128 count, then each key (a string item) and its value
  kUuid = 0x09,      // 16 bytes: a string of the canonical lower-case form 8-4-4-4-12
  kBinary = 0x0a,    // a subtype flag (0 or 1), the subtype byte when 1, LEB128 length, the bytes
  kFirstCode = 0x10,
};

// The names and values that every cached pod and IPUJob repeats. Only memory depends on this list: a string
// not in it is written out. Most frequent first is not needed (every code is one byte).
constexpr auto kDictionary = std::to_array<std::string_view>({
    // Object metadata.
    "apiVersion",
    "kind",
    "metadata",
    "name",
    "namespace",
    "uid",
    "resourceVersion",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "generation",
    "generateName",
    "labels",
    "annotations",
    "ownerReferences",
    "controller",
    "blockOwnerDeletion",
    "finalizers",
    "spec",
    "status",
    // Status and conditions.
    "phase",
    "reason",
    "message",
    "conditions",
    "type",
    "lastTransitionTime",
    "lastProbeTime",
    "lastUpdateTime",
    "observedGeneration",
    "True",
    "False",
    "Unknown",
    // Pods.
    "v1",
    "Pod",
    "hostIP",
    "podIP",
    "podIPs",
    "ip",
    "containerStatuses",
    "initContainerStatuses",
    "state",
    "running",
    "waiting",
    "terminated",
    "exitCode",
    "startedAt",
    "finishedAt",
    "startTime",
    "Pending",
    "Running",
    "Succeeded",
    "Failed",
    "PodScheduled",
    "DisruptionTarget",
    "Ready",
    "Initialized",
    "ContainersReady",
    "Completed",
    "Error",
    "OOMKilled",
    "ContainerCreating",
    "PodInitializing",
    "Unschedulable",
    "ErrImagePull",
    "ImagePullBackOff",
    // Pod templates.
    "template",
    "containers",
    "initContainers",
    "image",
    "imagePullPolicy",
    "command",
    "args",
    "env",
    "value",
    "valueFrom",
    "resources",
    "limits",
    "requests",
    "cpu",
    "memory",
    "volumeMounts",
    "mountPath",
    "readOnly",
    "volumes",
    "emptyDir",
    "medium",
    "sizeLimit",
    "secret",
    "secretName",
    "configMap",
    "securityContext",
    "capabilities",
    "add",
    "nodeSelector",
    "tolerations",
    "key",
    "operator",
    "effect",
    "tolerationSeconds",
    "restartPolicy",
    "serviceAccountName",
    "workingDir",
    "ports",
    "containerPort",
    "protocol",
    "hostIPC",
    "terminationGracePeriodSeconds",
    "Memory",
    "IfNotPresent",
    "Always",
    "Never",
    "OnFailure",
    "TCP",
    "Exists",
    "Equal",
    "NoSchedule",
    "NoExecute",
    // IPUJobs.
    "graphcore.ai/v1alpha1",
    "IPUJob",
    "jobInstances",
    "ipusPerJobInstance",
    "workersPerJobInstance",
    "modelReplicasPerWorker",
    "workers",
    "launcher",
    "cleanPodPolicy",
    "ttlSecondsAfterFinished",
    "backOffLimit",
    "activeDeadlineSeconds",
    "suspend",
    "interactive",
    "idleSeconds",
    "ttlSeconds",
    "outputs",
    "path",
    "retainSeconds",
    "priority",
    "replicas",
    "exitCodes",
    "launcherStatus",
    "lastMessage",
    "currentReplicas",
    "desiredReplicas",
    "currentInstances",
    "completionTime",
    "restartCount",
    "queuePosition",
    "partitions",
    "id",
    "instance",
    "ipus",
    "size",
    "admitted",
    "admittedShape",
    "awaitingPlacement",
    "clusterQueue",
    "localQueue",
    "kueue",
    "workload",
    "startEstimate",
    "startsBy",
    "updatedAt",
    "runtimeSecret",
    "expiresAt",
    "retainedUntil",
    "runningSince",
    "managedBy",
    "selector",
    "Admitted",
    "Queued",
    "Suspended",
    "All",
    "Workers",
    "None",
    "worker",
    "ipu-runtime",
    // The operator's labels, annotations and finalizer, and Kueue's.
    "graphcore.ai/ipujob",
    "graphcore.ai/job-instance",
    "graphcore.ai/worker-index",
    "graphcore.ai/attempt",
    "graphcore.ai/outputs-path",
    "graphcore.ai/outputs-retain-seconds",
    "graphcore.ai/worker-pod-profile",
    "graphcore.ai/ipujob-cleanup",
    "graphcore.ai/ipu",
    "kueue.x-k8s.io/queue-name",
    "kueue.x-k8s.io/priority-class",
    "kueue.x-k8s.io/job-uid",
    "kueue.x-k8s.io/prebuilt-workload-name",
    // Worker indexes and attempts.
    "0",
    "1",
    "2",
    "3",
    "4",
    "5",
    "6",
    "7",
});
static_assert(kDictionary.size() <= 0x100 - kFirstCode, "every code must fit in the tag byte");

const std::unordered_map<std::string_view, std::uint8_t>& codes() {
  static const auto* byString = [] {
    auto* map = new std::unordered_map<std::string_view, std::uint8_t>();
    for (std::size_t i = 0; i < kDictionary.size(); ++i)
      map->emplace(kDictionary[i], static_cast<std::uint8_t>(kFirstCode + i));
    return map;
  }();
  return *byString;
}

int hexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;  // upper case too: it would not come back as written
}

// How deep a Kubernetes object usually nests (a pod's container's env's valueFrom's secretKeyRef's key is 7):
// room for that many open containers from the start.
constexpr std::size_t kUsualDepth = 12;

bool isUuidDash(std::size_t i) {
  return i == 8 || i == 13 || i == 18 || i == 23;
}

class Writer {
 public:
  std::vector<std::uint8_t> take() && { return std::move(out_); }

  // Depth-first without recursion: a tenant's object may nest as deep as the API server accepts (10,000
  // levels), deeper than a thread's stack holds frames for.
  void value(const Json& root) {
    struct Open {
      const Json* container;
      Json::const_iterator next;
    };
    std::vector<Open> open;
    open.reserve(kUsualDepth);
    const Json* item = &root;
    for (;;) {
      if (item != nullptr) {
        if (item->is_array() || item->is_object()) {
          byte(item->is_array() ? kArray : kObject);
          varint(item->size());
          open.push_back({item, item->cbegin()});
        } else {
          scalar(*item);
        }
        item = nullptr;
      }
      if (open.empty()) return;
      Open& top = open.back();
      if (top.next == top.container->cend()) {
        open.pop_back();
        continue;
      }
      if (top.container->is_object()) string(top.next.key());
      item = &*top.next;
      ++top.next;
    }
  }

 private:
  // Anything but an array or an object.
  void scalar(const Json& v) {
    switch (v.type()) {
      case Json::value_t::null:
      case Json::value_t::discarded:
        byte(kNull);
        return;
      case Json::value_t::boolean:
        byte(v.get<bool>() ? kTrue : kFalse);
        return;
      case Json::value_t::number_unsigned:
        byte(kUnsigned);
        varint(v.get<std::uint64_t>());
        return;
      case Json::value_t::number_integer: {
        const auto n = v.get<std::int64_t>();
        byte(kSigned);
        varint((static_cast<std::uint64_t>(n) << 1) ^ static_cast<std::uint64_t>(n >> 63));
        return;
      }
      case Json::value_t::number_float: {
        byte(kFloat);
        const auto bits = std::bit_cast<std::uint64_t>(v.get<double>());
        for (int shift = 0; shift < 64; shift += 8) byte(static_cast<std::uint8_t>(bits >> shift));
        return;
      }
      case Json::value_t::string:
        string(v.get_ref<const std::string&>());
        return;
      case Json::value_t::array:
      case Json::value_t::object:
        throw PackedJsonError("packed JSON: a container written as a scalar");
      case Json::value_t::binary: {
        const auto& binary = v.get_binary();
        byte(kBinary);
        byte(binary.has_subtype() ? 1 : 0);
        if (binary.has_subtype()) byte(static_cast<std::uint8_t>(binary.subtype()));
        varint(binary.size());
        out_.insert(out_.end(), binary.begin(), binary.end());
        return;
      }
    }
  }

  void byte(std::uint8_t b) { out_.push_back(b); }

  void varint(std::uint64_t n) {
    while (n >= 0x80) {
      byte(static_cast<std::uint8_t>(n | 0x80));
      n >>= 7;
    }
    byte(static_cast<std::uint8_t>(n));
  }

  void string(std::string_view s) {
    if (auto code = codes().find(s); code != codes().end()) return byte(code->second);
    if (uuid(s)) return;
    byte(kString);
    varint(s.size());
    out_.insert(out_.end(), s.begin(), s.end());
  }

  bool uuid(std::string_view s) {
    if (s.size() != 36) return false;
    std::array<std::uint8_t, 16> bytes{};
    std::size_t nibble = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (isUuidDash(i)) {
        if (s[i] != '-') return false;
        continue;
      }
      const int digit = hexDigit(s[i]);
      if (digit < 0) return false;
      bytes[nibble / 2] = static_cast<std::uint8_t>(bytes[nibble / 2] | (digit << (nibble % 2 ? 0 : 4)));
      ++nibble;
    }
    byte(kUuid);
    out_.insert(out_.end(), bytes.begin(), bytes.end());
    return true;
  }

  std::vector<std::uint8_t> out_;
};

class Reader {
 public:
  explicit Reader(std::span<const std::uint8_t> in) : in_(in) {}

  bool done() const { return at_ == in_.size(); }

  // Without recursion, as Writer::value: each item is read straight into its place in the tree. The places
  // stay put while their containers fill: an array has room for all its items from the start, and an
  // object's members are nodes of a map.
  Json value() {
    struct Open {
      Json* container;
      std::uint64_t left;  // items still to read
    };
    std::vector<Open> open;
    open.reserve(kUsualDepth);
    Json root;
    Json* slot = &root;
    for (;;) {
      const std::uint8_t tag = byte();
      if (tag == kArray || tag == kObject) {
        const std::uint64_t count = countOfAtLeastOneByteEach();
        *slot = tag == kArray ? Json::array() : Json::object();
        if (tag == kArray) slot->get_ref<Json::array_t&>().reserve(count);
        if (count > 0) open.push_back({slot, count});
      } else {
        *slot = scalar(tag);
      }
      while (!open.empty() && open.back().left == 0) open.pop_back();
      if (open.empty()) return root;
      Open& top = open.back();
      --top.left;
      slot = top.container->is_array() ? &top.container->emplace_back() : &(*top.container)[string(byte())];
    }
  }

 private:
  // Anything but an array or an object, from its tag on.
  Json scalar(std::uint8_t tag) {
    switch (tag) {
      case kNull:
        return nullptr;
      case kFalse:
        return false;
      case kTrue:
        return true;
      case kUnsigned:
        return varint();
      case kSigned: {
        const std::uint64_t zigzag = varint();
        return static_cast<std::int64_t>((zigzag >> 1) ^ (~(zigzag & 1) + 1));
      }
      case kFloat: {
        std::uint64_t bits = 0;
        for (int shift = 0; shift < 64; shift += 8) bits |= static_cast<std::uint64_t>(byte()) << shift;
        return std::bit_cast<double>(bits);
      }
      case kBinary: {
        const std::uint8_t hasSubtype = byte();
        if (hasSubtype > 1) throw PackedJsonError("packed JSON: a binary value's subtype flag is not 0 or 1");
        const std::uint8_t subtype = hasSubtype ? byte() : 0;
        const auto bytes = take(varint());
        std::vector<std::uint8_t> content(bytes.begin(), bytes.end());
        return hasSubtype ? Json::binary(std::move(content), subtype) : Json::binary(std::move(content));
      }
      default:
        return string(tag);
    }
  }

  std::string string(std::uint8_t tag) {
    if (tag >= kFirstCode) {
      const std::size_t index = tag - kFirstCode;
      if (index >= kDictionary.size()) throw PackedJsonError("packed JSON: an unknown dictionary code");
      return std::string(kDictionary[index]);
    }
    if (tag == kString) {
      const auto bytes = take(varint());
      return std::string(bytes.begin(), bytes.end());
    }
    if (tag == kUuid) {
      static constexpr char kHex[] = "0123456789abcdef";
      const auto bytes = take(16);
      std::string uuid;
      uuid.reserve(36);
      for (std::size_t i = 0; i < bytes.size(); ++i) {
        if (i == 4 || i == 6 || i == 8 || i == 10) uuid.push_back('-');
        uuid.push_back(kHex[bytes[i] >> 4]);
        uuid.push_back(kHex[bytes[i] & 0xf]);
      }
      return uuid;
    }
    throw PackedJsonError("packed JSON: a string was expected, tag " + std::to_string(tag) + " found");
  }

  std::uint8_t byte() {
    if (done()) throw PackedJsonError("packed JSON: cut short");
    return in_[at_++];
  }

  std::uint64_t varint() {
    std::uint64_t n = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      const std::uint8_t b = byte();
      n |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return n;
    }
    throw PackedJsonError("packed JSON: a number longer than 64 bits");
  }

  // A count of items, each of which takes at least one byte: more than the bytes left is not a form this
  // file wrote (and must not reserve memory for).
  std::uint64_t countOfAtLeastOneByteEach() {
    const std::uint64_t count = varint();
    if (count > in_.size() - at_) throw PackedJsonError("packed JSON: more items than bytes left");
    return count;
  }

  std::span<const std::uint8_t> take(std::uint64_t n) {
    if (n > in_.size() - at_) throw PackedJsonError("packed JSON: cut short");
    const auto taken = in_.subspan(at_, n);
    at_ += n;
    return taken;
  }

  std::span<const std::uint8_t> in_;
  std::size_t at_ = 0;
};

}  // namespace

std::vector<std::uint8_t> packJson(const Json& value) {
  Writer writer;
  writer.value(value);
  auto bytes = std::move(writer).take();
  bytes.shrink_to_fit();  // kept for the object's life in the cache: no spare capacity
  return bytes;
}

Json unpackJson(std::span<const std::uint8_t> bytes) {
  Reader reader(bytes);
  Json value = reader.value();
  if (!reader.done()) throw PackedJsonError("packed JSON: bytes after the value");
  return value;
}

}  // namespace ipu::kube
