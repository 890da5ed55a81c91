// A raw TCP client for HTTP-layer tests: bytes exactly as written (malformed requests, pipelining,
// hang-ups) that an HTTP client library would refuse to send. Plain functions; thread-safe.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <string>

namespace radixserve::api::testing {

// A socket connected to 127.0.0.1:port whose reads give up after timeout_s; -1 on failure.
inline int ConnectLoopback(int port, int timeout_s = 10) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  timeval tv{timeout_s, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  return fd;
}

// Sends every byte it can (the server may answer and close before reading them all), half-closes
// the connection when asked (the server then sees the end of input), and reads until the server
// closes or timeout_s passes: the whole response text ("" when it cannot connect).
inline std::string RawExchange(int port, const std::string& bytes, bool half_close, int timeout_s = 10) {
  int fd = ConnectLoopback(port, timeout_s);
  if (fd < 0) return "";
  size_t sent = 0;
  while (sent < bytes.size()) {
    ssize_t n = send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
  if (half_close) shutdown(fd, SHUT_WR);
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = recv(fd, buf, sizeof(buf), 0)) > 0) out.append(buf, static_cast<size_t>(n));
  close(fd);
  return out;
}

}  // namespace radixserve::api::testing
