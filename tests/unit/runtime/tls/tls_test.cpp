#include "tls/tls.h"

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <openssl/err.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tls/openssl_handles.h"
#include "tls/pki.h"

namespace ipu::runtime::tls {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using SteadyClock = std::chrono::steady_clock;

// Like the runtime's main: a write to a socket the peer closed reports EPIPE instead of killing the process.
const bool kSigpipeIgnored = [] { return std::signal(SIGPIPE, SIG_IGN) != SIG_ERR; }();

constexpr const char* kJob = "ipujob/default/bert/2c1e7f3a-0d4b-4c55-9a8e-5f1b2a3c4d5e";
constexpr const char* kOtherJob = "ipujob/default/gpt/7d0e1c2b-aaaa-4bbb-8ccc-123456789abc";

std::pair<int, int> socketPair() {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) throw std::runtime_error("socketpair");
  return {fds[0], fds[1]};
}

Context serverContext(const pki::JobCredentials& creds, const std::string& expected = kJob) {
  return Context::fromPem(Role::kServer, creds.caCertPem, creds.certPem, creds.keyPem, expected);
}

Context clientContext(const pki::JobCredentials& creds, const std::string& expected = kJob) {
  return Context::fromPem(Role::kClient, creds.caCertPem, creds.certPem, creds.keyPem, expected);
}

// One end of a connection after its handshake: the Stream, or the TlsError's message.
struct End {
  std::optional<Stream> stream;
  std::string error;
  std::chrono::milliseconds took{};
};

End handshakeEnd(const Context& context, int fd, std::chrono::milliseconds timeout) {
  End end;
  const auto start = SteadyClock::now();
  try {
    Stream stream(context, fd);
    stream.handshake(timeout);
    end.stream.emplace(std::move(stream));
  } catch (const TlsError& e) {
    end.error = e.what();
  }
  end.took = std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::now() - start);
  return end;
}

struct Connection {
  End server;
  End client;
};

// Both handshakes at once, the server's on a thread, over a socketpair.
Connection connect(const Context& server, const Context& client, std::chrono::milliseconds timeout = 5s) {
  const auto [serverFd, clientFd] = socketPair();
  Connection connection;
  std::thread serverThread([&, fd = serverFd] { connection.server = handshakeEnd(server, fd, timeout); });
  connection.client = handshakeEnd(client, clientFd, timeout);
  serverThread.join();
  return connection;
}

std::span<const std::byte> bytes(const std::string& text) {
  return std::as_bytes(std::span(text));
}

std::string readExactly(Stream& stream, size_t size) {
  std::string text(size, '\0');
  size_t done = 0;
  while (done < size) {
    const size_t got = stream.read(std::as_writable_bytes(std::span(text)).subspan(done));
    if (got == 0) throw std::runtime_error("test: early end of stream");
    done += got;
  }
  return text;
}

std::string readError(Stream& stream) {
  std::byte buffer[16];
  try {
    const size_t got = stream.read(buffer);
    return "no error (read " + std::to_string(got) + " bytes)";
  } catch (const TlsError& e) {
    return e.what();
  }
}

class TlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ASSERT_TRUE(kSigpipeIgnored);
    job_ = new pki::JobCredentials(pki::issueJobCredentials(kJob, 1h));
    otherJob_ = new pki::JobCredentials(pki::issueJobCredentials(kOtherJob, 1h));
  }
  static void TearDownTestSuite() {
    delete job_;
    delete otherJob_;
  }
  static const pki::JobCredentials& job() { return *job_; }
  static const pki::JobCredentials& otherJob() { return *otherJob_; }

 private:
  static inline pki::JobCredentials* job_ = nullptr;
  static inline pki::JobCredentials* otherJob_ = nullptr;
};

