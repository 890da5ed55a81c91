#include "core/api/http_server.h"

#include <sstream>

#include <fstream>

#include <glog/logging.h>

#include <ctime>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "core/api/chat_output.h"
#include "core/api/chat_request.h"
#include "core/api/request_parser.h"
#include "core/api/request_stream.h"
#include "core/api/response_builder.h"

namespace radixserve::api {
namespace {

using nlohmann::json;

constexpr char kJson[] = "application/json";

void SendError(HttpConnection& conn, const ApiError& error) {
  std::string extra;
  if (error.retry_after_s > 0) extra = "Retry-After: " + std::to_string(error.retry_after_s) + "\r\n";
  conn.SendResponse(error.http_status, kJson, error.ToJson(), extra);
}

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

std::string NewRequestId() {
  thread_local std::mt19937_64 rng(std::random_device{}() ^ std::hash<std::thread::id>()(std::this_thread::get_id()));
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id(32, '0');
  uint64_t a = rng(), b = rng();
  for (int i = 0; i < 16; ++i) {
    id[i] = kHex[(a >> (4 * i)) & 15];
    id[16 + i] = kHex[(b >> (4 * i)) & 15];
  }
  return id;
}

ApiError AbortError(const FinishReason& finish) {
  ApiError e;
  e.http_status = finish.status_code > 0 ? finish.status_code : 500;
  e.type = e.http_status < 500 ? "invalid_request_error" : "internal_server_error";
  e.message = finish.message.empty() ? "the request was aborted" : finish.message;
  return e;
}

// Waits for outputs of the request; false when the client disconnected or the server is stopping.
bool WaitForOutputs(HttpConnection& conn, RequestStream& stream, const HttpListener& listener,
                    std::vector<RequestStream::Item>* items) {
  items->clear();
  while (true) {
    stream.Drain(items);
    if (!items->empty()) return true;
    if (listener.stopping()) return false;
    // The timeout only bounds how late a server stop is noticed; outputs and disconnects wake us at once.
    if (conn.WaitForWakeOrClose(stream.wake_fd(), 500) == HttpConnection::WaitResult::kClosed) return false;
  }
}

}  // namespace

HttpServer::HttpServer(HttpServerOptions options, ApiBackend* backend)
    : options_(std::move(options)), backend_(backend) {}

HttpServer::~HttpServer() { Stop(); }

namespace {

// What renders chat prompts: the operator's choice (a family name or a Jinja file), else the
// GGUF's template, else ChatML (a file without a template). `named`: the operator chose it (an
// error then stops the server from starting).
Result<ChatPromptTemplate> ChoosePromptTemplate(const HttpServerOptions& o, bool* named) {
  const ChatPromptTemplate::Tokens tokens{o.chat_template_options.bos_token, o.chat_template_options.eos_token};
  *named = !o.chat_template_name.empty();
  if (*named) {
    if (ChatTemplateFamilyFromName(o.chat_template_name)) {
      RS_ASSIGN_OR_RETURN(ChatTemplate t, ChatTemplate::FromFamilyName(o.chat_template_name, o.chat_template_options));
      return ChatPromptTemplate::FromFamily(std::move(t));
    }
    std::ifstream in(o.chat_template_name, std::ios::binary);
    if (!in)
      return Status::InvalidArgument("chat_template: '" + o.chat_template_name +
                                     "' is neither a template family (chatml, llama2, llama3, mistral, gemma, "
                                     "phi3, zephyr) nor a readable Jinja file");
    std::stringstream text;
    text << in.rdbuf();
    return ChatPromptTemplate::FromJinja(text.str(), o.chat_template_name, tokens);
  }
  if (!o.chat_template_text.empty())
    return ChatPromptTemplate::FromJinja(o.chat_template_text, "the GGUF's tokenizer.chat_template", tokens);
  RS_ASSIGN_OR_RETURN(ChatTemplate t, ChatTemplate::FromTemplateText("", o.chat_template_options));  // ChatML, warned
  return ChatPromptTemplate::FromFamily(std::move(t));
}

}  // namespace

Status HttpServer::Start() {
  bool named = false;
  if (Result<ChatPromptTemplate> t = ChoosePromptTemplate(options_, &named); t.ok()) {
    chat_prompt_.emplace(std::move(t).value());
  } else if (named) {
    return t.status();
  } else {
    // Completions still work; chat requests get this error.
    chat_template_error_ = t.status().message();
    LOG(WARNING) << chat_template_error_;
  }
  start_time_ = static_cast<int64_t>(std::time(nullptr));
  HttpListener::Options lo;
  lo.host = options_.host;
  lo.port = options_.port;
  lo.max_connections = options_.max_connections;
  lo.limits.max_body_bytes = options_.limits.max_body_bytes;
  lo.limits.idle_timeout_ms = options_.keep_alive_timeout_ms;
  lo.limits.write_timeout_ms = options_.write_timeout_ms;
  RS_RETURN_IF_ERROR(listener_.Start(lo, [this](const HttpRequest& r, HttpConnection& c) { Handle(r, c); }));
  LOG(INFO) << "api server listening on " << options_.host << ":" << listener_.port() << " (chat template "
            << (chat_prompt_ ? chat_prompt_->Describe() : "unusable: " + chat_template_error_) << ")";
  return Status::Ok();
}

void HttpServer::Stop() { listener_.Stop(); }

Result<std::string> HttpServer::RenderChat(const std::vector<ChatMessage>& messages, const nlohmann::ordered_json& tools,
                                           bool add_generation_prompt, const nlohmann::ordered_json& kwargs) const {
  if (!chat_prompt_) return Status::Unsupported(chat_template_error_);
  return chat_prompt_->Render(messages, tools, add_generation_prompt, kwargs);
}

Result<std::map<std::string, std::string>> ParseTenantKeys(std::string_view text) {
  std::map<std::string, std::string> keys;
  size_t entry = 0;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    ++entry;
    const size_t eq = item.find('=');
    if (eq == 0 || eq == std::string_view::npos || eq + 1 == item.size())
      return Status::InvalidArgument("tenant_keys: entry " + std::to_string(entry) + " is not key=salt");
    if (!keys.emplace(std::string(item.substr(0, eq)), std::string(item.substr(eq + 1))).second)
      return Status::InvalidArgument("tenant_keys: entry " + std::to_string(entry) + " repeats an earlier key");
  }
  return keys;
}

