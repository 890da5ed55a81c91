// Fuzz target: arbitrary bytes as what a client sends on one HTTP connection. The bytes go
// into one end of a socketpair (then the write side is shut), and HttpConnection::ReadRequest
// reads requests from the other end until the stream ends or is refused.
// Properties: no crash; every request read respects the limits.
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "core/api/http_connection.h"
#include "fuzz/fuzz_check.h"

namespace api = radixserve::api;

namespace {
// Input beyond this is cut: it must fit the socket buffer without a reader thread.
constexpr size_t kMaxInput = 48 * 1024;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  size = std::min(size, kMaxInput);
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) return 0;
  int buf = 256 * 1024;
  setsockopt(fds[1], SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
  setsockopt(fds[0], SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
  size_t sent = 0;
  while (sent < size) {
    ssize_t n = send(fds[1], data + sent, size - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
  shutdown(fds[1], SHUT_WR);

  api::HttpLimits limits;
  limits.max_header_bytes = 2048;
  limits.max_body_bytes = 4096;
  limits.idle_timeout_ms = 50;
  limits.read_timeout_ms = 50;
  limits.write_timeout_ms = 50;
  {
    api::HttpConnection conn(fds[0], limits);  // owns fds[0]
    api::HttpRequest request;
    for (int i = 0; i < 1000; ++i) {
      auto r = conn.ReadRequest(&request);
      if (r != api::HttpConnection::ReadResult::kRequest) break;
      FUZZ_CHECK(request.body.size() <= limits.max_body_bytes);
      (void)request.Header("content-type");
    }
  }
  close(fds[1]);
  return 0;
}