TEST_F(TlsTest, TheSameJobsEndsConnectAndDataFlowsBothWays) {
  const Context server = serverContext(job());
  const Context client = clientContext(job());
  Connection c = connect(server, client);
  ASSERT_EQ(c.server.error, "");
  ASSERT_EQ(c.client.error, "");
  Stream& s = *c.server.stream;
  Stream& k = *c.client.stream;
  EXPECT_EQ(s.peerIdentity(), kJob);
  EXPECT_EQ(k.peerIdentity(), kJob);

  k.writeAll(bytes("ping"));
  EXPECT_EQ(readExactly(s, 4), "ping");
  s.writeAll(bytes("pong"));
  EXPECT_EQ(readExactly(k, 4), "pong");

  // More than the socket buffers hold, so writer and reader must really stream.
  std::string big(3 * 1024 * 1024, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 7 + i / 4096);
  std::string received;
  std::thread reader([&] { received = readExactly(s, big.size()); });
  k.writeAll(bytes(big));
  reader.join();
  EXPECT_TRUE(received == big);

  k.shutdown();
  std::byte buffer[8];
  EXPECT_EQ(s.read(buffer), 0u);
  s.shutdown();
  EXPECT_EQ(k.read(buffer), 0u);
}

TEST_F(TlsTest, BufferedPlaintextIsReportedBecausePollCannotSeeIt) {
  const Context server = serverContext(job());
  const Context client = clientContext(job());
  Connection c = connect(server, client);
  ASSERT_EQ(c.server.error + c.client.error, "");
  EXPECT_FALSE(c.client.stream->hasBufferedData());
  c.server.stream->writeAll(bytes(std::string(100, 'x')));
  EXPECT_EQ(readExactly(*c.client.stream, 10), std::string(10, 'x'));
  EXPECT_TRUE(c.client.stream->hasBufferedData());
  EXPECT_EQ(readExactly(*c.client.stream, 90), std::string(90, 'x'));
  EXPECT_FALSE(c.client.stream->hasBufferedData());
}

// Each end presents the other job's certificate and key but trusts our CA, so that only the check under test
// can refuse (a client of another job that trusted its own CA would refuse our server first).
TEST_F(TlsTest, TheServerRefusesAClientOfAnotherJob) {
  const Context server = serverContext(job());
  const Context client =
      Context::fromPem(Role::kClient, job().caCertPem, otherJob().certPem, otherJob().keyPem, kJob);
  Connection c = connect(server, client);
  EXPECT_EQ(
      c.server.error,
      "TLS handshake failed: peer certificate is not signed by this job's CA (unable to get local issuer "
      "certificate)");
  EXPECT_EQ(c.client.error,
            "TLS handshake failed: the peer refused our certificate (tlsv1 alert unknown ca)");
}

TEST_F(TlsTest, TheClientRefusesAServerOfAnotherJob) {
  const Context server =
      Context::fromPem(Role::kServer, job().caCertPem, otherJob().certPem, otherJob().keyPem, kJob);
  const Context client = clientContext(job());
  Connection c = connect(server, client);
  EXPECT_EQ(
      c.client.error,
      "TLS handshake failed: peer certificate is not signed by this job's CA (unable to get local issuer "
      "certificate)");
  EXPECT_EQ(c.server.error,
            "TLS handshake failed: the peer refused our certificate (tlsv1 alert unknown ca)");
}

TEST_F(TlsTest, EndsOfTwoJobsDoNotConnect) {
  // Each trusts its own job's CA: the client, which sees the server's certificate first, refuses it.
  Connection c = connect(serverContext(job()), clientContext(otherJob(), kOtherJob));
  EXPECT_THAT(c.client.error, HasSubstr("peer certificate is not signed by this job's CA"));
  EXPECT_THAT(c.server.error, HasSubstr("the peer refused our certificate"));
  EXPECT_FALSE(c.server.stream.has_value());
  EXPECT_FALSE(c.client.stream.has_value());
}

