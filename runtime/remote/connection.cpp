#include "remote/connection.h"

#include <array>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <poll.h>
#include <unistd.h>

#include "contract/runtime_contract.h"
#include "net/socket.h"
#include "tls/pki.h"

namespace ipu::runtime::remote {
namespace {

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int error = errno;
    if (error == EACCES) {
      throw tls::TlsError("cannot read " + path + " as user " + std::to_string(geteuid()) +
                          ": the job's runtime Secret is mounted readable by its owner (root) only; a worker "
                          "container that runs as another user needs the pod's securityContext.fsGroup, "
                          "which makes the kubelet give that group read access");
    }
    throw tls::TlsError("cannot read " + path + " (is the job's runtime Secret mounted?)");
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string pathIn(const std::string& directory, const char* file) {
  return directory + "/" + file;
}

}  // namespace

Credentials Credentials::load(const std::string& directory, const std::string& pinnedCaDigest) {
  Credentials loaded{directory, "", readFile(pathIn(directory, contract::kCaFile)),
                     readFile(pathIn(directory, contract::kCertFile)),
                     readFile(pathIn(directory, contract::kKeyFile))};
  if (!pinnedCaDigest.empty()) {
    if (const std::string digest = pki::pemDigest(loaded.caPem); digest != pinnedCaDigest) {
      throw tls::TlsError(pathIn(directory, contract::kCaFile) +
                          " is not the CA the operator issued for this job " + "(its SHA-256 is " + digest +
                          ", the pod pins " + pinnedCaDigest +
                          "): the job's runtime Secret was replaced; refusing to use it");
    }
  }
  try {
    loaded.identity = pki::identityOf(loaded.certPem);
  } catch (const std::exception& error) {
    throw tls::TlsError(pathIn(directory, contract::kCertFile) + ": " + error.what());
  }
  return loaded;
}

tls::Context Credentials::context(tls::Role role) const {
  try {
    return tls::Context::fromPem(role, caPem, certPem, keyPem, identity);
  } catch (const tls::TlsError& error) {
    throw tls::TlsError("the credentials in " + directory + ": " + error.what());
  }
}

void Connection::send(const protocol::Frame& frame) {
  std::string bytes = protocol::encode(frame);
  stream_->writeAll(std::as_bytes(std::span(bytes.data(), bytes.size())));
}

bool Connection::readAvailable() {
  std::array<std::byte, 64 * 1024> buffer;
  std::size_t got = stream_->read(buffer);
  if (got == 0) {
    reader_.finish();
    return false;
  }
  reader_.feed(std::span<const std::byte>(buffer.data(), got));
  return true;
}

std::optional<protocol::Frame> Connection::receive(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (auto frame = reader_.next()) return frame;
    if (!hasBufferedData()) {
      auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      pollfd wait{fd(), POLLIN, 0};
      int ready = left.count() > 0 ? poll(&wait, 1, static_cast<int>(left.count())) : 0;
      if (ready < 0 && errno == EINTR) continue;
      if (ready <= 0)
        throw protocol::ProtocolError("no answer within " + std::to_string(timeout.count()) + " ms");
    }
    if (!readAvailable()) return std::nullopt;
  }
}

Connection connectToAgent(const Credentials& credentials, const std::string& host, int port,
                          std::chrono::milliseconds timeout) {
  net::Fd fd = net::connectTcp(host, port, timeout);
  auto stream = std::make_unique<tls::Stream>(credentials.context(tls::Role::kClient), fd.release());
  stream->handshake(timeout);
  return Connection(std::move(stream));
}

int agentPort() {
  const char* text = std::getenv(contract::kEnvAgentPort);
  if (text == nullptr || *text == '\0') return contract::kAgentPort;
  std::string_view value(text);
  int port = 0;
  auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), port);
  if (error != std::errc() || end != value.data() + value.size() || port < 1 || port > 65535)
    throw net::NetError(std::string(contract::kEnvAgentPort) + "=\"" + text + "\" is not a port (1-65535)");
  return port;
}

std::string credentialsDirectory() {
  const char* text = std::getenv(contract::kEnvCredentialsDir);
  return text != nullptr && *text != '\0' ? text : contract::kCredentialsDir;
}

std::string pinnedCaDigest() {
  const char* text = std::getenv(contract::kEnvCaSha256);
  return text != nullptr ? text : "";
}

Credentials podCredentials() {
  return Credentials::load(credentialsDirectory(), pinnedCaDigest());
}

}  // namespace ipu::runtime::remote
