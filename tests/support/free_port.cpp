#include "free_port.h"

#include <stdexcept>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace ipu::testing {

std::uint16_t freePortOn(const std::string& ipv4) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  if (::inet_pton(AF_INET, ipv4.c_str(), &address.sin_addr) != 1)
    throw std::runtime_error("freePortOn: \"" + ipv4 + "\" is not an IPv4 address");
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("freePortOn: no socket");
  socklen_t length = sizeof address;
  const bool found = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
                     ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0;
  ::close(fd);
  if (!found) throw std::runtime_error("freePortOn: cannot bind a port on " + ipv4);
  return ntohs(address.sin_port);
}

std::uint16_t freeLoopbackPort() {
  return freePortOn("127.0.0.1");
}

}  // namespace ipu::testing