std::array<uint64_t, kNumPriorityClasses> HttpServer::class_rejected() const {
  std::array<uint64_t, kNumPriorityClasses> out{};
  for (size_t i = 0; i < kNumPriorityClasses; ++i) out[i] = class_rejected_[i].load(std::memory_order_relaxed);
  return out;
}

bool HttpServer::Authorized(const HttpRequest& request) const {
  if (!options_.tenant_keys.empty() && TenantSalt(request) != nullptr) return true;
  // With tenant keys only, every request needs one of them.
  if (options_.api_key.empty() && !options_.tenant_keys.empty()) return false;
  return AuthorizedAs(request, options_.api_key);
}

const std::string* HttpServer::TenantSalt(const HttpRequest& request) const {
  const std::string* salt = nullptr;
  for (const auto& [key, s] : options_.tenant_keys)  // every key compared: the time does not tell which
    if (AuthorizedAs(request, key)) salt = &s;
  return salt;
}

bool HttpServer::ApplySchedulingContext(const HttpRequest& http, GenerateRequest* req, ApiError* error) const {
  if (!req->spec.priority) {
    const std::string& header = http.Header("x-priority");
    if (!header.empty()) {
      Result<int64_t> p = ParsePriority(header);
      if (!p.ok()) {
        *error = ApiError::BadRequest("X-Priority", "X-Priority: " + p.status().message());
        return false;
      }
      req->spec.priority = *p;
    }
  }
  if (!req->spec.priority) req->spec.priority = InfoOf(PriorityClass::kDefault).priority;
  req->priority_class = ClassOfPriority(*req->spec.priority);
  if (const std::string* salt = TenantSalt(http)) req->spec.cache_salt = *salt;
  return true;
}

bool HttpServer::AuthorizedAs(const HttpRequest& request, const std::string& key) const {
  if (key.empty()) return true;
  const std::string& auth = request.Header("authorization");
  const std::string expected = "Bearer " + key;
  if (auth.size() != expected.size()) return false;
  unsigned diff = 0;  // constant time: the comparison does not reveal how much of the key matched
  for (size_t i = 0; i < auth.size(); ++i) diff |= static_cast<unsigned char>(auth[i] ^ expected[i]);
  return diff == 0;
}

