// IPU-POD maps as `kubectl ipu status` draws them, from partitions and jobs through the operator's IPUPod
// status (ipuPodStatusOf) and the plugin's view: golden text for POD16, POD64, two ILDs of POD128 and a
// fragmented POD, each also checked for what it must say (every IPU's mark, the hidden names, the totals).
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>

#include <gtest/gtest.h>

#include "common/time_format.h"
#include "kubectl-ipu/terminal_map.h"
#include "pod_map_fixtures.h"

namespace ipu::kubectl_ipu {
namespace {

using testing::PodBuilder;

const Clock::WallTime kNow = *parseTime("2026-11-28T10:02:30Z");

// The tenant of team-a: may list team-a's jobs only.
VisibleJobs teamAView(const PodBuilder& pod) {
  VisibleJobs visible;
  for (const auto& job : pod.jobs()) {
    const auto& metadata = (*job)["metadata"];
    if (metadata["namespace"] == "team-a")
      visible[metadata["uid"]] = {metadata["namespace"], metadata["name"]};
  }
  return visible;
}

void expectGolden(const std::string& name, const std::string& text) {
  const std::string path = std::string(IPU_GOLDEN_DIR) + "/" + name + ".txt";
  if (std::getenv("IPU_UPDATE_GOLDEN") != nullptr) std::ofstream(path) << text;
  std::ifstream file(path);
  ASSERT_TRUE(file) << path << " is missing (IPU_UPDATE_GOLDEN=1 writes it)";
  std::stringstream golden;
  golden << file.rdbuf();
  EXPECT_EQ(text, golden.str()) << "differs from " << path << " (IPU_UPDATE_GOLDEN=1 rewrites it)";
}

// The map's rows: lines that start with "ILD " or with the indentation of a continued ILD.
std::string mapCells(const std::string& text) {
  std::istringstream lines(text);
  std::string line, cells;
  while (std::getline(lines, line)) {
    if (line.rfind("ILD ", 0) == 0 || line.rfind("       M", 0) == 0) cells += line.substr(12);
  }
  cells.erase(std::remove(cells.begin(), cells.end(), ' '), cells.end());
  return cells;
}

// Every IPU drawn once, each holder's mark as many times as it holds IPUs, free IPUs as '.'.
void expectEveryIpuMarked(const PodMapView& view, const std::string& text) {
  const std::string cells = mapCells(text);
  ASSERT_EQ(cells.size(), static_cast<std::size_t>(view.status.totalIpus)) << text;
  for (const MapHolder& holder : view.holders) {
    EXPECT_EQ(std::count(cells.begin(), cells.end(), holder.mark), holder.ipuCount) << holder.label << "\n"
                                                                                    << text;
  }
  EXPECT_EQ(std::count(cells.begin(), cells.end(), kFreeMark), view.status.freeIpus) << text;
}

TEST(PodMapTest, Pod16WithAJobOfTheTenantAndOneOfAnotherNamespace) {
  PodBuilder pod(1, 16);
  pod.job("team-a", "bert", {{0, 8}}).job("team-b", "resnet", {{8, 4}}, "2026-11-28T10:00:00Z");
  const PodMapView view = podMapViewOf(pod.status(), teamAView(pod));
  const std::string text = renderPodMap(view, {80, false, kNow});
  expectEveryIpuMarked(view, text);
  EXPECT_NE(text.find("team-a/bert"), std::string::npos);
  EXPECT_EQ(text.find("team-b"), std::string::npos) << "another namespace's names are hidden:\n" << text;
  EXPECT_EQ(text.find("resnet"), std::string::npos) << text;
  EXPECT_NE(text.find(kHiddenJobLabel), std::string::npos);
  EXPECT_NE(text.find("free 4 of 16 IPUs\nlargest free aligned block: 4 IPUs\n"), std::string::npos) << text;
  expectGolden("pod16", text);
}

TEST(PodMapTest, Pod64InAnEightyColumnTerminalWithEveryKindOfHolder) {
  PodBuilder pod(1, 64);
  pod.job("team-a", "gpt", {{0, 16}, {16, 16}})
      .job("team-b", "vit", {{32, 8}})
      .partition("someone-elses", 40, 4)
      .partition(controllers::partitionIdFor(testing::kPrefixes.current, "team-c", "gone", 0), 44, 2);
  const PodMapView view = podMapViewOf(pod.status(), teamAView(pod));
  const std::string text = renderPodMap(view, {80, false, kNow});
  expectEveryIpuMarked(view, text);
  ASSERT_EQ(view.holders.size(), 4u);
  EXPECT_EQ(view.holders[0].mark, 'A');
  EXPECT_EQ(view.holders[0].partitions, 2);
  EXPECT_EQ(view.holders[2].mark, kExternalMark);
  EXPECT_EQ(view.holders[3].mark, kUnownedMark);
  for (const std::string& line : {std::string("ILD 0  M0"), std::string("       M8")}) {
    EXPECT_NE(text.find(line), std::string::npos) << "16 IPU-Machines in rows of 8 at 80 columns:\n" << text;
  }
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), 80u) << line;
  expectGolden("pod64", text);
}

