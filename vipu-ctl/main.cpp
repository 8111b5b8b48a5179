// vipu-ctl: a small admin CLI for any V-IPU endpoint. Wiring only; the commands live in ctl_command.cpp.
#include <iostream>

#include "vipu-ctl/ctl_command.h"
#include "vipu/vipu_client.h"

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  const ipu::vipu::ctl::ApiFactory connect =
      [](const ipu::vipu::ClientOptions& options) -> ipu::Result<std::shared_ptr<ipu::vipu::VipuApi>> {
    auto client = ipu::vipu::VipuClient::create(options);
    if (!client) return client.error();
    return std::shared_ptr<ipu::vipu::VipuApi>(std::move(*client));
  };
  return ipu::vipu::ctl::runCtl(args, connect, std::cout, std::cerr,
                                ipu::vipu::ctl::defaultEndpoint(ipu::processEnvironment));
}