void HttpServer::Handle(const HttpRequest& request, HttpConnection& conn) {
  struct ActiveRequest {  // counted from the first byte read to the last byte written
    std::atomic<int>& n;
    explicit ActiveRequest(std::atomic<int>& c) : n(c) { n.fetch_add(1, std::memory_order_acq_rel); }
    ~ActiveRequest() { n.fetch_sub(1, std::memory_order_acq_rel); }
  } active(active_requests_);
  const std::string& path = request.path;
  const bool get = request.method == "GET", post = request.method == "POST";
  const bool admin_route = path.rfind("/admin/", 0) == 0 || path == "/flush_cache";
  if (admin_route && !options_.admin_key.empty()) {
    if (!AuthorizedAs(request, options_.admin_key))
      return SendError(conn, ApiError::Unauthorized("control endpoints need the admin key (Authorization: Bearer <admin key>)"));
  } else if (path != "/health" && !Authorized(request)) {
    return SendError(conn, ApiError::Unauthorized("missing or invalid API key (send Authorization: Bearer <key>)"));
  }

  try {
    if (path == "/health") {
      if (!get) return SendError(conn, {405, "invalid_request_error", "", "use GET /health"});
      if (!backend_->Ready()) return SendError(conn, ApiError::Unavailable("the server is not ready yet"));
      conn.SendResponse(200, kJson, "{\"status\": \"ok\"}");
      return;
    }
    if (post && path == "/v1/completions") return HandleGenerate(request, conn, Endpoint::kCompletions);
    if (post && path == "/v1/chat/completions") return HandleGenerate(request, conn, Endpoint::kChatCompletions);
    if (post && path == "/generate") return HandleGenerate(request, conn, Endpoint::kGenerate);
    if (post && path == "/tokenize") return HandleTokenize(request, conn);
    if (post && path == "/apply-template") return HandleApplyTemplate(request, conn);
    if (post && path == "/detokenize") return HandleDetokenize(request, conn);
    if (get && path == "/v1/models") return HandleModels(conn);
    if (get && (path == "/get_server_info" || path == "/server_info")) {
      Result<std::string> info = backend_->ServerInfoJson();
      if (!info.ok()) return SendError(conn, ApiError::FromStatus(info.status()));
      conn.SendResponse(200, kJson, *info);
      return;
    }
    if (get && path == "/metrics") {
      Result<std::string> metrics = backend_->MetricsText();
      if (!metrics.ok()) return SendError(conn, ApiError::FromStatus(metrics.status()));
      conn.SendResponse(200, "text/plain; version=0.0.4", *metrics);
      return;
    }
    if ((post || get) && path == "/flush_cache") {
      Status s = backend_->FlushCache();
      if (!s.ok()) return SendError(conn, ApiError::FromStatus(s));
      conn.SendResponse(200, kJson, "{\"success\": true}");
      return;
    }
    if (admin_route && path != "/flush_cache") {
      if (!get && !post) return SendError(conn, {405, "invalid_request_error", "", "use GET or POST on " + path});
      Result<AdminCall> call = ParseAdminCall(request.method, path, request.body);
      if (!call.ok()) return SendError(conn, ApiError::FromStatus(call.status()));
      Result<std::string> out = backend_->Admin(*call);
      if (!out.ok()) return SendError(conn, ApiError::FromStatus(out.status()));
      conn.SendResponse(200, kJson, *out);
      return;
    }
    for (const char* known : {"/v1/completions", "/v1/chat/completions", "/generate", "/tokenize", "/detokenize",
                              "/v1/models", "/get_server_info", "/server_info", "/metrics"})
      if (path == known)
        return SendError(conn, {405, "invalid_request_error", "", request.method + " is not allowed on " + path});
    SendError(conn, ApiError::NotFound("no route for " + request.method + " " + path));
  } catch (const std::exception& e) {  // a bug must not take the server down; the client gets a 500
    LOG(ERROR) << request.method << " " << path << ": " << e.what();
    conn.set_close_after_response();
    SendError(conn, ApiError::Internal(std::string("internal error: ") + e.what()));
  }
}

