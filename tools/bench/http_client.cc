#include "tools/bench/http_client.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace radixserve::bench {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kMaxHeadBytes = 64 * 1024;
constexpr size_t kMaxErrorBody = 64 * 1024;

class Socket {
 public:
  Socket() = default;
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  int fd() const { return fd_; }
  void reset(int fd) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

int RemainingMs(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left < 0 ? 0 : static_cast<int>(left);
}

// Waits for `events` on fd until the deadline: 1 ready, 0 timed out, -1 error.
int WaitFor(int fd, short events, Clock::time_point deadline) {
  while (true) {
    pollfd p{fd, events, 0};
    int r = ::poll(&p, 1, RemainingMs(deadline));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return -1;
    return r == 0 ? 0 : 1;
  }
}

HttpCallResult Fail(FailureKind kind, std::string error) {
  HttpCallResult r;
  r.failure = kind;
  r.error = std::move(error);
  return r;
}

// Connects to host:port before the deadline, trying every address.
HttpCallResult Connect(const HttpEndpoint& ep, Clock::time_point deadline, Socket* sock) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* addrs = nullptr;
  const std::string port = std::to_string(ep.port);
  int rc = ::getaddrinfo(ep.host.c_str(), port.c_str(), &hints, &addrs);
  if (rc != 0) return Fail(FailureKind::kConnection, "cannot resolve " + ep.host + ": " + ::gai_strerror(rc));
  std::string last_error = "no address";
  for (addrinfo* a = addrs; a != nullptr; a = a->ai_next) {
    int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      last_error = std::strerror(errno);
      continue;
    }
    sock->reset(fd);
    if (::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      if (errno != EINPROGRESS) {
        last_error = std::strerror(errno);
        continue;
      }
      int w = WaitFor(fd, POLLOUT, deadline);
      if (w == 0) {
        ::freeaddrinfo(addrs);
        return Fail(FailureKind::kTimeout, "timed out connecting to " + ep.host + ":" + port);
      }
      int err = 0;
      socklen_t len = sizeof(err);
      ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
      if (w < 0 || err != 0) {
        last_error = std::strerror(w < 0 ? errno : err);
        continue;
      }
    }
    int one = 1;  // small request bodies go out at once
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    ::freeaddrinfo(addrs);
    return {};
  }
  ::freeaddrinfo(addrs);
  sock->reset(-1);
  return Fail(FailureKind::kConnection, "cannot connect to " + ep.host + ":" + port + ": " + last_error);
}

HttpCallResult SendAll(int fd, std::string_view data, Clock::time_point deadline) {
  while (!data.empty()) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      int w = WaitFor(fd, POLLOUT, deadline);
      if (w == 0) return Fail(FailureKind::kTimeout, "timed out sending the request");
      if (w < 0) return Fail(FailureKind::kConnection, std::string("send: ") + std::strerror(errno));
      continue;
    }
    return Fail(FailureKind::kConnection, std::string("send: ") + std::strerror(errno));
  }
  return {};
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

struct ResponseHead {
  int status = 0;
  bool chunked = false;
  bool has_length = false;
  uint64_t content_length = 0;
};

bool ParseHead(std::string_view head, ResponseHead* out, std::string* error) {
  size_t eol = head.find("\r\n");
  std::string_view status_line = head.substr(0, eol);
  if (status_line.substr(0, 5) != "HTTP/" || status_line.size() < 12 || status_line[8] != ' ') {
    *error = "malformed status line \"" + std::string(status_line.substr(0, 80)) + "\"";
    return false;
  }
  out->status = 0;
  for (size_t i = 9; i < 12; ++i) {
    if (status_line[i] < '0' || status_line[i] > '9') {
      *error = "malformed status code in \"" + std::string(status_line.substr(0, 80)) + "\"";
      return false;
    }
    out->status = out->status * 10 + (status_line[i] - '0');
  }
  size_t pos = eol == std::string_view::npos ? head.size() : eol + 2;
  while (pos < head.size()) {
    size_t end = head.find("\r\n", pos);
    if (end == std::string_view::npos) end = head.size();
    std::string_view line = head.substr(pos, end - pos);
    pos = end + 2;
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string name = Lower(Trim(line.substr(0, colon)));
    std::string value = Lower(Trim(line.substr(colon + 1)));
    if (name == "transfer-encoding" && value.find("chunked") != std::string::npos) out->chunked = true;
    if (name == "content-length") {
      out->has_length = true;
      out->content_length = std::strtoull(value.c_str(), nullptr, 10);
    }
  }
  return true;
}

}  // namespace

