// HttpConnection: HTTP/1.1 over one accepted socket (reading requests,
// writing plain and chunked responses, waiting for a wake-up or a client
// disconnect).
//
// Why our own and not cpp-httplib: Debian's cpp-httplib 0.11.4 gives a
// handler no way to see its socket, and its is_writable() only checks that
// a write would not block, so a client that closes while the server waits
// for the model goes unnoticed until a write fails; its listen backlog is
// also fixed at 5. This layer polls the socket for POLLRDHUP together with
// the request's wake descriptor, so disconnects are seen at once, streaming
// or not. Used by one thread at a time (the connection's thread).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace radixserve::api {

struct HttpRequest {
  std::string method;
  std::string path;   // without the query string
  std::string query;  // after '?', undecoded
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
  bool keep_alive = true;

  // The header's value, or "" when absent; name must be lower-case.
  const std::string& Header(const std::string& name) const;
};

struct HttpLimits {
  size_t max_header_bytes = 64 * 1024;
  size_t max_body_bytes = 8u << 20;
  int idle_timeout_ms = 5000;    // keep-alive: how long to wait for the next request
  int read_timeout_ms = 30000;   // how long a started request may take to arrive
  int write_timeout_ms = 30000;  // how long one write may block on a client that does not read
};

class HttpConnection {
 public:
  enum class ReadResult { kRequest, kClosed, kError };
  enum class WaitResult { kWoken, kClosed, kTimeout };

  HttpConnection(int fd, HttpLimits limits);
  ~HttpConnection();  // closes the socket
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

  int fd() const { return fd_; }

  // Reads the next request. kClosed: the client closed or went idle; kError: a malformed or
  // oversized request, already answered with an error status (the connection should close).
  ReadResult ReadRequest(HttpRequest* request);

  // A complete response with Content-Length. False when the client is gone.
  // extra_headers: whole header lines, each ending in "\r\n" (e.g. "Retry-After: 1\r\n").
  bool SendResponse(int status, std::string_view content_type, std::string_view body,
                    std::string_view extra_headers = {});
  // A chunked response (SSE): headers now, then chunks, then the terminating chunk.
  bool BeginChunked(int status, std::string_view content_type);
  bool SendChunk(std::string_view data);
  bool EndChunked();

  // Sleeps until wake_fd is readable, the client disconnects (FIN, RST), or timeout_ms passes.
  WaitResult WaitForWakeOrClose(int wake_fd, int timeout_ms);

  // After this response the connection closes (client asked, or an error left the stream unusable).
  bool close_after_response() const { return close_after_response_; }
  void set_close_after_response() { close_after_response_ = true; }

 private:
  bool WriteAll(std::string_view data);
  bool WriteAll2(std::string_view a, std::string_view b);
  // Reads more bytes into buffer_ within timeout_ms; false on close, error or timeout.
  bool Fill(int timeout_ms);

  int fd_;
  HttpLimits limits_;
  std::string buffer_;  // bytes read but not yet consumed
  bool close_after_response_ = false;
  bool keep_alive_ = true;
};

// "OK", "Bad Request", ...
const char* HttpStatusText(int status);

}  // namespace radixserve::api