bool HttpServer::PrepareInput(GenerateRequest* req, ApiError* error) {
  const char* field = req->endpoint == Endpoint::kChatCompletions ? "messages"
                      : req->endpoint == Endpoint::kGenerate      ? (req->has_text ? "text" : "input_ids")
                                                                  : "prompt";
  if (!req->messages.empty()) {
    if (!chat_prompt_) return *error = ApiError::BadRequest("messages", chat_template_error_), false;
    if (!PrepareChat(*chat_prompt_, options_.limits, req, error)) return false;
    Result<std::vector<int32_t>> ids = backend_->Tokenize(req->text, /*add_special_tokens=*/false);
    if (!ids.ok()) return *error = ApiError::FromStatus(ids.status(), field), false;
    req->input_ids = std::move(ids).value();
  } else if (req->has_text) {
    Result<std::vector<int32_t>> ids = backend_->Tokenize(req->text, /*add_special_tokens=*/true);
    if (!ids.ok()) return *error = ApiError::FromStatus(ids.status(), field), false;
    req->input_ids = std::move(ids).value();
  }
  if (req->input_ids.empty()) {
    *error = ApiError::BadRequest(field, std::string(field) + ": the prompt is empty");
    return false;
  }
  const int32_t vocab = backend_->VocabSize();
  for (size_t i = 0; vocab > 0 && i < req->input_ids.size(); ++i) {
    const int32_t t = req->input_ids[i];
    if (t < 0 || t >= vocab) {
      *error = ApiError::BadRequest(field, std::string(field) + "[" + std::to_string(i) + "] = " + std::to_string(t) +
                                               " is outside the model's vocabulary [0, " + std::to_string(vocab) + ")");
      return false;
    }
  }
  const int32_t context = backend_->ContextLength();
  if (context > 0 && req->input_ids.size() >= static_cast<size_t>(context)) {
    *error = ApiError::BadRequest(
        field, std::string(field) + ": the prompt has " + std::to_string(req->input_ids.size()) +
                   " tokens, but the served context is " + std::to_string(context) +
                   " tokens and at least one must be left for the output");
    return false;
  }
  return true;
}

