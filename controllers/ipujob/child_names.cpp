#include "ipujob/child_names.h"

#include <algorithm>
#include <cctype>

#include "common/stable_hash.h"

namespace ipu::controllers {
namespace {

constexpr std::size_t kMaxLabel = 63;       // DNS labels, label values
constexpr std::size_t kMaxSubdomain = 253;  // object names
constexpr int kHashDigits = 8;
constexpr const char* kWorkerInfix = "-worker-";

bool isLowerAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

// `text` cut to at most `keep` characters with trailing separators removed (a label may not end in one),
// then "-" and a hash of `whole`.
std::string cutWithHash(std::string text, std::size_t keep, const std::string& whole) {
  text.resize(std::min(text.size(), keep));
  while (!text.empty() && !isLowerAlnum(text.back())) text.pop_back();
  return (text.empty() ? "" : text + "-") + stableHashHex(whole, kHashDigits);
}

std::string dotsAsDashes(std::string text) {
  std::replace(text.begin(), text.end(), '.', '-');
  return text;
}

}  // namespace

bool isDnsLabel(std::string_view text) {
  if (text.empty() || text.size() > kMaxLabel) return false;
  if (!isLowerAlnum(text.front()) || !isLowerAlnum(text.back())) return false;
  return std::all_of(text.begin(), text.end(), [](char c) { return isLowerAlnum(c) || c == '-'; });
}

std::string workerPodName(const std::string& jobName, int workerIndex) {
  return jobName + kWorkerInfix + std::to_string(workerIndex);
}

std::string workerHostname(const std::string& jobName, int workerIndex) {
  const std::string plain = workerPodName(jobName, workerIndex);
  if (isDnsLabel(plain)) return plain;
  const std::string tail = kWorkerInfix + std::to_string(workerIndex);
  const std::size_t room = kMaxLabel - tail.size() - 1 - kHashDigits;
  // A hash-only prefix would start with a digit or letter either way: a valid label start.
  return cutWithHash(dotsAsDashes(jobName), room, jobName) + tail;
}

std::string headlessServiceName(const std::string& jobName) {
  const bool startsWithLetter = !jobName.empty() && jobName.front() >= 'a' && jobName.front() <= 'z';
  if (startsWithLetter && isDnsLabel(jobName)) return jobName;
  std::string base = dotsAsDashes(jobName);
  if (!startsWithLetter) base = "j" + base;
  return cutWithHash(base, kMaxLabel - 1 - kHashDigits, jobName);
}

std::string jobLabelValue(const std::string& jobName) {
  if (jobName.size() <= kMaxLabel) return jobName;
  return cutWithHash(jobName, kMaxLabel - 1 - kHashDigits, jobName);
}

std::string runtimeSecretGenerateName(const std::string& jobName) {
  constexpr std::string_view kTail = "-ipu-runtime-";
  constexpr std::size_t kGeneratedSuffix = 5;  // what the API server appends to a generateName
  if (jobName.size() + kTail.size() + kGeneratedSuffix <= kMaxSubdomain) return jobName + std::string(kTail);
  return cutWithHash(jobName, kMaxSubdomain - kGeneratedSuffix - kTail.size() - 1 - kHashDigits, jobName) +
         std::string(kTail);
}

std::string legacyRuntimeSecretName(const api::ObjectIdentity& job) {
  const std::string tail = "-ipu-runtime-" + stableHashHex(job.uid, kHashDigits);
  if (job.name.size() + tail.size() <= kMaxSubdomain) return job.name + tail;
  return cutWithHash(job.name, kMaxSubdomain - tail.size() - 1 - kHashDigits, job.name) + tail;
}

}  // namespace ipu::controllers
