// HttpServer: the OpenAI-compatible HTTP front end of the api node.
//
// Routes: POST /v1/completions, /v1/chat/completions, /generate, /tokenize,
// /detokenize, /flush_cache; GET /v1/models, /health, /get_server_info,
// /metrics. It validates requests, renders chat templates, tokenizes and
// checks the prompt length through the ApiBackend, fans n > 1 out into
// sub-requests "<rid>-<i>", streams SSE as outputs arrive, and aborts a
// request as soon as its client disconnects. An API key, when set, is
// required as "Authorization: Bearer <key>" everywhere but /health.
// Start/Stop from one thread; requests are served concurrently (one thread
// per connection, see HttpListener).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/api/api_error.h"
#include "core/api/backend.h"
#include "core/api/chat_prompt.h"
#include "core/api/chat_template.h"
#include "core/api/generate_request.h"
#include "core/api/http_listener.h"
#include "core/util/status.h"

namespace radixserve::api {

struct HttpServerOptions {
  std::string host = "127.0.0.1";  // loopback unless the operator opens it up
  int port = 30000;                 // 0: an ephemeral port (tests)
  std::string api_key;              // empty: no authentication
  // Required (instead of api_key) for control endpoints: /admin/*, /flush_cache. Empty: api_key rules.
  std::string admin_key;
  // API keys of tenants, each with its cache salt: a request sent with one is served in that
  // salt's prefix-cache namespace whatever its body says (tenants never share cached prefixes).
  // They are accepted besides api_key.
  std::map<std::string, std::string> tenant_keys;
  // Requests in flight per priority class (n > 1 counts n) past which that class gets 429 with
  // Retry-After while the others are served; 0: no limit.
  std::array<int64_t, kNumPriorityClasses> class_max_in_flight{};
  std::string served_model_name = "default";
  ApiLimits limits;
  int max_connections = 4096;
  int keep_alive_timeout_ms = 5000;
  int write_timeout_ms = 30000;
  // The GGUF's tokenizer.chat_template text (Jinja); chat_template_name overrides it with a
  // family name ("llama3", ...) or the path of a Jinja file. chat_template_options: the
  // vocabulary's BOS/EOS text, for either.
  std::string chat_template_text;
  std::string chat_template_name;
  ChatTemplate::Options chat_template_options;
};

// tenant_keys from "key=salt,key=salt". Errors name an entry by position, never its text: keys and
// salts are secrets and stay out of logs.
Result<std::map<std::string, std::string>> ParseTenantKeys(std::string_view text);

class HttpServer {
 public:
  // backend must outlive the server.
  HttpServer(HttpServerOptions options, ApiBackend* backend);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  Status Start();
  // Closes every connection (their in-flight requests are aborted) and returns when all are gone.
  void Stop();
  // Requests whose answer is still being written (a stream counts until its last byte went out):
  // a drain waits for these, not only for the backend's outputs, before it calls Stop().
  int active_requests() const { return active_requests_.load(std::memory_order_acquire); }
  int port() const { return listener_.port(); }
  // Requests refused at each class's class_max_in_flight so far, and those in flight now.
  std::array<uint64_t, kNumPriorityClasses> class_rejected() const;
  int64_t class_in_flight(PriorityClass c) const {
    return class_in_flight_[static_cast<size_t>(c)].load(std::memory_order_acquire);
  }
  // How chat prompts are rendered; nullptr when the model's template cannot be used (chat
  // requests then fail with why).
  const ChatPromptTemplate* chat_prompt() const { return chat_prompt_ ? &*chat_prompt_ : nullptr; }

  // Renders/tokenizes req's input into req->input_ids and checks it against the context length.
  bool PrepareInput(GenerateRequest* req, ApiError* error);

 private:
  Result<std::string> RenderChat(const std::vector<ChatMessage>& messages, const nlohmann::ordered_json& tools,
                                 bool add_generation_prompt, const nlohmann::ordered_json& kwargs) const;
  void HandleApplyTemplate(const HttpRequest& request, HttpConnection& conn);
  void Handle(const HttpRequest& request, HttpConnection& conn);
  void HandleGenerate(const HttpRequest& request, HttpConnection& conn, Endpoint endpoint);
  void HandleTokenize(const HttpRequest& request, HttpConnection& conn);
  void HandleDetokenize(const HttpRequest& request, HttpConnection& conn);
  void HandleModels(HttpConnection& conn);
  bool Authorized(const HttpRequest& request) const;
  bool AuthorizedAs(const HttpRequest& request, const std::string& key) const;
  // The cache salt of the tenant key the request was sent with; nullptr when none.
  const std::string* TenantSalt(const HttpRequest& request) const;
  // Priority (X-Priority header when the body has none, else the default class), its class, and the
  // tenant's salt.
  bool ApplySchedulingContext(const HttpRequest& http, GenerateRequest* req, ApiError* error) const;
  std::array<std::atomic<int64_t>, kNumPriorityClasses> class_in_flight_{};
  std::array<std::atomic<uint64_t>, kNumPriorityClasses> class_rejected_{};

  HttpServerOptions options_;
  ApiBackend* backend_;
  std::optional<ChatPromptTemplate> chat_prompt_;  // empty when the model's template cannot be used
  std::string chat_template_error_;               // why (what chat requests are told)
  HttpListener listener_;
  int64_t start_time_ = 0;
  std::atomic<int> active_requests_{0};
};

}  // namespace radixserve::api
