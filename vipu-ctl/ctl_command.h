#pragma once

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "common/result.h"
#include "vipu/client_options.h"
#include "vipu/vipu_api.h"

namespace ipu::vipu::ctl {

// Makes the API for the --endpoint/TLS options given; the binary connects a VipuClient, tests may return an
// in-memory one.
using ApiFactory = std::function<Result<std::shared_ptr<VipuApi>>(const ClientOptions& options)>;

// vipu-ctl: list, create, remove, reset, status, wait, ipuof, attributes and topology against any V-IPU
// endpoint. `args` excludes the program name. Returns the exit status: 0 done, 1 the controller refused or
// failed, 2 bad usage.
int runCtl(const std::vector<std::string>& args, const ApiFactory& connect, std::ostream& out,
           std::ostream& err);
std::string ctlUsage();

// "0:16-31" or "0:4,0:5" -> explicit IPUs (ILD:IPU or ILD:FIRST-LAST, comma-separated); routing ids follow
// the order given.
Result<std::vector<PartitionIpu>> parseIpuList(std::string_view text);

}  // namespace ipu::vipu::ctl