void HttpServer::HandleGenerate(const HttpRequest& http, HttpConnection& conn, Endpoint endpoint) {
  GenerateRequest req;
  ApiError error;
  bool parsed = endpoint == Endpoint::kCompletions       ? ParseCompletionRequest(http.body, options_.limits, &req, &error)
                : endpoint == Endpoint::kChatCompletions ? ParseChatCompletionRequest(http.body, options_.limits, &req, &error)
                                                         : ParseNativeGenerateRequest(http.body, options_.limits, &req, &error);
  if (!parsed || !CheckModelName(req.model, options_.served_model_name, &error) ||
      !ApplySchedulingContext(http, &req, &error))
    return SendError(conn, error);
  if (!backend_->Ready()) return SendError(conn, ApiError::Unavailable("the server is not ready yet"));
  if (!PrepareInput(&req, &error)) return SendError(conn, error);
  if (req.rid.empty()) req.rid = NewRequestId();

  // The class's share of the server: past its limit this class waits, the others do not.
  const size_t cls = static_cast<size_t>(req.priority_class);
  struct ClassSlot {  // held until the answer is complete
    std::atomic<int64_t>& n;
    int64_t k;
    ~ClassSlot() { n.fetch_sub(k, std::memory_order_acq_rel); }
  } slot{class_in_flight_[cls], req.n};
  const int64_t now_in_flight = slot.n.fetch_add(slot.k, std::memory_order_acq_rel) + slot.k;
  const int64_t limit = options_.class_max_in_flight[cls];
  if (limit > 0 && now_in_flight > limit) {
    class_rejected_[cls].fetch_add(1, std::memory_order_relaxed);
    return SendError(conn, ApiError::FromStatus(Status::ResourceExhausted(
                               "the " + std::string(NameOf(req.priority_class)) + " class is full: " +
                               std::to_string(now_in_flight - slot.k) + " of its " + std::to_string(limit) +
                               " requests in flight (class_max_in_flight); retry later")));
  }

  auto stream = std::make_shared<RequestStream>();
  if (!stream->valid()) return SendError(conn, ApiError::Internal("cannot create an event descriptor"));

  // n > 1: independent sub-requests "<rid>-<i>"; with a seed, each gets its own (seed + i) so choices differ.
  const int32_t n = req.n;
  std::vector<std::string> rids(n);
  std::vector<bool> finished(n, false);
  auto abort_unfinished = [&] {
    for (int32_t i = 0; i < n; ++i)
      if (!finished[i] && !rids[i].empty()) backend_->Abort(rids[i]);
  };
  for (int32_t i = 0; i < n; ++i) {
    GenerateRequest sub = req;
    sub.n = 1;
    sub.rid = n == 1 ? req.rid : req.rid + "-" + std::to_string(i);
    if (sub.spec.sampling.has_seed) sub.spec.sampling.seed += static_cast<uint64_t>(i);
    Status s = backend_->Submit(sub, stream->SinkFor(i));
    if (!s.ok()) {
      abort_unfinished();
      return SendError(conn, ApiError::FromStatus(s));
    }
    rids[i] = sub.rid;
  }

  const bool chat = endpoint == Endpoint::kChatCompletions;
  const bool openai = endpoint != Endpoint::kGenerate;
  ResponseContext ctx{std::string(chat ? "chatcmpl-" : "cmpl-") + req.rid, options_.served_model_name,
                      static_cast<int64_t>(std::time(nullptr))};
  std::vector<ChoiceResult> choices(n);
  for (int32_t i = 0; i < n; ++i) choices[i].rid = rids[i];
  int32_t remaining = n;
  std::vector<RequestStream::Item> items;

  if (!req.spec.stream) {
    while (remaining > 0) {
      if (!WaitForOutputs(conn, *stream, listener_, &items)) {
        abort_unfinished();
        conn.set_close_after_response();
        return;
      }
      for (RequestStream::Item& item : items) {
        if (item.index < 0 || item.index >= n || finished[item.index]) continue;
        choices[item.index].Append(item.output);
        if (item.output.finish.kind != FinishKind::kNone) {
          finished[item.index] = true;
          --remaining;
        }
      }
    }
    if (openai) {
      for (const ChoiceResult& c : choices)
        if (c.finish.kind == FinishKind::kAbort) return SendError(conn, AbortError(c.finish));
    }
    std::vector<tool_calls::ParsedOutput> messages;  // chat: read as a stream is, fed whole
    if (chat)
      for (const ChoiceResult& c : choices) {
        ChatOutput parsed(req.output_family, req.output_starts_in_reasoning);
        parsed.Feed(c.text);
        parsed.Finish(c.finish.kind == FinishKind::kLength);
        messages.push_back(parsed.message());
      }
    const bool logprobs = req.spec.return_logprob;
    std::string body = endpoint == Endpoint::kCompletions ? BuildCompletionResponse(ctx, choices, logprobs)
                       : chat ? BuildChatCompletionResponse(ctx, choices, messages, logprobs)
                              : BuildNativeGenerateResponse(choices, logprobs);
    conn.SendResponse(200, kJson, body);
    return;
  }

  // Streaming: headers now, then one chunk per drained batch of outputs.
  if (!conn.BeginChunked(200, "text/event-stream")) return abort_unfinished();
  const bool usage_null = openai && req.include_usage;
  std::string out;
  if (chat)
    for (int32_t i = 0; i < n; ++i) out += BuildChatRoleChunk(ctx, i, usage_null);
  std::vector<size_t> text_sent(n, 0);
  std::vector<ChatOutput> chat_outputs;  // chat: each choice's text read into content, reasoning, calls
  if (chat)
    for (int32_t i = 0; i < n; ++i) chat_outputs.emplace_back(req.output_family, req.output_starts_in_reasoning);
  bool failed = false;
  while (remaining > 0 && !failed) {
    if (!out.empty() && !conn.SendChunk(out)) break;
    out.clear();
    if (!WaitForOutputs(conn, *stream, listener_, &items)) break;
    for (RequestStream::Item& item : items) {
      const int32_t i = item.index;
      if (i < 0 || i >= n || finished[i]) continue;
      const GenerateOutput& o = item.output;
      choices[i].Append(o);
      const bool done = o.finish.kind != FinishKind::kNone;
      if (done) {
        finished[i] = true;
        --remaining;
      }
      if (openai && o.finish.kind == FinishKind::kAbort) {
        out += BuildStreamErrorEvent(AbortError(o.finish).ToJson());
        failed = true;  // one failed choice fails the response; the others are aborted below
        break;
      }
      if (o.text_delta.empty() && o.token_ids.empty() && o.logprobs.empty() && !done) continue;
      if (endpoint == Endpoint::kCompletions) {
        out += BuildCompletionChunk(ctx, i, o, req.spec.return_logprob, text_sent[i], usage_null);
        text_sent[i] += o.text_delta.size();
      } else if (chat) {
        ChatOutput& parsed = chat_outputs[i];
        tool_calls::OutputDelta delta = parsed.Feed(o.text_delta);
        if (done) {
          tool_calls::OutputDelta rest = parsed.Finish(o.finish.kind == FinishKind::kLength);
          delta.content += rest.content;
          delta.reasoning += rest.reasoning;
          delta.calls.insert(delta.calls.end(), rest.calls.begin(), rest.calls.end());
        }
        if (delta.empty() && !done && o.logprobs.empty()) continue;  // held back: markup may be starting
        out += BuildChatChunk(ctx, i, delta, o, parsed.made_calls(), req.spec.return_logprob, usage_null);
      } else {
        out += BuildNativeStreamEvent(choices[i], i, n > 1, req.spec.return_logprob);
      }
    }
  }
  if (remaining > 0 && !failed) {  // the client left (or the server stops): free the engine's work
    abort_unfinished();
    conn.set_close_after_response();
    return;
  }
  if (failed) abort_unfinished();
  if (usage_null && !failed) out += BuildUsageChunk(ctx, chat, SumUsage(choices));
  out += kSseDone;
  if (!conn.SendChunk(out) || !conn.EndChunked()) conn.set_close_after_response();
}

