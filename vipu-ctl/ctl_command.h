#pragma once

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "common/environment.h"
#include "common/result.h"
#include "vipu/client_options.h"
#include "vipu/vipu_api.h"

namespace ipu::vipu::ctl {

// Makes the API for the --endpoint/TLS options given; the binary connects a VipuClient, tests may return an
// in-memory one.
using ApiFactory = std::function<Result<std::shared_ptr<VipuApi>>(const ClientOptions& options)>;

inline constexpr const char* kLocalEndpoint = "127.0.0.1:8090";

// Where vipu-ctl talks to without --endpoint: in a worker pod, the V-IPU the operator gave its Poplar
// (IPUOF_VIPU_API_HOST, and IPUOF_VIPU_API_PORT or 8090), so that it goes through the operator's proxy as
// Poplar does; elsewhere kLocalEndpoint. `environment` looks a variable up (the process's: std::getenv).
std::string defaultEndpoint(const Environment& environment);

// vipu-ctl: list, create, remove, reset, status, wait, ipuof, attributes and topology against any V-IPU
// endpoint. `args` excludes the program name. Returns the exit status: 0 done, 1 the controller refused or
// failed, 2 bad usage.
// `defaultEndpoint`: the controller without --endpoint (see defaultEndpoint()).
int runCtl(const std::vector<std::string>& args, const ApiFactory& connect, std::ostream& out,
           std::ostream& err, const std::string& defaultEndpoint = kLocalEndpoint);
std::string ctlUsage();

// "0:16-31" or "0:4,0:5" -> explicit IPUs (ILD:IPU or ILD:FIRST-LAST, comma-separated); routing ids follow
// the order given.
Result<std::vector<PartitionIpu>> parseIpuList(std::string_view text);

}  // namespace ipu::vipu::ctl
