#include "core/api/http_connection.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>

namespace radixserve::api {
namespace {

using Clock = std::chrono::steady_clock;

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

std::string_view TrimSpaces(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

int RemainingMs(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left > 0 ? static_cast<int>(left) : 0;
}

}  // namespace

const char* HttpStatusText(int status) {
  switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 411: return "Length Required";
    case 413: return "Payload Too Large";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    default: return "Unknown";
  }
}

const std::string& HttpRequest::Header(const std::string& name) const {
  static const std::string kEmpty;
  auto it = headers.find(name);
  return it == headers.end() ? kEmpty : it->second;
}

HttpConnection::HttpConnection(int fd, HttpLimits limits) : fd_(fd), limits_(limits) {
  // A client that stops reading can block a write at most this long; then the stream is dropped.
  timeval tv{limits_.write_timeout_ms / 1000, (limits_.write_timeout_ms % 1000) * 1000};
  setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

HttpConnection::~HttpConnection() { close(fd_); }

bool HttpConnection::Fill(int timeout_ms) {
  pollfd p{fd_, POLLIN, 0};
  int r;
  do {
    r = poll(&p, 1, timeout_ms);
  } while (r < 0 && errno == EINTR);
  if (r <= 0) return false;
  char chunk[16384];
  ssize_t n;
  do {
    n = recv(fd_, chunk, sizeof(chunk), 0);
  } while (n < 0 && errno == EINTR);
  if (n <= 0) return false;
  buffer_.append(chunk, static_cast<size_t>(n));
  return true;
}

HttpConnection::ReadResult HttpConnection::ReadRequest(HttpRequest* request) {
  *request = HttpRequest{};
  auto fail = [&](int status, const char* message) {
    std::string body = std::string("{\"error\": {\"message\": \"") + message +
                       "\", \"type\": \"invalid_request_error\", \"param\": null, \"code\": " +
                       std::to_string(status) + "}}";
    close_after_response_ = true;
    SendResponse(status, "application/json", body);
    return ReadResult::kError;
  };

  // Headers: the first byte may take the keep-alive idle time, the rest must follow promptly.
  Clock::time_point deadline;
  size_t header_end;
  while ((header_end = buffer_.find("\r\n\r\n")) == std::string::npos) {
    if (buffer_.size() > limits_.max_header_bytes) return fail(431, "request headers are too large");
    int timeout = buffer_.empty() ? limits_.idle_timeout_ms : RemainingMs(deadline);
    if (!Fill(timeout)) {
      if (buffer_.empty()) return ReadResult::kClosed;
      return fail(408, "timed out reading the request");
    }
    if (deadline == Clock::time_point()) deadline = Clock::now() + std::chrono::milliseconds(limits_.read_timeout_ms);
  }
  if (deadline == Clock::time_point()) deadline = Clock::now() + std::chrono::milliseconds(limits_.read_timeout_ms);
  if (header_end > limits_.max_header_bytes) return fail(431, "request headers are too large");

  std::string_view head(buffer_.data(), header_end);
  size_t line_end = head.find("\r\n");
  std::string_view line = head.substr(0, line_end);
  size_t sp1 = line.find(' ');
  size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos) return fail(400, "malformed request line");
  request->method = std::string(line.substr(0, sp1));
  std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  std::string_view version = line.substr(sp2 + 1);
  if (version != "HTTP/1.1" && version != "HTTP/1.0") return fail(400, "unsupported HTTP version");
  size_t q = target.find('?');
  request->path = std::string(target.substr(0, q));
  if (q != std::string_view::npos) request->query = std::string(target.substr(q + 1));

  size_t pos = line_end == std::string_view::npos ? head.size() : line_end + 2;
  while (pos < head.size()) {
    size_t end = head.find("\r\n", pos);
    if (end == std::string_view::npos) end = head.size();
    std::string_view h = head.substr(pos, end - pos);
    size_t colon = h.find(':');
    if (colon == std::string_view::npos || colon == 0) return fail(400, "malformed header line");
    request->headers[Lower(h.substr(0, colon))] = std::string(TrimSpaces(h.substr(colon + 1)));
    pos = end + 2;
  }

  std::string connection = Lower(request->Header("connection"));
  request->keep_alive = version == "HTTP/1.1" ? connection != "close" : connection == "keep-alive";
  if (!request->keep_alive) close_after_response_ = true;

  if (!request->Header("transfer-encoding").empty()) return fail(501, "chunked request bodies are not supported");
  size_t content_length = 0;
  const std::string& cl = request->Header("content-length");
  if (!cl.empty()) {
    if (cl.size() > 12 || cl.find_first_not_of("0123456789") != std::string::npos)
      return fail(400, "invalid Content-Length");
    content_length = std::stoull(cl);
  }
  if (content_length > limits_.max_body_bytes) return fail(413, "request body is larger than the server's limit");

  buffer_.erase(0, header_end + 4);
  if (content_length > buffer_.size() && Lower(request->Header("expect")) == "100-continue") {
    if (!WriteAll("HTTP/1.1 100 Continue\r\n\r\n")) return ReadResult::kClosed;
  }
  while (buffer_.size() < content_length) {
    if (!Fill(RemainingMs(deadline))) return fail(408, "timed out reading the request body");
  }
  request->body = buffer_.substr(0, content_length);
  buffer_.erase(0, content_length);
  return ReadResult::kRequest;
}

bool HttpConnection::WriteAll(std::string_view data) { return WriteAll2(data, {}); }

bool HttpConnection::WriteAll2(std::string_view a, std::string_view b) {
  iovec iov[2] = {{const_cast<char*>(a.data()), a.size()}, {const_cast<char*>(b.data()), b.size()}};
  int first = 0;
  while (first < 2) {
    msghdr msg{};
    msg.msg_iov = iov + first;
    msg.msg_iovlen = 2 - first;
    ssize_t n = sendmsg(fd_, &msg, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      close_after_response_ = true;
      return false;  // EPIPE/ECONNRESET: the client left; EAGAIN: it stopped reading past the write timeout
    }
    size_t left = static_cast<size_t>(n);
    while (first < 2 && left >= iov[first].iov_len) {
      left -= iov[first].iov_len;
      ++first;
    }
    if (first < 2) {
      iov[first].iov_base = static_cast<char*>(iov[first].iov_base) + left;
      iov[first].iov_len -= left;
    }
  }
  return true;
}

bool HttpConnection::SendResponse(int status, std::string_view content_type, std::string_view body,
                                  std::string_view extra_headers) {
  std::string head = "HTTP/1.1 " + std::to_string(status) + " " + HttpStatusText(status) +
                     "\r\nContent-Type: " + std::string(content_type) +
                     "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" + std::string(extra_headers) +
                     (close_after_response_ ? "Connection: close\r\n\r\n" : "Connection: keep-alive\r\n\r\n");
  return WriteAll2(head, body);
}

bool HttpConnection::BeginChunked(int status, std::string_view content_type) {
  std::string head = "HTTP/1.1 " + std::to_string(status) + " " + HttpStatusText(status) +
                     "\r\nContent-Type: " + std::string(content_type) +
                     "\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked" +
                     (close_after_response_ ? "\r\nConnection: close\r\n\r\n" : "\r\nConnection: keep-alive\r\n\r\n");
  return WriteAll(head);
}

bool HttpConnection::SendChunk(std::string_view data) {
  if (data.empty()) return true;  // an empty chunk would end the body
  char size_line[24];
  int len = std::snprintf(size_line, sizeof(size_line), "%zx\r\n", data.size());
  // One buffer per chunk: SSE events are small, and one send keeps the event in one TCP segment.
  std::string out;
  out.reserve(static_cast<size_t>(len) + data.size() + 2);
  out.append(size_line, static_cast<size_t>(len));
  out.append(data);
  out.append("\r\n");
  return WriteAll(out);
}

bool HttpConnection::EndChunked() { return WriteAll("0\r\n\r\n"); }

HttpConnection::WaitResult HttpConnection::WaitForWakeOrClose(int wake_fd, int timeout_ms) {
  // POLLRDHUP: the peer closed or shut down its side; POLLHUP/POLLERR are always reported.
  // POLLIN on the socket is not asked for, so a pipelined next request does not look like a close.
  pollfd p[2] = {{fd_, POLLRDHUP, 0}, {wake_fd, POLLIN, 0}};
  int r;
  do {
    r = poll(p, 2, timeout_ms);
  } while (r < 0 && errno == EINTR);
  if (r < 0) return WaitResult::kClosed;
  if (p[0].revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) return WaitResult::kClosed;
  if (p[1].revents & POLLIN) return WaitResult::kWoken;
  return WaitResult::kTimeout;
}

}  // namespace radixserve::api