TEST_F(TlsTest, ACertificateOfTheRightCaForAnotherIdentityIsRefusedBothWays) {
  const auto now = std::chrono::system_clock::now();
  const pki::ValidityWindow window{.notBefore = now - 1min, .notAfter = now + 1h};
  const pki::Authority ca = pki::newAuthority(kJob, window);
  const pki::JobCredentials right = pki::issueFrom(ca, kJob, window);
  const pki::JobCredentials wrong = pki::issueFrom(ca, kOtherJob, window);
  const std::string expected =
      std::string("TLS handshake failed: peer certificate was issued for ") + kOtherJob + ", not for " + kJob;
  {
    Connection c = connect(serverContext(right), clientContext(wrong));
    EXPECT_EQ(c.server.error, expected);
    EXPECT_EQ(c.client.error,
              "TLS handshake failed: the peer refused our certificate (sslv3 alert bad certificate)");
  }
  {
    Connection c = connect(serverContext(wrong), clientContext(right));
    EXPECT_EQ(c.client.error, expected);
    EXPECT_EQ(c.server.error,
              "TLS handshake failed: the peer refused our certificate (sslv3 alert bad certificate)");
  }
}

TEST_F(TlsTest, AnExpiredCertificateIsRefused) {
  const auto now = std::chrono::system_clock::now();
  const pki::Authority ca = pki::newAuthority(kJob, {.notBefore = now - 3h, .notAfter = now + 1h});
  const pki::JobCredentials valid = pki::issueFrom(ca, kJob, {.notBefore = now - 1h, .notAfter = now + 1h});
  const pki::JobCredentials expired = pki::issueFrom(ca, kJob, {.notBefore = now - 2h, .notAfter = now - 1h});
  {
    Connection c = connect(serverContext(valid), clientContext(expired));
    EXPECT_EQ(c.server.error, "TLS handshake failed: peer certificate refused: certificate has expired");
    EXPECT_EQ(c.client.error,
              "TLS handshake failed: the peer refused our certificate (sslv3 alert certificate expired)");
  }
  {
    Connection c = connect(serverContext(expired), clientContext(valid));
    EXPECT_EQ(c.client.error, "TLS handshake failed: peer certificate refused: certificate has expired");
    EXPECT_THAT(c.server.error, HasSubstr("the peer refused our certificate"));
  }
}

// A client built with OpenSSL directly, as our Context cannot be made without a certificate.
TEST_F(TlsTest, AClientWithoutACertificateIsRefused) {
  const Context server = serverContext(job());
  const auto [serverFd, clientFd] = socketPair();
  End serverEnd;
  std::thread serverThread([&, fd = serverFd] { serverEnd = handshakeEnd(server, fd, 5s); });

  openssl::SslCtx ctx(SSL_CTX_new(TLS_client_method()));
  SSL_CTX_set_min_proto_version(ctx.get(), TLS1_3_VERSION);
  openssl::Ssl ssl(SSL_new(ctx.get()));
  SSL_set_fd(ssl.get(), clientFd);
  EXPECT_EQ(SSL_connect(ssl.get()), 1);  // TLS 1.3: the client is done before the server looks at it
  char byte;
  EXPECT_LE(SSL_read(ssl.get(), &byte, 1), 0);
  EXPECT_EQ(openssl::drainErrors(), "tlsv13 alert certificate required");
  serverThread.join();
  ::close(clientFd);
  EXPECT_EQ(serverEnd.error, "TLS handshake failed: peer did not return a certificate");
}

