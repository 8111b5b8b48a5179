#include "pod_map/pod_map_page.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <tuple>

#include "common/time_format.h"

namespace ipu::controllers {
namespace {

// The drawing's measures, in SVG user units.
constexpr int kCell = 14;        // one IPU
constexpr int kCellGap = 2;      // between IPUs of a machine
constexpr int kMachineGap = 8;   // between IPU-Machines
constexpr int kRowGap = 10;      // between rows of machines
constexpr int kIldGap = 26;      // between ILDs (room for the ILD's label)
constexpr int kLabelWidth = 58;  // "ILD 0" at the left
constexpr int kMaxMachinesPerRow = 16;

std::string escaped(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string ipus(std::int64_t count) {
  return std::to_string(count) + (count == 1 ? " IPU" : " IPUs");
}

std::string jobLabel(const std::string& ns, const std::string& job) {
  return ns.empty() ? kHiddenJobLabel : ns + "/" + job;
}

// Machines per row: a power of two (rows fall on partition boundaries), at most kMaxMachinesPerRow.
int machinesPerRow(int machinesPerIld) {
  int machines = 1;
  while (machines * 2 <= machinesPerIld && machines * 2 <= kMaxMachinesPerRow) machines *= 2;
  return machines;
}

struct Legend {
  std::vector<std::string> colours;  // by holder index
};

Legend legendOf(const PodMapView& view) {
  Legend legend;
  int jobs = 0;
  for (const MapHolder& holder : view.holders) {
    legend.colours.push_back(holderColour(holder, holder.kind == api::kHolderJob ? jobs : 0));
    if (holder.kind == api::kHolderJob) ++jobs;
  }
  return legend;
}

std::string heldFor(const MapHolder& holder, Clock::WallTime now) {
  return holder.since ? "held " + formatElapsed(now - *holder.since) : "";
}

void drawPod(std::ostringstream& out, const PodMapView& view, const Legend& legend, Clock::WallTime now) {
  const api::IpuPodStatus& status = view.status;
  const int perMachine = status.ipusPerMachine > 0 ? status.ipusPerMachine : 4;
  const int machinesPerIld = std::max(1, status.ildSize / perMachine);
  const int perRow = machinesPerRow(machinesPerIld);
  const int rowsPerIld = (machinesPerIld + perRow - 1) / perRow;
  const int machineWidth = perMachine * kCell + (perMachine - 1) * kCellGap;
  const int width = kLabelWidth + perRow * machineWidth + (perRow - 1) * kMachineGap;
  const int ildHeight = rowsPerIld * kCell + (rowsPerIld - 1) * kRowGap;
  const int height = status.ilds * ildHeight + std::max(0, status.ilds - 1) * kIldGap;
  out << "<svg class=\"pod\" role=\"img\" aria-label=\"IPU-POD " << escaped(status.controller)
      << "\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " << width << ' ' << height << "\" width=\""
      << width << "\" height=\"" << height << "\">\n";
  for (int ild = 0; ild < status.ilds; ++ild) {
    const int top = ild * (ildHeight + kIldGap);
    out << "<text class=\"ild\" x=\"0\" y=\"" << top + kCell - 2 << "\">ILD " << ild << "</text>\n";
    for (int machine = 0; machine < machinesPerIld; ++machine) {
      const int x0 = kLabelWidth + (machine % perRow) * (machineWidth + kMachineGap);
      const int y = top + (machine / perRow) * (kCell + kRowGap);
      out << "<rect class=\"machine\" x=\"" << x0 - 2 << "\" y=\"" << y - 2 << "\" width=\""
          << machineWidth + 4 << "\" height=\"" << kCell + 4 << "\"/>\n";
      for (int slot = 0; slot < perMachine; ++slot) {
        const int ipu = ild * status.ildSize + machine * perMachine + slot;
        if (ipu >= static_cast<int>(view.holderOfIpu.size())) continue;
        const int holder = view.holderOfIpu[static_cast<std::size_t>(ipu)];
        std::string title = "IPU " + std::to_string(ipu) + " (ILD " + std::to_string(ild) + ", IPU-Machine " +
                            std::to_string(machine) + "): ";
        if (holder < 0) {
          title += "free";
        } else {
          const MapHolder& held = view.holders[static_cast<std::size_t>(holder)];
          title += held.label + ", " + ipus(held.ipuCount);
          if (const std::string since = heldFor(held, now); !since.empty()) title += ", " + since;
        }
        out << "<rect class=\"ipu\" data-ipu=\"" << ipu << "\" data-holder=\"" << holder << "\" x=\""
            << x0 + slot * (kCell + kCellGap) << "\" y=\"" << y << "\" width=\"" << kCell << "\" height=\""
            << kCell << "\" rx=\"2\" fill=\""
            << (holder < 0 ? kFreeColour : legend.colours[static_cast<std::size_t>(holder)]) << "\"><title>"
            << escaped(title) << "</title></rect>\n";
      }
    }
  }
  out << "</svg>\n";
}

void podSection(std::ostringstream& out, const PodMapView& view, Clock::WallTime now) {
  const api::IpuPodStatus& status = view.status;
  out << "<section class=\"controller\" data-controller=\"" << escaped(status.controller) << "\">\n<h2>"
      << escaped(status.controller) << "</h2>\n<p class=\"totals\">";
  if (status.ilds == 0) {
    out << "The operator has not read this controller's topology yet.";
  } else {
    out << ipus(status.freeIpus) << " free of " << status.totalIpus
        << "; the largest partition that could be "
        << "made now has " << ipus(status.largestFreeBlock) << '.';
    if (!status.cluster.empty()) out << " V-IPU cluster " << escaped(status.cluster) << '.';
  }
  out << "</p>\n";
  if (!status.readError.empty())
    out << "<p class=\"warning\">The last read of this controller failed: " << escaped(status.readError)
        << "</p>\n";
  for (const std::string& problem : view.problems)
    out << "<p class=\"warning\">Not drawn: " << escaped(problem) << "</p>\n";
  const Legend legend = legendOf(view);
  if (status.ilds > 0) drawPod(out, view, legend, now);
  out << "<table class=\"legend\"><thead><tr><th></th><th>held by</th><th>IPUs</th><th>partitions</th>"
         "<th>held for</th></tr></thead><tbody>\n";
  for (std::size_t i = 0; i < view.holders.size(); ++i) {
    const MapHolder& holder = view.holders[i];
    out << "<tr class=\"holder\" data-holder=\"" << i << "\" data-colour=\"" << legend.colours[i]
        << "\"><td><span class=\"swatch\" style=\"background:" << legend.colours[i] << "\"></span></td><td>"
        << escaped(holder.label) << "</td><td>" << holder.ipuCount << "</td><td>" << holder.partitions
        << "</td><td>" << (holder.since ? formatElapsed(now - *holder.since) : "") << "</td></tr>\n";
  }
  out << "<tr class=\"free\"><td><span class=\"swatch\" style=\"background:" << kFreeColour
      << "\"></span></td><td>free</td><td>" << status.freeIpus << "</td><td></td><td></td></tr>\n"
      << "</tbody></table>\n</section>\n";
}

void queueSection(std::ostringstream& out, const PageModel& model) {
  out << "<section id=\"queue\"><h2>Waiting for admission</h2>\n";
  if (model.waiting.empty()) {
    out << "<p>No job is waiting.</p></section>\n";
    return;
  }
  out << "<table class=\"queue\"><thead><tr><th>position</th><th>job</th><th>IPUs</th><th>reason</th>"
         "<th>message</th></tr></thead><tbody>\n";
  for (const WaitingJob& job : model.waiting) {
    out << "<tr><td>" << (job.position ? std::to_string(*job.position) : "") << "</td><td>"
        << escaped(jobLabel(job.ns, job.job)) << "</td><td>" << job.ipus << "</td><td>" << escaped(job.reason)
        << "</td><td>" << escaped(job.message) << "</td></tr>\n";
  }
  out << "</tbody></table></section>\n";
}

void quotaSection(std::ostringstream& out, const PageModel& model) {
  out << "<section id=\"quotas\"><h2>IPU quotas</h2>\n";
  if (model.quotas.empty()) {
    out << "<p>No IPUQuota you may see.</p>\n";
  } else {
    out << "<table class=\"quotas\"><thead><tr><th>namespace</th><th>quota</th><th>IPUs in use</th>"
           "<th>of which starting</th><th>jobs</th><th>waiting</th></tr></thead><tbody>\n";
    for (const QuotaRow& row : model.quotas) {
      out << "<tr><td>" << escaped(row.ns) << "</td><td>" << escaped(row.quota) << "</td><td>"
          << row.usedIpus + row.reservedIpus << " / " << row.maxIpus << "</td><td>" << row.reservedIpus
          << "</td><td>" << row.admittedJobs << " / " << (row.maxJobs ? std::to_string(*row.maxJobs) : "-")
          << "</td><td>" << row.waitingJobs << "</td></tr>\n";
    }
    out << "</tbody></table>\n";
  }
  if (model.hiddenQuotas > 0)
    out << "<p class=\"note\">" << model.hiddenQuotas
        << (model.hiddenQuotas == 1 ? " IPUQuota" : " IPUQuotas")
        << " of namespaces whose IPUJobs you may not list " << (model.hiddenQuotas == 1 ? "is" : "are")
        << " not shown.</p>\n";
  out << "</section>\n";
}

constexpr const char* kStyle = R"(
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#212529}
h1{font-size:1.4em;margin:0 0 .2em}h2{font-size:1.15em;margin:1.4em 0 .3em}
.meta,.note{color:#6c757d}.warning{color:#b02a37}
svg.pod{display:block;margin:.6em 0;max-width:100%;height:auto}
svg .ild{font:12px system-ui,sans-serif;fill:#495057}
svg .machine{fill:none;stroke:#adb5bd;stroke-width:1}
svg .ipu{stroke:#495057;stroke-width:.5}svg .ipu:hover{stroke:#000;stroke-width:2}
table{border-collapse:collapse;margin:.4em 0}th,td{text-align:left;padding:.2em .8em .2em 0}
th{font-weight:600;border-bottom:1px solid #dee2e6}
.swatch{display:inline-block;width:1em;height:1em;border:1px solid #495057;vertical-align:middle}
)";

}  // namespace

std::string holderColour(const MapHolder& holder, int jobIndex) {
  if (holder.kind == api::kHolderUnowned) return "#868e96";
  if (holder.kind == api::kHolderExternal) return "#343a40";
  const int hue = static_cast<int>(std::fmod(jobIndex * 137.508, 360.0));
  // Two lightnesses in turn, so that jobs whose hues come round close again still differ.
  return "hsl(" + std::to_string(hue) + ", 70%, " + (jobIndex % 2 == 0 ? "52%" : "40%") + ")";
}

PageModel pageModelOf(const PageSnapshot& snapshot, const PageViewer& viewer) {
  PageModel model;
  model.at = snapshot.at;
  model.viewer = viewer.name;
  VisibleJobs visible;
  for (const auto& [uid, job] : snapshot.jobs)
    if (viewer.sees(job.ns)) visible.emplace(uid, job);
  for (const api::IpuPodStatus& status : snapshot.pods) model.pods.push_back(podMapViewOf(status, visible));
  for (const WaitingJob& job : snapshot.quotas.waiting) {
    model.waiting.push_back(
        viewer.sees(job.ns) ? job
                            : WaitingJob{.ipus = job.ipus, .position = job.position, .reason = job.reason});
  }
  // One queue across namespaces, in its order; jobs without a position (not yet placed) last.
  std::stable_sort(model.waiting.begin(), model.waiting.end(), [](const WaitingJob& a, const WaitingJob& b) {
    return a.position.value_or(1 << 30) < b.position.value_or(1 << 30);
  });
  for (const QuotaRow& row : snapshot.quotas.quotas) {
    if (viewer.sees(row.ns)) {
      model.quotas.push_back(row);
    } else {
      ++model.hiddenQuotas;
    }
  }
  return model;
}

std::string renderPodMapPage(const PageModel& model, int refreshSeconds) {
  std::ostringstream out;
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  if (refreshSeconds > 0) out << "<meta http-equiv=\"refresh\" content=\"" << refreshSeconds << "\">\n";
  out << "<title>IPU-POD map</title>\n<style>" << kStyle << "</style></head>\n<body>\n<h1>IPU-POD map</h1>\n"
      << "<p class=\"meta\">As the operator saw it at " << formatTime(model.at);
  if (!model.viewer.empty()) out << ", shown to " << escaped(model.viewer);
  if (refreshSeconds > 0) out << "; this page reloads every " << refreshSeconds << " s";
  out << ". Hover over an IPU to see who holds it.</p>\n";
  if (model.pods.empty()) out << "<p>No V-IPU controller is configured.</p>\n";
  for (const PodMapView& view : model.pods) podSection(out, view, model.at);
  queueSection(out, model);
  quotaSection(out, model);
  out << "</body></html>\n";
  return out.str();
}

}  // namespace ipu::controllers
