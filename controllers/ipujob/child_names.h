#pragma once

#include <string>
#include <string_view>

#include "api/ipujob.h"

namespace ipu::controllers {

// The names of what the operator makes for a job, each within its own Kubernetes limit, derived from the
// job's name alone (pure, stable across releases: a new operator finds what an old one made).
//
// Any name the API server accepts for an IPUJob (a DNS subdomain: up to 253 characters of [a-z0-9.-],
// starting and ending with a letter or digit) gets valid children; names that already fit keep the plain
// form, so short names look as they always did. What cannot be made to fit — a worker pod name over 253,
// which users type and so is never shortened — the CRD refuses at `kubectl apply` (api::maxJobNameLength).

// "<job>-worker-<k>", as users type it in `kubectl logs`. Never shortened.
std::string workerPodName(const std::string& jobName, int workerIndex);

// An RFC 1123 label ([a-z0-9-], at most 63, starting and ending with a letter or digit): a namespace's name.
bool isDnsLabel(std::string_view text);

// The pod's spec.hostname, a DNS label (63, no dots): "<job>-worker-<k>" when that is one; otherwise the
// job name with dots as '-', cut, plus 8 hex digits of a hash of the whole name, then "-worker-<k>".
// Peers reach each other as "<hostname>.<service>" (IPU_RUNTIME_PEERS carries exactly these names).
std::string workerHostname(const std::string& jobName, int workerIndex);

// The headless Service (and the pods' spec.subdomain), an RFC 1035 label (63, starts with a letter, no
// dots): the job name when it is one; otherwise it made into one ("j" before a leading digit, dots as '-',
// cut) plus '-' and 8 hex digits of a hash of the whole name, so "a.b" and "a-b" get different Services.
std::string headlessServiceName(const std::string& jobName);

// The graphcore.ai/ipujob label's value (63): the job name, or for longer names its first 54 characters, '-'
// and 8 hex digits of a hash of the whole name. Selectors use it; the job owns its children by
// ownerReference, never by label.
std::string jobLabelValue(const std::string& jobName);

// The generateName of the Secret with the job's runtime credentials: "<job>-ipu-runtime-", the job's name
// cut with a hash when the generated name (5 characters more) would pass a DNS subdomain's 253. The API
// server completes it at creation, so nobody can create the job's Secret first (status.runtimeSecret).
std::string runtimeSecretGenerateName(const std::string& jobName);

// The name versions before status.runtimeSecret gave the Secret: "<job>-ipu-runtime-<8 hex digits of a hash
// of the job's uid>". Known as soon as the job exists, so anybody who may create Secrets could create one
// under it first; used only for the pods of a job made by such a version, which mount it already.
std::string legacyRuntimeSecretName(const api::ObjectIdentity& job);

}  // namespace ipu::controllers
