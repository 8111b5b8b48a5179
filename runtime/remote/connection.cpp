#include "remote/connection.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "contract/runtime_contract.h"
#include "net/socket.h"
#include "tls/pki.h"

namespace ipu::runtime::remote {
namespace {

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw tls::TlsError("cannot read " + path + " (is the job's runtime Secret mounted?)");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string pathIn(const std::string& directory, const char* file) {
  return directory + "/" + file;
}

}  // namespace

Credentials Credentials::load(const std::string& directory) {
  std::string certificate = readFile(pathIn(directory, contract::kCertFile));
  try {
    return {directory, pki::identityOf(certificate)};
  } catch (const std::exception& error) {
    throw tls::TlsError(pathIn(directory, contract::kCertFile) + ": " + error.what());
  }
}

tls::Context Credentials::context(tls::Role role) const {
  return tls::Context::fromFiles(role, pathIn(directory, contract::kCaFile),
                                 pathIn(directory, contract::kCertFile),
                                 pathIn(directory, contract::kKeyFile), identity);
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

}  // namespace ipu::runtime::remote