TEST_F(TlsTest, APeerThatIsNotTlsFailsTheHandshakeAtOnce) {
  const Context server = serverContext(job());
  const Context client = clientContext(job());
  for (const Context* context : {&server, &client}) {
    const auto [ourFd, peerFd] = socketPair();
    const std::string garbage =
        "SSH-2.0-OpenSSH_9.2p1 Debian-2\r\nand then some more bytes that are not TLS\r\n";
    ASSERT_EQ(::write(peerFd, garbage.data(), garbage.size()), static_cast<ssize_t>(garbage.size()));
    const End end = handshakeEnd(*context, ourFd, 10s);
    EXPECT_THAT(end.error, StartsWith("TLS handshake failed: ")) << end.error;
    EXPECT_THAT(end.error,
                ::testing::AnyOf(HasSubstr("wrong version number"), HasSubstr("packet length too long")))
        << end.error;
    EXPECT_LT(end.took, 2s);
    ::close(peerFd);
  }
}

TEST_F(TlsTest, APeerThatSaysNothingTimesTheHandshakeOut) {
  const Context server = serverContext(job());
  const Context client = clientContext(job());
  for (const Context* context : {&server, &client}) {
    const auto [ourFd, peerFd] = socketPair();
    const End end = handshakeEnd(*context, ourFd, 300ms);
    EXPECT_EQ(end.error, "TLS handshake timed out after 300 ms");
    EXPECT_GE(end.took, 300ms);
    EXPECT_LT(end.took, 2s);
    ::close(peerFd);
  }
}

// After the handshake, raw bytes on the socket: a TLS 1.3 application-data record header announcing 64 bytes,
// then only the first `sent` of them.
void sendPartOfARecord(int fd, std::size_t sent) {
  std::string record("\x17\x03\x03\x00\x40", 5);
  record += std::string(sent, 'r');
  ASSERT_EQ(::write(fd, record.data(), record.size()), static_cast<ssize_t>(record.size()));
}

TEST_F(TlsTest, AReadWithATimeoutEndsWhenThePeerSendsHalfARecordAndStops) {
  Connection c = connect(serverContext(job()), clientContext(job()));
  ASSERT_EQ(c.server.error + c.client.error, "");
  sendPartOfARecord(c.client.stream->fd(), 32);
  std::byte buffer[64];
  const auto start = SteadyClock::now();
  try {
    c.server.stream->read(buffer, 300ms);
    ADD_FAILURE() << "a read of half a record returned";
  } catch (const TlsError& e) {
    EXPECT_EQ(std::string(e.what()), "TLS read timed out after 300 ms");
  }
  EXPECT_GE(SteadyClock::now() - start, 300ms);
  EXPECT_LT(SteadyClock::now() - start, 2s);
}

TEST_F(TlsTest, AReadWithATimeoutEndsWhileThePeerTricklesBytes) {
  Connection c = connect(serverContext(job()), clientContext(job()));
  ASSERT_EQ(c.server.error + c.client.error, "");
  std::atomic<bool> stop = false;
  std::thread trickler([&, fd = c.client.stream->fd()] {
    for (int sent = 0; sent < 5 && !stop; ++sent) {  // one byte of the record header every 100 ms
      ASSERT_EQ(::write(fd, "\x17", 1), 1);
      std::this_thread::sleep_for(100ms);
    }
  });
  std::byte buffer[64];
  const auto start = SteadyClock::now();
  EXPECT_THROW(c.server.stream->read(buffer, 250ms), TlsError);
  EXPECT_LT(SteadyClock::now() - start, 2s);
  stop = true;
  trickler.join();
}

TEST_F(TlsTest, ReadAvailableDoesNotWaitForTheRestOfARecord) {
  Connection c = connect(serverContext(job()), clientContext(job()));
  ASSERT_EQ(c.server.error + c.client.error, "");
  std::byte buffer[64];
  EXPECT_EQ(c.server.stream->readAvailable(buffer), std::nullopt);  // nothing sent yet
  sendPartOfARecord(c.client.stream->fd(), 32);
  EXPECT_EQ(c.server.stream->readAvailable(buffer), std::nullopt);
  const std::string rest(32, 'r');  // the record complete, but not encrypted by the client's key
  ASSERT_EQ(::write(c.client.stream->fd(), rest.data(), rest.size()), 32);
  EXPECT_THROW(c.server.stream->readAvailable(buffer), TlsError);
}

