#include "remote/connection.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>

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
  std::optional<std::size_t> got = stream_->readAvailable(buffer);
  if (!got) return true;  // part of a TLS record: the rest comes with a later poll()
  return take(std::span(buffer).first(*got));
}

bool Connection::take(std::span<const std::byte> received) {
  if (received.empty()) {
    reader_.finish();
    return false;
  }
  reader_.feed(received);
  return true;
}

std::optional<protocol::Frame> Connection::receive(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (auto frame = reader_.next()) return frame;
    auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left <= std::chrono::milliseconds::zero())
      throw protocol::ProtocolError("no answer within " + std::to_string(timeout.count()) + " ms");
    std::array<std::byte, 64 * 1024> buffer;
    if (!take(std::span(buffer).first(stream_->read(buffer, left)))) return std::nullopt;
  }
}

Connection connectToAgent(const Credentials& credentials, const std::string& host, int port,
                          std::chrono::milliseconds timeout) {
  // One deadline for both steps, so that a caller's timeout is the most this takes.
  auto deadline = std::chrono::steady_clock::now() + timeout;
  net::Fd fd = net::connectTcp(host, port, timeout);
  auto stream = std::make_unique<tls::Stream>(credentials.context(tls::Role::kClient), fd.release());
  auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  stream->handshake(std::max(left, std::chrono::milliseconds(1)));
  return Connection(std::move(stream));
}

int agentPort() {
  const char* text = std::getenv(contract::kEnvAgentPort);
  if (text == nullptr || *text == '\0') return contract::kAgentPort;
  const std::optional<int> port = contract::portFrom(text);
  if (!port)
    throw net::NetError(std::string(contract::kEnvAgentPort) + "=\"" + text + "\" is not a port (1-65535)");
  return *port;
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
