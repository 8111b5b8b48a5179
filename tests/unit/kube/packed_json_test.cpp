#include "kube/packed_json.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace ipu::kube {
namespace {

using Json = nlohmann::json;

// A worker pod as the pod cache keeps it (trimmed: worker_pod_cache.h).
Json cachedWorkerPod() {
  return Json::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"train-123-worker-0",
      "namespace":"team-a","uid":"6f1c2a7e-0000-4000-8000-000000000123","resourceVersion":"100123",
      "creationTimestamp":"2026-11-29T10:00:00Z","labels":{"graphcore.ai/ipujob":"train-123",
      "graphcore.ai/job-instance":"0","graphcore.ai/worker-index":"0","graphcore.ai/attempt":"0"},
      "ownerReferences":[{"apiVersion":"graphcore.ai/v1alpha1","kind":"IPUJob","name":"train-123",
      "uid":"0f0e1d2c-3b4a-4958-a6b7-c8d9e0f1a2b3","controller":true}]},"status":{"phase":"Running",
      "hostIP":"10.0.0.12","podIP":"10.244.12.2","podIPs":[{"ip":"10.244.12.2"}],
      "conditions":[{"type":"PodScheduled","status":"True"}],
      "initContainerStatuses":[{"name":"ipu-runtime","state":{"terminated":{"exitCode":0,
      "reason":"Completed","finishedAt":"2026-11-29T10:00:01Z"}}}],
      "containerStatuses":[{"name":"worker","state":{"running":{}}}]}})");
}

// Equal as JSON and written out alike: the same types of number, the same bytes of every string.
void expectRoundTrip(const Json& value) {
  const Json back = unpackJson(packJson(value));
  EXPECT_EQ(back, value);
  EXPECT_EQ(back.dump(), value.dump());
}

TEST(PackedJsonTest, EveryJsonTypeComesBackAsItWas) {
  expectRoundTrip(Json::parse(R"({"null":null,"t":true,"f":false,"zero":0,"neg":-9,"big":18446744073709551615,
      "ratio":0.25,"tiny":-1e-300,"text":"résumé-ü","empty":"","list":[[],{},[1,[2,[3]]]],"obj":{"":1}})"));
  expectRoundTrip(Json(std::numeric_limits<std::int64_t>::min()));
  expectRoundTrip(Json(std::numeric_limits<std::int64_t>::max()));
  expectRoundTrip(Json(std::numeric_limits<std::uint64_t>::max()));
  expectRoundTrip(Json(std::string(100000, 'x')));
  expectRoundTrip(Json::binary({1, 2, 3}, 42));
  expectRoundTrip(Json::binary({}));
  expectRoundTrip(cachedWorkerPod());
}

TEST(PackedJsonTest, NumbersKeepTheirKind) {
  EXPECT_TRUE(unpackJson(packJson(Json(std::int64_t{5}))).is_number_integer());
  EXPECT_FALSE(unpackJson(packJson(Json(std::int64_t{5}))).is_number_unsigned());
  EXPECT_TRUE(unpackJson(packJson(Json(std::uint64_t{5}))).is_number_unsigned());
  EXPECT_TRUE(unpackJson(packJson(Json(5.0))).is_number_float());
}

TEST(PackedJsonTest, StringsThatLookLikeCodesOrUuidsStayAsWritten) {
  // Only the canonical lower-case form of a uid is packed to 16 bytes; any other spelling is kept as text.
  for (const std::string& s : std::vector<std::string>{
           "6F1C2A7E-0000-4000-8000-000000000123", "6f1c2a7e-0000-4000-8000-00000000012",
           "6f1c2a7e_0000-4000-8000-000000000123", "6f1c2a7e-0000-4000-8000-00000000012g",
           "{6f1c2a7e-0000-4000-8000-000000000123}", "metadata ", "Metadata", std::string("\x10", 1),
           std::string("\x06\x00", 2), std::string("\0", 1)}) {
    expectRoundTrip(Json(s));
    expectRoundTrip(Json{{s, s}});
  }
  expectRoundTrip(Json("00000000-0000-0000-0000-000000000000"));
  expectRoundTrip(Json("ffffffff-ffff-ffff-ffff-ffffffffffff"));
}

// A tenant's IPUJob may carry free-form fields (its template's metadata) as deep as the API server decodes:
// 10,000 levels. The cache packs and unpacks them like any other object, without a frame per level (this
// runs under ASan too, whose frames are larger).
TEST(PackedJsonTest, ValuesAsDeepAsTheApiServerAcceptsComeBack) {
  constexpr int kDepth = 10000;
  Json deep = "bottom";
  for (int level = 0; level < kDepth; ++level)
    deep = level % 2 == 0 ? Json{{"a", std::move(deep)}} : Json::array({std::move(deep)});
  const auto packed = packJson(deep);
  const Json back = unpackJson(packed);
  EXPECT_EQ(packJson(back), packed);
  // Walked down level by level: nlohmann's own comparison and dump recurse.
  const Json* at = &back;
  int levels = 0;
  while (at->is_object() || at->is_array()) {
    ASSERT_EQ(at->size(), 1u) << "at level " << levels;
    at = at->is_object() ? &at->at("a") : &at->at(0);
    ++levels;
  }
  EXPECT_EQ(levels, kDepth);
  EXPECT_EQ(*at, "bottom");
}

TEST(PackedJsonTest, ACachedWorkerPodTakesAboutHalfItsCborSize) {
  const Json pod = cachedWorkerPod();
  const auto packed = packJson(pod);
  const auto cbor = Json::to_cbor(pod);
  EXPECT_LT(packed.size() * 2, cbor.size() + 100) << packed.size() << " bytes against CBOR's " << cbor.size();
  EXPECT_EQ(packed.capacity(), packed.size()) << "the cache keeps no spare capacity";
}

TEST(PackedJsonTest, BytesItDidNotWriteAreRefusedNeverReadPastTheirEnd) {
  const auto whole = packJson(cachedWorkerPod());
  for (std::size_t cut = 0; cut < whole.size(); ++cut) {
    EXPECT_THROW(unpackJson(std::span(whole).first(cut)), PackedJsonError) << "cut at " << cut;
  }
  std::vector<std::uint8_t> trailing = packJson(Json(1));
  trailing.push_back(0x00);
  EXPECT_THROW(unpackJson(trailing), PackedJsonError);
  // An unknown tag, a code past the dictionary, a count larger than what follows, an endless number.
  for (const std::vector<std::uint8_t>& bad : std::vector<std::vector<std::uint8_t>>{
           {0x0b},
           {0xff},
           {0x07, 0xff, 0xff, 0xff, 0xff, 0x0f},
           {0x08, 0x01, 0x00, 0x00},
           {0x03, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
           {0x0a, 0x02, 0x00}}) {
    EXPECT_THROW(unpackJson(bad), PackedJsonError);
  }
}

}  // namespace
}  // namespace ipu::kube