TEST_F(TlsTest, APeerThatHangsUpDuringTheHandshakeFailsIt) {
  const Context server = serverContext(job());
  const auto [ourFd, peerFd] = socketPair();
  ::close(peerFd);
  const End end = handshakeEnd(server, ourFd, 5s);
  EXPECT_THAT(end.error, StartsWith("TLS handshake failed: "));
  EXPECT_LT(end.took, 2s);
}

TEST_F(TlsTest, AConnectionCutWithoutCloseNotifyIsAnErrorNotAnEnd) {
  const Context server = serverContext(job());
  const Context client = clientContext(job());
  Connection c = connect(server, client);
  ASSERT_EQ(c.server.error + c.client.error, "");
  c.client.stream->writeAll(bytes("partial"));
  ::shutdown(c.client.stream->fd(), SHUT_RDWR);  // as if the client died: no close_notify
  EXPECT_EQ(readExactly(*c.server.stream, 7), "partial");
  EXPECT_EQ(
      readError(*c.server.stream),
      "TLS read failed: the connection ended without close_notify (truncated): unexpected eof while reading");
}

TEST_F(TlsTest, WritingToAPeerThatIsGoneThrows) {
  Connection c = connect(serverContext(job()), clientContext(job()));
  ASSERT_EQ(c.server.error + c.client.error, "");
  c.server.stream.reset();
  const std::string chunk(64 * 1024, 'x');
  try {
    for (int i = 0; i < 100; ++i) c.client.stream->writeAll(bytes(chunk));
    FAIL() << "no TlsError";
  } catch (const TlsError& e) {
    EXPECT_THAT(e.what(), StartsWith("TLS write failed: "));
    EXPECT_THAT(e.what(), HasSubstr("Broken pipe"));
  }
}

TEST_F(TlsTest, AStreamMayOutliveItsContext) {
  std::optional<Context> server(serverContext(job()));
  std::optional<Context> client(clientContext(job()));
  Connection c = connect(*server, *client);
  server.reset();
  client.reset();
  ASSERT_EQ(c.server.error + c.client.error, "");
  c.client.stream->writeAll(bytes("still here"));
  EXPECT_EQ(readExactly(*c.server.stream, 10), "still here");
}

// --- Building a Context from bad material.

std::string contextError(const std::string& ca, const std::string& cert, const std::string& key,
                         const std::string& expected = kJob) {
  try {
    Context::fromPem(Role::kServer, ca, cert, key, expected);
    return "no error";
  } catch (const TlsError& e) {
    return e.what();
  }
}

TEST_F(TlsTest, EmptyPemIsNamed) {
  const pki::JobCredentials& j = job();
  EXPECT_EQ(contextError("", j.certPem, j.keyPem), "CA certificate is empty");
  EXPECT_EQ(contextError(j.caCertPem, "", j.keyPem), "certificate is empty");
  EXPECT_EQ(contextError(j.caCertPem, j.certPem, ""), "private key is empty");
  EXPECT_EQ(contextError(j.caCertPem, j.certPem, j.keyPem, ""), "the expected peer identity is empty");
}

