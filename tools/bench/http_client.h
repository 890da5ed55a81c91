// A small blocking HTTP/1.1 client for the load generator.
//
// One call opens one connection (Connection: close), sends one request and
// hands the response body to a callback piece by piece as bytes arrive from
// the socket, so streamed (SSE) responses are timed when they arrive rather
// than when the response ends. Failures are classified (connection, timeout,
// HTTP status, protocol) because the bench reports them by kind.
// Thread-safe: calls share no state; run one per thread.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/util/status.h"

namespace radixserve::bench {

enum class FailureKind { kNone, kHttpStatus, kConnection, kTimeout, kProtocol, kServerAbort };

// "http_status", "connection", "timeout", "protocol", "server_abort" ("none" for kNone).
const char* FailureKindName(FailureKind kind);

struct HttpEndpoint {
  std::string host;
  int port = 80;
  std::string base_path;  // prefix of every request path ("" or "/something"), no trailing slash
};

// Accepts "http://host:port[/prefix]" or "host:port"; https is refused.
Result<HttpEndpoint> ParseBaseUrl(std::string_view url);

struct HttpCallOptions {
  std::string method = "GET";
  std::string path = "/";
  std::string body;
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;
  int timeout_ms = 600000;  // the whole call: connect, send, receive
};

struct HttpCallResult {
  FailureKind failure = FailureKind::kNone;
  int status = 0;
  std::string error;  // what went wrong, for failures
  std::string body;   // the body when no callback consumed it (non-2xx bodies are always kept here)
  bool ok() const { return failure == FailureKind::kNone; }
};

// Called with each piece of a 2xx response body as it arrives; return false to stop reading.
using BodyCallback = std::function<bool(std::string_view piece)>;

// Makes one request. With on_body, a 2xx body is streamed to it instead of collected. A non-2xx status
// is a kHttpStatus failure whose error is the start of the body.
HttpCallResult HttpCall(const HttpEndpoint& endpoint, const HttpCallOptions& options, const BodyCallback& on_body = {});

// Decodes a chunked transfer encoding incrementally; pieces of payload go to the callback.
// Not thread-safe; one per response.
class ChunkedDecoder {
 public:
  // Returns false on malformed framing (error() says why).
  bool Feed(std::string_view bytes, const std::function<void(std::string_view)>& on_payload);
  bool done() const { return state_ == State::kDone; }
  const std::string& error() const { return error_; }

 private:
  enum class State { kSize, kData, kDataEnd, kTrailer, kDone };
  State state_ = State::kSize;
  std::string line_;
  uint64_t remaining_ = 0;
  std::string error_;
};

}  // namespace radixserve::bench