void HttpServer::HandleTokenize(const HttpRequest& http, HttpConnection& conn) {
  TokenizeRequest req;
  ApiError error;
  if (!ParseTokenizeRequest(http.body, options_.limits, &req, &error) ||
      !CheckModelName(req.model, options_.served_model_name, &error))
    return SendError(conn, error);
  std::string text = req.text;
  bool add_special = req.add_special_tokens;
  if (req.has_messages) {
    Result<std::string> prompt = RenderChat(req.messages, nullptr, req.add_generation_prompt, req.chat_template_kwargs);
    if (!prompt.ok()) return SendError(conn, ApiError::BadRequest("messages", prompt.status().message()));
    text = std::move(prompt).value();
    add_special = false;  // the rendered template carries its own special tokens
  }
  Result<std::vector<int32_t>> ids = backend_->Tokenize(text, add_special);
  if (!ids.ok()) return SendError(conn, ApiError::FromStatus(ids.status(), "text"));
  conn.SendResponse(200, kJson,
                    Dump({{"tokens", *ids}, {"count", ids->size()}, {"max_model_len", backend_->ContextLength()}}));
}

// llama.cpp's name: the prompt a chat request would give the model, rendered, not tokenized.
void HttpServer::HandleApplyTemplate(const HttpRequest& http, HttpConnection& conn) {
  GenerateRequest req;
  ApiError error;
  if (!ParseChatCompletionRequest(http.body, options_.limits, &req, &error) ||
      !CheckModelName(req.model, options_.served_model_name, &error))
    return SendError(conn, error);
  // The prompt exactly as a chat request renders it (PrepareChat), without compiling a grammar.
  const bool show_tools = req.tools.is_array() && req.tool_choice.mode != ToolChoice::Mode::kNone;
  Result<std::string> prompt = RenderChat(req.messages, show_tools ? req.tools : nlohmann::ordered_json(nullptr),
                                          req.add_generation_prompt, req.chat_template_kwargs);
  if (!prompt.ok()) return SendError(conn, ApiError::BadRequest("messages", prompt.status().message()));
  conn.SendResponse(200, kJson, Dump({{"prompt", *prompt}}));
}

void HttpServer::HandleDetokenize(const HttpRequest& http, HttpConnection& conn) {
  DetokenizeRequest req;
  ApiError error;
  if (!ParseDetokenizeRequest(http.body, options_.limits, &req, &error) ||
      !CheckModelName(req.model, options_.served_model_name, &error))
    return SendError(conn, error);
  Result<std::string> text = backend_->Detokenize(req.tokens, req.skip_special_tokens);
  if (!text.ok()) return SendError(conn, ApiError::FromStatus(text.status(), "tokens"));
  conn.SendResponse(200, kJson, Dump({{"text", *text}}));
}

void HttpServer::HandleModels(HttpConnection& conn) {
  json model = {{"id", options_.served_model_name},
                {"object", "model"},
                {"created", start_time_},
                {"owned_by", "radixserve"},
                {"max_model_len", backend_->ContextLength()}};
  conn.SendResponse(200, kJson, Dump({{"object", "list"}, {"data", json::array({model})}}));
}

}  // namespace radixserve::api