TEST_F(TlsTest, GarbageAndTruncatedPemAreNamedWithOpenSslsReason) {
  const pki::JobCredentials& j = job();
  EXPECT_EQ(contextError("garbage", j.certPem, j.keyPem), "cannot read CA certificate: no start line");
  EXPECT_EQ(contextError(j.caCertPem, "garbage", j.keyPem), "cannot read certificate: no start line");
  EXPECT_THAT(contextError(j.caCertPem, j.certPem, "garbage"), StartsWith("cannot read private key: "));
  const std::string truncatedCert = j.certPem.substr(0, j.certPem.size() / 2);
  EXPECT_THAT(contextError(j.caCertPem, truncatedCert, j.keyPem), StartsWith("cannot read certificate: "));
  EXPECT_THAT(contextError(j.caCertPem.substr(0, 100), j.certPem, j.keyPem),
              StartsWith("cannot read CA certificate: "));
  EXPECT_THAT(contextError(j.caCertPem, j.certPem, j.keyPem.substr(0, j.keyPem.size() - 40)),
              StartsWith("cannot read private key: "));
  EXPECT_THAT(contextError(j.caCertPem, j.certPem, j.certPem), StartsWith("cannot read private key: "));
  // A message is never just "no OpenSSL error reported".
  EXPECT_THAT(contextError(j.caCertPem, truncatedCert, j.keyPem),
              ::testing::Not(HasSubstr("no OpenSSL error")));
}

TEST_F(TlsTest, AKeyOfAnotherJobDoesNotMatchTheCertificate) {
  const pki::JobCredentials& j = job();
  EXPECT_EQ(contextError(j.caCertPem, j.certPem, otherJob().keyPem),
            "private key does not match certificate: key values mismatch");
}

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "ipu-tls-test-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp");
    path_ = pattern;
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string write(const std::string& name, const std::string& text) const {
    const auto file = path_ / name;
    std::ofstream(file) << text;
    return file.string();
  }
  std::string path(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

TEST_F(TlsTest, ContextsFromFilesWorkAndTheirErrorsNameTheFile) {
  const TempDir dir;
  const std::string ca = dir.write("ca.crt", job().caCertPem);
  const std::string cert = dir.write("tls.crt", job().certPem);
  const std::string key = dir.write("tls.key", job().keyPem);
  const Context server = Context::fromFiles(Role::kServer, ca, cert, key, kJob);
  const Context client = Context::fromFiles(Role::kClient, ca, cert, key, kJob);
  Connection c = connect(server, client);
  EXPECT_EQ(c.server.error + c.client.error, "");

  try {
    Context::fromFiles(Role::kServer, dir.path("missing.crt"), cert, key, kJob);
    FAIL() << "no TlsError";
  } catch (const TlsError& e) {
    EXPECT_EQ(std::string(e.what()),
              "cannot open CA certificate " + dir.path("missing.crt") + ": No such file or directory");
  }
  const std::string garbage = dir.write("garbage.key", "garbage");
  try {
    Context::fromFiles(Role::kServer, ca, cert, garbage, kJob);
    FAIL() << "no TlsError";
  } catch (const TlsError& e) {
    EXPECT_THAT(e.what(), StartsWith("cannot read private key " + garbage + ": "));
  }
  const std::string otherKey = dir.write("other.key", otherJob().keyPem);
  try {
    Context::fromFiles(Role::kClient, ca, cert, otherKey, kJob);
    FAIL() << "no TlsError";
  } catch (const TlsError& e) {
    EXPECT_EQ(std::string(e.what()),
              "private key " + otherKey + " does not match certificate " + cert + ": key values mismatch");
  }
}

TEST_F(TlsTest, AStreamOwnsItsFdAndAMovedStreamKeepsWorking) {
  const Context server = serverContext(job());
  const Context client = clientContext(job());
  Connection c = connect(server, client);
  ASSERT_EQ(c.server.error + c.client.error, "");
  Stream moved = std::move(*c.client.stream);
  const int fd = moved.fd();
  EXPECT_GE(fd, 0);
  moved.writeAll(bytes("moved"));
  EXPECT_EQ(readExactly(*c.server.stream, 5), "moved");
  { Stream gone = std::move(moved); }
  EXPECT_EQ(::fcntl(fd, F_GETFD), -1);  // closed with the Stream
  EXPECT_EQ(
      readError(*c.server.stream),
      "TLS read failed: the connection ended without close_notify (truncated): unexpected eof while reading");
}

}  // namespace
}  // namespace ipu::runtime::tls
