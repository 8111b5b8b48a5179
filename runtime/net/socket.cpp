#include "net/socket.h"

#include <cerrno>
#include <cstring>
#include <memory>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace ipu::runtime::net {
namespace {

std::string errnoText(const std::string& what) {
  return what + ": " + std::strerror(errno);
}

void setOption(int fd, int level, int name, int value) {
  setsockopt(fd, level, name, &value, sizeof value);
}

// Binds and listens on the wildcard address of one family; an invalid Fd when the family is unavailable.
Fd listenOn(int family, int port) {
  Fd fd(socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) return fd;
  setOption(fd.get(), SOL_SOCKET, SO_REUSEADDR, 1);
  sockaddr_storage address{};
  socklen_t length;
  if (family == AF_INET6) {
    setOption(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, 0);
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&address);
    v6->sin6_family = AF_INET6;
    v6->sin6_addr = in6addr_any;
    v6->sin6_port = htons(static_cast<std::uint16_t>(port));
    length = sizeof(sockaddr_in6);
  } else {
    auto* v4 = reinterpret_cast<sockaddr_in*>(&address);
    v4->sin_family = AF_INET;
    v4->sin_addr.s_addr = htonl(INADDR_ANY);
    v4->sin_port = htons(static_cast<std::uint16_t>(port));
    length = sizeof(sockaddr_in);
  }
  if (bind(fd.get(), reinterpret_cast<sockaddr*>(&address), length) != 0 || listen(fd.get(), 128) != 0) {
    if (family == AF_INET) throw NetError(errnoText("cannot listen on port " + std::to_string(port)));
    return Fd();
  }
  return fd;
}

// Waits for a non-blocking connect to finish; the socket's error when it failed.
int finishConnect(int fd, std::chrono::milliseconds timeout) {
  pollfd wait{fd, POLLOUT, 0};
  int ready;
  do {
    ready = poll(&wait, 1, static_cast<int>(timeout.count()));
  } while (ready < 0 && errno == EINTR);
  if (ready == 0) return ETIMEDOUT;
  int error = 0;
  socklen_t length = sizeof error;
  getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length);
  return error;
}

}  // namespace

Fd listenTcp(int port) {
  if (port < 0 || port > 65535) throw NetError("port " + std::to_string(port) + " is out of range 0-65535");
  if (Fd v6 = listenOn(AF_INET6, port)) return v6;
  return listenOn(AF_INET, port);
}

int localPort(int fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0)
    throw NetError(errnoText("getsockname"));
  if (address.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&address)->sin6_port);
  return ntohs(reinterpret_cast<sockaddr_in*>(&address)->sin_port);
}

Fd connectTcp(const std::string& host, int port, std::chrono::milliseconds timeout) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  int resolved = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found);
  if (resolved != 0) throw NetError("cannot resolve " + host + ": " + gai_strerror(resolved));
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> addresses(found, freeaddrinfo);
  std::string lastError = "no address";
  for (addrinfo* address = found; address != nullptr; address = address->ai_next) {
    Fd fd(socket(address->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!fd) continue;
    int error = connect(fd.get(), address->ai_addr, address->ai_addrlen) == 0 ? 0 : errno;
    if (error == EINPROGRESS) error = finishConnect(fd.get(), timeout);
    if (error == 0) {
      fcntl(fd.get(), F_SETFL, fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK);
      setOption(fd.get(), IPPROTO_TCP, TCP_NODELAY, 1);
      enableKeepAlive(fd.get());
      return fd;
    }
    lastError = std::strerror(error);
  }
  throw NetError("cannot connect to " + host + ":" + std::to_string(port) + ": " + lastError);
}

std::string peerAddress(int fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) return "unknown peer";
  char host[NI_MAXHOST];
  char service[NI_MAXSERV];
  if (getnameinfo(reinterpret_cast<sockaddr*>(&address), length, host, sizeof host, service, sizeof service,
                  NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    return "unknown peer";
  std::string text = host;
  if (text.rfind("::ffff:", 0) == 0) text = text.substr(7);
  return text + ":" + service;
}

void enableKeepAlive(int fd) {
  setOption(fd, SOL_SOCKET, SO_KEEPALIVE, 1);
  setOption(fd, IPPROTO_TCP, TCP_KEEPIDLE, 20);
  setOption(fd, IPPROTO_TCP, TCP_KEEPINTVL, 10);
  setOption(fd, IPPROTO_TCP, TCP_KEEPCNT, 3);
}

}  // namespace ipu::runtime::net