const char* FailureKindName(FailureKind kind) {
  switch (kind) {
    case FailureKind::kNone: return "none";
    case FailureKind::kHttpStatus: return "http_status";
    case FailureKind::kConnection: return "connection";
    case FailureKind::kTimeout: return "timeout";
    case FailureKind::kProtocol: return "protocol";
    case FailureKind::kServerAbort: return "server_abort";
  }
  return "unknown";
}

Result<HttpEndpoint> ParseBaseUrl(std::string_view url) {
  std::string_view rest = url;
  if (rest.substr(0, 8) == "https://") return Status::Unsupported("https is not supported: " + std::string(url));
  if (rest.substr(0, 7) == "http://") rest.remove_prefix(7);
  HttpEndpoint ep;
  size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  if (slash != std::string_view::npos) {
    ep.base_path = std::string(rest.substr(slash));
    while (!ep.base_path.empty() && ep.base_path.back() == '/') ep.base_path.pop_back();
  }
  if (authority.empty()) return Status::InvalidArgument("no host in URL \"" + std::string(url) + "\"");
  size_t colon = authority.rfind(':');
  if (authority.front() == '[') {  // [v6]:port
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return Status::InvalidArgument("bad IPv6 host in \"" + std::string(url) + "\"");
    ep.host = std::string(authority.substr(1, close - 1));
    colon = authority.find(':', close);
  } else {
    ep.host = std::string(authority.substr(0, colon));
  }
  if (colon != std::string_view::npos) {
    std::string port(authority.substr(colon + 1));
    char* end = nullptr;
    long p = std::strtol(port.c_str(), &end, 10);
    if (port.empty() || *end != '\0' || p <= 0 || p > 65535)
      return Status::InvalidArgument("bad port in URL \"" + std::string(url) + "\"");
    ep.port = static_cast<int>(p);
  }
  return ep;
}

bool ChunkedDecoder::Feed(std::string_view bytes, const std::function<void(std::string_view)>& on_payload) {
  while (!bytes.empty() && state_ != State::kDone) {
    switch (state_) {
      case State::kSize:
      case State::kDataEnd:
      case State::kTrailer: {
        size_t nl = bytes.find('\n');
        if (nl == std::string_view::npos) {
          line_.append(bytes);
          if (line_.size() > 4096) return error_ = "chunk framing line too long", false;
          return true;
        }
        line_.append(bytes.substr(0, nl));
        bytes.remove_prefix(nl + 1);
        if (!line_.empty() && line_.back() == '\r') line_.pop_back();
        std::string line = std::move(line_);
        line_.clear();
        if (state_ == State::kDataEnd) {
          if (!line.empty()) return error_ = "chunk data not followed by CRLF", false;
          state_ = State::kSize;
        } else if (state_ == State::kTrailer) {
          if (line.empty()) state_ = State::kDone;
        } else {
          std::string size = line.substr(0, line.find(';'));
          while (!size.empty() && (size.back() == ' ' || size.back() == '\t')) size.pop_back();
          if (size.empty() || size.size() > 15) return error_ = "bad chunk size line \"" + line + "\"", false;
          uint64_t n = 0;
          for (char c : size) {
            int d = std::isdigit(static_cast<unsigned char>(c)) ? c - '0'
                    : (c >= 'a' && c <= 'f')                   ? c - 'a' + 10
                    : (c >= 'A' && c <= 'F')                   ? c - 'A' + 10
                                                               : -1;
            if (d < 0) return error_ = "bad chunk size line \"" + line + "\"", false;
            n = n * 16 + static_cast<uint64_t>(d);
          }
          remaining_ = n;
          state_ = n == 0 ? State::kTrailer : State::kData;
        }
        break;
      }
      case State::kData: {
        size_t take = static_cast<size_t>(std::min<uint64_t>(remaining_, bytes.size()));
        on_payload(bytes.substr(0, take));
        bytes.remove_prefix(take);
        remaining_ -= take;
        if (remaining_ == 0) state_ = State::kDataEnd;
        break;
      }
      case State::kDone: break;
    }
  }
  return true;
}

