#include "tools/bench/request_client.h"

#include <nlohmann/json.hpp>

#include "tools/bench/sse_parser.h"

namespace radixserve::bench {
namespace {

using nlohmann::json;

int32_t IntField(const json& obj, const char* key, int32_t fallback) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_number_integer() ? it->get<int32_t>() : fallback;
}

std::string ErrorMessage(const json& err) {
  if (err.is_string()) return err.get<std::string>();
  if (err.is_object() && err.contains("message") && err["message"].is_string()) return err["message"].get<std::string>();
  return err.dump();
}

}  // namespace

void StreamAccumulator::Failed(FailureKind kind, int status, std::string error) {
  if (failure_ != FailureKind::kNone) return;
  failure_ = kind;
  failure_status_ = status;
  error_ = std::move(error);
}

void StreamAccumulator::OnTokens(int32_t k, Clock::time_point now) {
  if (k <= 0) return;
  tokens_seen_ += k;
  if (!have_first_) {
    have_first_ = true;
    ttft_s_ = std::chrono::duration<double>(now - start_).count();
  } else {
    const double gap = std::chrono::duration<double>(now - last_token_).count() / k;
    for (int32_t i = 0; i < k; ++i) itl_s_.push_back(gap);
  }
  last_token_ = now;
}

void StreamAccumulator::OnEvent(std::string_view data, Clock::time_point now) {
  if (data == "[DONE]") return;
  json j = json::parse(data.begin(), data.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    Failed(FailureKind::kProtocol, 0, "an event is not a JSON object: " + std::string(data.substr(0, 200)));
    return;
  }
  if (auto err = j.find("error"); err != j.end() && !err->is_null()) {
    int status = err->is_object() ? IntField(*err, "code", 0) : 0;
    Failed(FailureKind::kServerAbort, status, "the server ended the stream: " + ErrorMessage(*err));
    return;
  }
  if (backend_ == Backend::kRadixserve) {
    // Native events carry cumulative text and counts.
    const json* meta = j.contains("meta_info") && j["meta_info"].is_object() ? &j["meta_info"] : nullptr;
    int32_t total = -1;
    if (meta) {
      total = IntField(*meta, "completion_tokens", -1);
      usage_prompt_ = IntField(*meta, "prompt_tokens", usage_prompt_);
      usage_cached_ = IntField(*meta, "cached_tokens", usage_cached_);
      if (total >= 0) usage_completion_ = total;
      auto fr = meta->find("finish_reason");
      if (fr != meta->end() && fr->is_object() && fr->value("type", "") == "abort") {
        Failed(FailureKind::kServerAbort, IntField(*fr, "status_code", 0),
               "the server aborted the request: " + fr->value("message", std::string()));
      }
    }
    if (total < 0 && j.contains("output_ids") && j["output_ids"].is_array())
      total = static_cast<int32_t>(j["output_ids"].size());
    if (j.contains("text") && j["text"].is_string()) text_ = j["text"].get<std::string>();
    OnTokens(total - tokens_seen_, now);
    return;
  }
  // OpenAI completions: text deltas; usage in the last chunk when include_usage was honoured.
  if (auto u = j.find("usage"); u != j.end() && u->is_object()) {
    usage_prompt_ = IntField(*u, "prompt_tokens", usage_prompt_);
    usage_completion_ = IntField(*u, "completion_tokens", usage_completion_);
    if (auto d = u->find("prompt_tokens_details"); d != u->end() && d->is_object())
      usage_cached_ = IntField(*d, "cached_tokens", usage_cached_);
  }
  auto choices = j.find("choices");
  if (choices == j.end() || !choices->is_array() || choices->empty() || !(*choices)[0].is_object()) return;
  const json& c = (*choices)[0];
  std::string delta = c.contains("text") && c["text"].is_string() ? c["text"].get<std::string>() : std::string();
  const bool finished = c.contains("finish_reason") && !c["finish_reason"].is_null();
  text_ += delta;
  // One event per token as engines stream them; a closing event with no text holds none.
  if (!delta.empty() || !finished) OnTokens(1, now);
}

void StreamAccumulator::Finish(Clock::time_point now, RequestOutcome* out) {
  out->latency_s = std::chrono::duration<double>(now - start_).count();
  out->ttft_s = ttft_s_;
  out->itl_s = std::move(itl_s_);
  out->output_text = std::move(text_);
  out->output_tokens = usage_completion_ >= 0 ? usage_completion_ : tokens_seen_;
  if (usage_prompt_ >= 0) out->prompt_tokens = usage_prompt_;
  out->cached_tokens = usage_cached_;
  if (failure_ == FailureKind::kNone && !have_first_)
    Failed(FailureKind::kProtocol, 0, "the stream ended without any generated token");
  if (failure_ != FailureKind::kNone) {
    out->failure = failure_;
    out->http_status = failure_status_;
    out->error = error_;
  }
}

std::string BuildRequestBody(const ClientOptions& options, const PromptInput& prompt) {
  json body;
  if (options.backend == Backend::kRadixserve) {
    if (prompt.use_ids) body["input_ids"] = prompt.ids;
    else body["text"] = prompt.text;
    body["stream"] = true;
    body["sampling_params"] = {{"max_new_tokens", prompt.output_len},
                               {"ignore_eos", options.ignore_eos},
                               {"temperature", options.temperature}};
  } else {
    if (!options.model.empty()) body["model"] = options.model;
    if (prompt.use_ids) body["prompt"] = prompt.ids;
    else body["prompt"] = prompt.text;
    body["max_tokens"] = prompt.output_len;
    body["temperature"] = options.temperature;
    body["ignore_eos"] = options.ignore_eos;
    body["stream"] = true;
    body["stream_options"] = {{"include_usage", true}};
  }
  return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

RequestOutcome SendRequest(const ClientOptions& options, const PromptInput& prompt) {
  HttpCallOptions call;
  call.method = "POST";
  call.path = options.backend == Backend::kRadixserve ? "/generate" : "/v1/completions";
  call.body = BuildRequestBody(options, prompt);
  call.timeout_ms = options.timeout_ms;
  call.headers.push_back({"Accept", "text/event-stream"});
  if (!options.api_key.empty()) call.headers.push_back({"Authorization", "Bearer " + options.api_key});

  RequestOutcome out;
  out.prompt_tokens = prompt.expected_prompt_len;
  const auto start = StreamAccumulator::Clock::now();
  StreamAccumulator acc(options.backend, start);
  SseParser sse;
  auto on_event = [&](std::string_view data) { acc.OnEvent(data, StreamAccumulator::Clock::now()); };
  HttpCallResult r = HttpCall(options.endpoint, call, [&](std::string_view piece) {
    sse.Feed(piece, on_event);
    return !acc.failed();
  });
  if (r.ok()) sse.Finish(on_event);
  const auto end = StreamAccumulator::Clock::now();
  acc.Finish(end, &out);
  if (!r.ok()) {  // transport and HTTP failures take precedence over what the partial stream said
    out.failure = r.failure;
    out.http_status = r.status;
    out.error = r.error;
  }
  return out;
}

}  // namespace radixserve::bench
