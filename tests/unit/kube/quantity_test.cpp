#include "kube/quantity.h"

#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace ipu::kube {
namespace {

TEST(QuantityTest, TheApiServersQuantitiesAreAccepted) {
  for (const char* text : {"10Gi", "512Mi", "1", "0", "1.5G", "100M", "250m", "1e9", "1E-2", "+5Ki", "-1",
                           "0.5", ".5", "2Ei", "7k", "3u", "9n"}) {
    EXPECT_TRUE(validateQuantity(text).ok()) << text;
  }
}

TEST(QuantityTest, AnythingElseIsRefusedSayingWhatAQuantityLooksLike) {
  for (const char* text : {"", "Gi", "10GB", "10 Gi", "10gi", "ten", "1.2.3", "5.", ".", "1e", "1e+", "--1",
                           "1Gi ", "0x10", "10Kib", "1.5.Gi", "∞"}) {
    const Status status = validateQuantity(text);
    ASSERT_FALSE(status.ok()) << text;
    EXPECT_EQ(status.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(status.error().message.find("is not a quantity"), std::string::npos) << status.error().message;
  }
}

// Kubernetes' Go clients write quantities back in canonical form: the amount is what counts.
TEST(QuantityTest, AQuantityIsTheSameAmountHoweverWritten) {
  EXPECT_EQ(quantityValue("1Gi"), 1073741824.0L);
  EXPECT_EQ(quantityValue("7k"), 7000.0L);
  EXPECT_EQ(quantityValue("10GB"), std::nullopt);
  for (const auto& [a, b] : std::vector<std::pair<const char*, const char*>>{
           {"1Gi", "1024Mi"}, {"0.5", "500m"}, {"32", "32"}, {"1e3", "1k"}, {"1E-2", "10m"}, {"2", "+2"}}) {
    EXPECT_TRUE(sameQuantity(a, b)) << a << " " << b;
  }
  for (const auto& [a, b] : std::vector<std::pair<const char*, const char*>>{
           {"1G", "1Gi"}, {"4", "8"}, {"x", "x2"}, {"200Gi", "200G"}}) {
    EXPECT_FALSE(sameQuantity(a, b)) << a << " " << b;
  }
}

TEST(LabelValueTest, SixtyThreeAlphanumericCharactersWithInnerPunctuation) {
  EXPECT_TRUE(isLabelValue(""));
  EXPECT_TRUE(isLabelValue("pod64"));
  EXPECT_TRUE(isLabelValue("pod-64_a.b"));
  EXPECT_TRUE(isLabelValue(std::string(63, 'a')));
  EXPECT_FALSE(isLabelValue(std::string(64, 'a')));
  EXPECT_FALSE(isLabelValue("-pod"));
  EXPECT_FALSE(isLabelValue("pod."));
  EXPECT_FALSE(isLabelValue("pod 64"));
  EXPECT_FALSE(isLabelValue("pod/64"));
}

}  // namespace
}  // namespace ipu::kube