HttpCallResult HttpCall(const HttpEndpoint& endpoint, const HttpCallOptions& options, const BodyCallback& on_body) {
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(options.timeout_ms);
  Socket sock;
  HttpCallResult r = Connect(endpoint, deadline, &sock);
  if (!r.ok()) return r;

  std::string request;
  request.reserve(256 + options.body.size());
  request += options.method + " " + endpoint.base_path + options.path + " HTTP/1.1\r\n";
  request += "Host: " + endpoint.host + ":" + std::to_string(endpoint.port) + "\r\n";
  request += "Connection: close\r\nAccept: */*\r\nUser-Agent: radixserve-bench\r\n";
  if (!options.body.empty() || options.method == "POST") {
    request += "Content-Type: " + options.content_type + "\r\n";
    request += "Content-Length: " + std::to_string(options.body.size()) + "\r\n";
  }
  for (const auto& [k, v] : options.headers) request += k + ": " + v + "\r\n";
  request += "\r\n";
  request += options.body;
  r = SendAll(sock.fd(), request, deadline);
  if (!r.ok()) return r;

  std::string head;
  ResponseHead parsed;
  bool have_head = false;
  ChunkedDecoder chunked;
  uint64_t body_bytes = 0;
  bool stop = false;
  HttpCallResult result;
  auto deliver = [&](std::string_view piece) {
    if (piece.empty() || stop) return;
    const bool success = parsed.status >= 200 && parsed.status < 300;
    if (success && on_body) {
      if (!on_body(piece)) stop = true;
    } else if (result.body.size() < kMaxErrorBody || success) {
      result.body.append(piece);
    }
  };
  auto body_complete = [&] {
    if (parsed.chunked) return chunked.done();
    if (parsed.has_length) return body_bytes >= parsed.content_length;
    return false;
  };
  auto finish = [&]() -> HttpCallResult {
    if (parsed.status < 200 || parsed.status >= 300) {
      result.failure = FailureKind::kHttpStatus;
      result.error = "HTTP " + std::to_string(parsed.status) + ": " + result.body.substr(0, 300);
    }
    result.status = parsed.status;
    return result;
  };
  // Consumes body bytes; false on malformed framing.
  auto consume = [&](std::string_view bytes) {
    if (parsed.chunked) return chunked.Feed(bytes, deliver);
    if (parsed.has_length) bytes = bytes.substr(0, static_cast<size_t>(parsed.content_length - body_bytes));
    body_bytes += bytes.size();
    deliver(bytes);
    return true;
  };

  char buf[64 * 1024];
  while (!stop) {
    if (have_head && body_complete()) return finish();
    ssize_t n = ::recv(sock.fd(), buf, sizeof(buf), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      int w = WaitFor(sock.fd(), POLLIN, deadline);
      if (w == 0) return Fail(FailureKind::kTimeout, "timed out after " + std::to_string(options.timeout_ms) + " ms");
      if (w < 0) return Fail(FailureKind::kConnection, std::string("poll: ") + std::strerror(errno));
      continue;
    }
    if (n < 0) return Fail(FailureKind::kConnection, std::string("recv: ") + std::strerror(errno));
    if (n == 0) {  // the server closed the connection
      if (!have_head) return Fail(FailureKind::kConnection, "the server closed the connection without a response");
      if (!parsed.chunked && !parsed.has_length) return finish();
      return Fail(FailureKind::kConnection, "the server closed the connection before the response ended");
    }
    std::string_view data(buf, static_cast<size_t>(n));
    if (!have_head) {
      head.append(data);
      // Parse every complete head in the buffer: 1xx interim responses are skipped.
      while (!have_head) {
        size_t end = head.find("\r\n\r\n");
        if (end == std::string::npos) break;
        std::string error;
        parsed = ResponseHead{};
        if (!ParseHead(std::string_view(head).substr(0, end), &parsed, &error))
          return Fail(FailureKind::kProtocol, error);
        head.erase(0, end + 4);
        if (parsed.status >= 200 || parsed.status < 100) have_head = true;
      }
      if (!have_head) {
        if (head.size() > kMaxHeadBytes) return Fail(FailureKind::kProtocol, "response headers too large");
        continue;
      }
      if (!consume(head)) return Fail(FailureKind::kProtocol, chunked.error());
      continue;
    }
    if (!consume(data)) return Fail(FailureKind::kProtocol, chunked.error());
  }
  return finish();
}

}  // namespace radixserve::bench