TEST(PodMapTest, TwoIldsOfPod128OneWholeAndOneFragmented) {
  PodBuilder pod(2, 64);
  pod.job("team-a", "llm", {{64, 64}}).job("team-a", "probe", {{0, 1}, {5, 1}, {10, 1}, {17, 1}, {33, 1}});
  const PodMapView view = podMapViewOf(pod.status(), teamAView(pod));
  const std::string text = renderPodMap(view, {120, false, kNow});
  expectEveryIpuMarked(view, text);
  EXPECT_NE(text.find("ILD 1  M0"), std::string::npos) << text;
  EXPECT_EQ(text.find("       M8"), std::string::npos) << "16 IPU-Machines fit one row at 120 columns:\n"
                                                       << text;
  // Free on ILD 0 are 59 IPUs, the largest aligned block among them 16 (IPUs 48-63).
  EXPECT_NE(text.find("free 59 of 128 IPUs\nlargest free aligned block: 16 IPUs\n"), std::string::npos)
      << text;
  expectGolden("pod128", text);
}

TEST(PodMapTest, AFragmentedPodInANarrowTerminal) {
  PodBuilder pod(1, 64);
  for (std::uint32_t machine = 0; machine < 16; ++machine) {
    pod.job(machine % 2 ? "team-b" : "team-a", "single-" + std::to_string(machine), {{machine * 4 + 1, 1}});
  }
  const PodMapView view = podMapViewOf(pod.status(), teamAView(pod));
  const std::string text = renderPodMap(view, {40, false, kNow});
  expectEveryIpuMarked(view, text);
  EXPECT_EQ(pod.status().largestFreeBlock, 2);
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), 40u) << line;
  expectGolden("fragmented", text);
}

TEST(PodMapTest, ColourOnlyAddsEscapesAroundTheSameText) {
  PodBuilder pod(1, 16);
  pod.job("team-a", "bert", {{0, 8}});
  const PodMapView view = podMapViewOf(pod.status(), teamAView(pod));
  const std::string plain = renderPodMap(view, {80, false, kNow});
  const std::string coloured = renderPodMap(view, {80, true, kNow});
  EXPECT_NE(coloured, plain);
  EXPECT_EQ(std::regex_replace(coloured, std::regex("\x1b\\[[0-9;]*m"), ""), plain);
  EXPECT_EQ(plain.find('\x1b'), std::string::npos);
}

TEST(PodMapTest, MoreJobsThanMarksShareTheOverflowMark) {
  PodBuilder pod(1, 128);
  for (std::uint32_t ipu = 0; ipu < 64; ++ipu) pod.job("team-a", "j" + std::to_string(ipu), {{ipu, 1}});
  const PodMapView view = podMapViewOf(pod.status(), teamAView(pod));
  EXPECT_EQ(view.holders[61].mark, '9');
  EXPECT_EQ(view.holders[62].mark, kOverflowMark);
  EXPECT_EQ(view.holders[63].mark, kOverflowMark);
}

TEST(PodMapTest, ATopologyNeverReadSaysSoAndWhy) {
  api::IpuPodStatus status;
  status.controller = "vipu-b";
  status.readError = "connection refused";
  EXPECT_EQ(renderPodMap(podMapViewOf(status, {}), {80, false, kNow}),
            "vipu-b: topology not read yet (connection refused)\n");
}

TEST(HeldForTest, ReadsAsPeopleSayIt) {
  using namespace std::chrono;
  EXPECT_EQ(formatElapsed(seconds(45)), "45s");
  EXPECT_EQ(formatElapsed(minutes(12)), "12m");
  EXPECT_EQ(formatElapsed(minutes(62)), "1h02m");
  EXPECT_EQ(formatElapsed(hours(76)), "3d04h");
  EXPECT_EQ(formatElapsed(seconds(-5)), "0s");
}

}  // namespace
}  // namespace ipu::kubectl_ipu
