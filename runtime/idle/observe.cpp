#include "idle/observe.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include <arpa/inet.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fd/fd.h"

namespace ipu::runtime::idle {
namespace {

namespace fs = std::filesystem;

// /proc/PID/stat: "pid (comm) state ppid ... utime stime ..."; comm may hold spaces and parentheses, so the
// fields are read after the last ')'.
bool readStat(const fs::path& file, ProcessSample& sample) {
  std::ifstream in(file);
  std::string text;
  if (!std::getline(in, text)) return false;
  const auto close = text.rfind(')');
  if (close == std::string::npos) return false;
  std::istringstream fields(text.substr(close + 1));
  std::string state;
  long long ppid = 0;
  fields >> state >> ppid;
  std::string skipped;
  for (int field = 5; field < 14; ++field) fields >> skipped;  // pgrp .. cmajflt
  unsigned long long utime = 0;
  unsigned long long stime = 0;
  fields >> utime >> stime;
  if (!fields) return false;
  sample.ppid = static_cast<int>(ppid);
  sample.cpuTicks = utime + stime;
  return true;
}

void addSocketInodes(const fs::path& fdDir, std::set<std::uint64_t>& inodes) {
  std::error_code error;
  for (fs::directory_iterator entry(fdDir, error), end; !error && entry != end; entry.increment(error)) {
    std::error_code readError;
    const std::string target = fs::read_symlink(entry->path(), readError).string();
    if (readError || !target.starts_with("socket:[")) continue;
    try {
      inodes.insert(std::stoull(target.substr(8)));
    } catch (const std::exception&) {
    }
  }
}

std::string addressText(int family, const __be32* words) {
  char text[INET6_ADDRSTRLEN] = {};
  inet_ntop(family, words, text, sizeof text);
  return text;
}

SocketSample::State stateOf(int tcpState) {
  switch (tcpState) {
    case 1:  // TCP_ESTABLISHED
      return SocketSample::State::kEstablished;
    case 6:  // TCP_TIME_WAIT
      return SocketSample::State::kTimeWait;
    case 10:  // TCP_LISTEN
      return SocketSample::State::kListen;
    default:
      return SocketSample::State::kOther;
  }
}

// Netlink messages and their attributes are aligned to 4 bytes (NLMSG_ALIGN, RTA_ALIGN).
constexpr std::size_t aligned(std::size_t length) {
  return (length + 3) & ~std::size_t{3};
}

// One inet_diag_msg of `length` bytes and its attributes (INET_DIAG_INFO: tcp_info, with the byte counts).
SocketSample socketFrom(int family, const char* message, std::size_t length) {
  const auto* diag = reinterpret_cast<const inet_diag_msg*>(message);
  SocketSample socket;
  socket.state = stateOf(diag->idiag_state);
  socket.localAddress = addressText(family, diag->id.idiag_src);
  socket.localPort = ntohs(diag->id.idiag_sport);
  socket.remoteAddress = addressText(family, diag->id.idiag_dst);
  socket.remotePort = ntohs(diag->id.idiag_dport);
  socket.inode = diag->idiag_inode;
  for (std::size_t offset = aligned(sizeof(inet_diag_msg)); offset + sizeof(rtattr) <= length;) {
    const auto* attribute = reinterpret_cast<const rtattr*>(message + offset);
    if (attribute->rta_len < sizeof(rtattr) || offset + attribute->rta_len > length) break;
    if (attribute->rta_type == INET_DIAG_INFO) {
      tcp_info info{};
      const std::size_t payload = attribute->rta_len - aligned(sizeof(rtattr));
      std::memcpy(&info, message + offset + aligned(sizeof(rtattr)), std::min(payload, sizeof info));
      socket.bytes = info.tcpi_bytes_received + info.tcpi_bytes_acked;
    }
    offset += aligned(attribute->rta_len);
  }
  return socket;
}

void dumpFamily(int family, std::vector<SocketSample>& sockets) {
  Fd netlink(::socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG));
  if (!netlink) throw std::system_error(errno, std::generic_category(), "sock_diag socket");
  struct {
    nlmsghdr header;
    inet_diag_req_v2 request;
  } message{};
  message.header.nlmsg_len = sizeof message;
  message.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  message.header.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  message.request.sdiag_family = static_cast<std::uint8_t>(family);
  message.request.sdiag_protocol = IPPROTO_TCP;
  message.request.idiag_states = ~0U;
  message.request.idiag_ext = 1U << (INET_DIAG_INFO - 1);
  if (::send(netlink.get(), &message, sizeof message, 0) < 0)
    throw std::system_error(errno, std::generic_category(), "sock_diag request");
  alignas(nlmsghdr) char buffer[32768];
  for (;;) {
    const ssize_t received = ::recv(netlink.get(), buffer, sizeof buffer, 0);
    if (received < 0 && errno == EINTR) continue;
    if (received < 0) throw std::system_error(errno, std::generic_category(), "sock_diag reply");
    const auto size = static_cast<std::size_t>(received);
    for (std::size_t offset = 0; offset + sizeof(nlmsghdr) <= size;) {
      const auto* header = reinterpret_cast<const nlmsghdr*>(buffer + offset);
      if (header->nlmsg_len < sizeof(nlmsghdr) || offset + header->nlmsg_len > size) break;
      if (header->nlmsg_type == NLMSG_DONE) return;
      const char* payload = buffer + offset + aligned(sizeof(nlmsghdr));
      if (header->nlmsg_type == NLMSG_ERROR) {
        const auto* error = reinterpret_cast<const nlmsgerr*>(payload);
        throw std::system_error(-error->error, std::generic_category(), "sock_diag");
      }
      sockets.push_back(socketFrom(family, payload, header->nlmsg_len - aligned(sizeof(nlmsghdr))));
      offset += aligned(header->nlmsg_len);
    }
  }
}

}  // namespace

Look lookAtProcesses(const std::string& procRoot) {
  Look look;
  std::error_code error;
  for (fs::directory_iterator entry(procRoot, error), end; !error && entry != end; entry.increment(error)) {
    const std::string name = entry->path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    ProcessSample sample;
    sample.pid = std::stoi(name);
    if (!readStat(entry->path() / "stat", sample)) continue;  // it ended meanwhile
    look.processes.push_back(sample);
    addSocketInodes(entry->path() / "fd", look.containerSockets);
  }
  return look;
}

std::vector<SocketSample> tcpSockets() {
  std::vector<SocketSample> sockets;
  dumpFamily(AF_INET, sockets);
  dumpFamily(AF_INET6, sockets);
  return sockets;
}

Look lookAtContainer() {
  Look look = lookAtProcesses();
  look.sockets = tcpSockets();
  return look;
}

}  // namespace ipu::runtime::idle
