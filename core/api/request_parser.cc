#include "core/api/request_parser.h"

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/api/chat_prompt.h"
#include "core/api/response_format.h"
#include "core/api/unsupported_fields.h"

#include "core/api/json_depth.h"
#include "core/api/json_type_name.h"
#include "core/api/tool_request.h"

namespace radixserve::api {
namespace {

using nlohmann::json;


// Reads typed fields of one JSON object; the first failure is kept in *error and later reads are no-ops.
class FieldReader {
 public:
  FieldReader(const json& obj, std::string prefix, ApiError* error)
      : obj_(obj), prefix_(std::move(prefix)), error_(error) {}

  bool ok() const { return ok_; }
  bool Has(const char* key) const { auto it = obj_.find(key); return it != obj_.end() && !it->is_null(); }
  const json* Get(const char* key) const {
    auto it = obj_.find(key);
    return it == obj_.end() || it->is_null() ? nullptr : &*it;
  }
  std::string Name(const char* key) const { return prefix_ + key; }

  bool Fail(const std::string& field, const std::string& message) {
    if (ok_) *error_ = ApiError::BadRequest(field, field + ": " + message);
    ok_ = false;
    return false;
  }
  bool Expected(const char* key, const char* what, const json& got) {
    return Fail(Name(key), std::string("expected ") + what + ", got " + JsonTypeName(got));
  }

  void Bool(const char* key, bool* out) {
    const json* v = Get(key);
    if (!ok_ || !v) return;
    if (!v->is_boolean()) { Expected(key, "a boolean", *v); return; }
    *out = v->get<bool>();
  }
  void String(const char* key, std::string* out) {
    const json* v = Get(key);
    if (!ok_ || !v) return;
    if (!v->is_string()) { Expected(key, "a string", *v); return; }
    *out = v->get<std::string>();
  }
  // An integer (or an integral number such as 5.0) in [lo, hi].
  bool Int(const char* key, int64_t lo, int64_t hi, int64_t* out) {
    const json* v = Get(key);
    if (!ok_ || !v) return false;
    if (!v->is_number()) return Expected(key, "an integer", *v);
    double d = v->get<double>();
    if (v->is_number_float() && (!std::isfinite(d) || d != std::floor(d)))
      return Fail(Name(key), "expected an integer, got " + v->dump());
    // nlohmann stores non-negative integers as unsigned: compare in the type the value has.
    bool in_range;
    int64_t value;
    if (v->is_number_unsigned()) {
      uint64_t u = v->get<uint64_t>();
      in_range = u <= static_cast<uint64_t>(hi) && (lo <= 0 || u >= static_cast<uint64_t>(lo));
      value = static_cast<int64_t>(u);
    } else if (v->is_number_integer()) {
      value = v->get<int64_t>();
      in_range = value >= lo && value <= hi;
    } else {
      in_range = d >= static_cast<double>(lo) && d <= static_cast<double>(hi);
      value = in_range ? static_cast<int64_t>(d) : 0;
    }
    if (!in_range)
      return Fail(Name(key), "must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + v->dump());
    *out = value;
    return true;
  }
  void Int32(const char* key, int64_t lo, int64_t hi, int32_t* out) {
    int64_t value;
    if (Int(key, lo, hi, &value)) *out = static_cast<int32_t>(value);
  }
  // A finite number in [lo, hi]; open bounds are expressed by the caller's message.
  void Float(const char* key, double lo, double hi, const char* range, float* out, bool lo_open = false) {
    const json* v = Get(key);
    if (!ok_ || !v) return;
    if (!v->is_number()) { Expected(key, "a number", *v); return; }
    double d = v->get<double>();
    if (!std::isfinite(d) || d < lo || d > hi || (lo_open && d == lo)) {
      Fail(Name(key), std::string("must be in ") + range + ", got " + v->dump());
      return;
    }
    *out = static_cast<float>(d);
  }
  // A list of token ids (each >= 0).
  void TokenIds(const char* key, size_t max_count, std::vector<int32_t>* out) {
    const json* v = Get(key);
    if (!ok_ || !v) return;
    ParseTokenIds(*v, Name(key), max_count, out);
  }
  bool ParseTokenIds(const json& v, const std::string& field, size_t max_count, std::vector<int32_t>* out) {
    if (!v.is_array()) return Fail(field, std::string("expected an array of token ids, got ") + JsonTypeName(v));
    if (v.size() > max_count)
      return Fail(field, "at most " + std::to_string(max_count) + " token ids allowed, got " + std::to_string(v.size()));
    out->clear();
    out->reserve(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      const json& t = v[i];
      if (!t.is_number_integer() || (!t.is_number_unsigned() && t.get<int64_t>() < 0) ||
          (t.is_number_unsigned() ? t.get<uint64_t>() : static_cast<uint64_t>(t.get<int64_t>())) >
              static_cast<uint64_t>(std::numeric_limits<int32_t>::max()))
        return Fail(field + "[" + std::to_string(i) + "]", "expected a token id (integer >= 0), got " + t.dump());
      out->push_back(static_cast<int32_t>(t.get<int64_t>()));
    }
    return true;
  }
  // "stop": a string or a list of strings (null and [] mean none).
  void StopStrings(const char* key, const ApiLimits& limits, std::vector<std::string>* out) {
    const json* v = Get(key);
    if (!ok_ || !v) return;
    out->clear();
    auto add = [&](const json& s, const std::string& field) {
      if (!s.is_string()) return Fail(field, std::string("expected a string, got ") + JsonTypeName(s));
      const std::string& str = s.get_ref<const std::string&>();
      if (str.empty()) return Fail(field, "stop strings must not be empty");
      if (str.size() > static_cast<size_t>(limits.max_stop_string_bytes))
        return Fail(field, "stop strings are limited to " + std::to_string(limits.max_stop_string_bytes) +
                               " bytes, got " + std::to_string(str.size()));
      out->push_back(str);
      return true;
    };
    if (v->is_string()) {
      add(*v, Name(key));
    } else if (v->is_array()) {
      if (v->size() > static_cast<size_t>(limits.max_stop_strings)) {
        Fail(Name(key), "at most " + std::to_string(limits.max_stop_strings) + " stop strings allowed, got " +
                            std::to_string(v->size()));
        return;
      }
      for (size_t i = 0; i < v->size(); ++i)
        if (!add((*v)[i], Name(key) + "[" + std::to_string(i) + "]")) return;
    } else {
      Expected(key, "a string or an array of strings", *v);
    }
  }

 private:
  const json& obj_;
  std::string prefix_;
  ApiError* error_;
  bool ok_ = true;
};

bool ParseBody(std::string_view body, const ApiLimits& limits, json* out, ApiError* error) {
  if (body.size() > limits.max_body_bytes) {
    *error = ApiError::BadRequest("", "request body is " + std::to_string(body.size()) + " bytes, the limit is " +
                                          std::to_string(limits.max_body_bytes));
    error->http_status = 413;
    return false;
  }
  if (JsonDepth(body, limits.max_json_depth) > limits.max_json_depth) {
    *error = ApiError::BadRequest("", "request body nests arrays/objects deeper than " +
                                          std::to_string(limits.max_json_depth) + " levels");
    return false;
  }
  *out = json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
  if (out->is_discarded()) {
    *error = ApiError::BadRequest("", "request body is not valid JSON");
    return false;
  }
  if (!out->is_object()) {
    *error = ApiError::BadRequest("", std::string("request body must be a JSON object, got ") + JsonTypeName(*out));
    return false;
  }
  return true;
}

// Sampling fields shared by the OpenAI endpoints and the native sampling_params object.
void ReadSamplingFields(FieldReader& r, const ApiLimits& limits, GenerateRequest* req) {
  SamplingParams& sp = req->spec.sampling;
  r.Float("temperature", 0.0, 2.0, "[0, 2]", &sp.temperature);
  r.Float("top_p", 0.0, 1.0, "(0, 1]", &sp.top_p, /*lo_open=*/true);
  int64_t top_k;
  if (r.Int("top_k", -1, std::numeric_limits<int32_t>::max(), &top_k)) {
    if (top_k == 0) r.Fail(r.Name("top_k"), "must be >= 1, or -1 for all tokens, got 0");
    sp.top_k = top_k == -1 ? SamplingParams::kTopKAll : static_cast<int32_t>(top_k);
  }
  r.Float("min_p", 0.0, 1.0, "[0, 1]", &sp.min_p);
  r.Float("frequency_penalty", -2.0, 2.0, "[-2, 2]", &sp.frequency_penalty);
  r.Float("presence_penalty", -2.0, 2.0, "[-2, 2]", &sp.presence_penalty);
  r.Float("repetition_penalty", 0.0, 2.0, "(0, 2]", &sp.repetition_penalty, /*lo_open=*/true);
  r.Bool("ignore_eos", &sp.ignore_eos);
  r.Bool("skip_special_tokens", &sp.skip_special_tokens);
  r.StopStrings("stop", limits, &req->spec.stop_strs);
  r.TokenIds("stop_token_ids", limits.max_stop_token_ids, &req->spec.stop_token_ids);
  r.Int32("n", 1, limits.max_n, &req->n);
  // OpenAI's seed is a signed 64-bit integer; SGLang calls it sampling_seed.
  for (const char* key : {"seed", "sampling_seed"}) {
    int64_t seed;
    if (r.Int(key, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), &seed)) {
      sp.seed = static_cast<uint64_t>(seed);
      sp.has_seed = true;
    }
  }
}

// Scheduling fields, the same on every endpoint: priority, cache_salt, routing_key.
void ReadSchedulingFields(FieldReader& r, const ApiLimits& limits, GenerateRequest* req) {
  if (const json* p = r.Get("priority")) {
    if (p->is_string()) {
      Result<int64_t> v = ParsePriority(p->get<std::string>());
      if (!v.ok()) r.Fail("priority", v.status().message());
      else req->spec.priority = *v;
    } else {
      int64_t v;
      if (!p->is_number()) r.Expected("priority", "a class name (interactive, default, bulk) or an integer", *p);
      else if (r.Int("priority", kMinPriority, kMaxPriority, &v)) req->spec.priority = v;
    }
  }
  for (auto [key, out] :
       {std::pair{"cache_salt", &req->spec.cache_salt}, std::pair{"routing_key", &req->spec.routing_key}}) {
    r.String(key, out);
    if (r.ok() && out->size() > static_cast<size_t>(limits.max_key_bytes))
      r.Fail(key, "at most " + std::to_string(limits.max_key_bytes) + " bytes allowed, got " +
                      std::to_string(out->size()));
  }
}

// Runs SamplingParams::Validate for cross-field rules (min <= max tokens) and normalisation.
bool FinishSampling(FieldReader& r, GenerateRequest* req) {
  if (!r.ok()) return false;
  Status s = req->spec.sampling.Validate();
  if (!s.ok()) {
    std::string field = s.message().substr(0, s.message().find(' '));
    return r.Fail(field, s.message());
  }
  return true;
}

// Fields common to /v1/completions and /v1/chat/completions.
void ReadOpenAiCommon(FieldReader& r, const ApiLimits& limits, GenerateRequest* req) {
  r.String("model", &req->model);
  r.String("rid", &req->rid);
  r.Bool("stream", &req->spec.stream);
  if (const json* so = r.Get("stream_options")) {
    if (!so->is_object()) {
      r.Expected("stream_options", "an object", *so);
    } else if (!req->spec.stream) {
      r.Fail("stream_options", "only allowed when stream is true");
    } else {
      auto it = so->find("include_usage");
      if (it != so->end() && !it->is_null()) {
        if (!it->is_boolean()) r.Fail("stream_options.include_usage", std::string("expected a boolean, got ") + JsonTypeName(*it));
        else req->include_usage = it->get<bool>();
      }
    }
  }
  // max_completion_tokens supersedes the deprecated max_tokens.
  r.Int32("max_tokens", 1, std::numeric_limits<int32_t>::max(), &req->spec.sampling.max_new_tokens);
  r.Int32("max_completion_tokens", 1, std::numeric_limits<int32_t>::max(), &req->spec.sampling.max_new_tokens);
  r.Int32("min_tokens", 0, std::numeric_limits<int32_t>::max(), &req->spec.sampling.min_new_tokens);
  ReadSamplingFields(r, limits, req);
  ReadSchedulingFields(r, limits, req);
  if (const json* bias = r.Get("logit_bias"); bias && !(bias->is_object() && bias->empty()))
    r.Fail("logit_bias", "is not supported");
  if (const json* best_of = r.Get("best_of"); best_of && !(best_of->is_number_integer() && best_of->get<int64_t>() == req->n))
    r.Fail("best_of", "is not supported (only best_of == n)");
}

// chat_template_kwargs: an object of extra chat-template variables (not the ones the server sets).
bool ReadTemplateKwargs(FieldReader& r, nlohmann::ordered_json* out) {
  const json* v = r.Get("chat_template_kwargs");
  if (!r.ok() || !v) return r.ok();
  if (!v->is_object()) return r.Expected("chat_template_kwargs", "an object", *v);
  for (const auto& [key, value] : v->items())
    if (IsReservedTemplateVariable(key))
      return r.Fail("chat_template_kwargs." + key, "is set by the server and cannot be given here");
  *out = nlohmann::ordered_json::parse(v->dump());
  return true;
}

}  // namespace

bool ParseCompletionRequest(std::string_view body, const ApiLimits& limits, GenerateRequest* out, ApiError* error) {
  json j;
  if (!ParseBody(body, limits, &j, error)) return false;
  *out = GenerateRequest{};
  out->endpoint = Endpoint::kCompletions;
  FieldReader r(j, "", error);
  ReadOpenAiCommon(r, limits, out);
  if (!r.ok() || !CheckUnsupportedFields(j, out->endpoint, error)) return false;

  const json* prompt = r.Get("prompt");
  if (!prompt) return r.Fail("prompt", "is required");
  // A batch of one prompt is unwrapped; larger batches are refused (send one request per prompt).
  const json* p = prompt;
  if (p->is_array() && !p->empty() && (p->front().is_string() || p->front().is_array())) {
    if (p->size() != 1) return r.Fail("prompt", "batches of prompts are not supported, send one request per prompt");
    p = &p->front();
  }
  if (p->is_string()) {
    out->text = p->get<std::string>();
    out->has_text = true;
  } else if (p->is_array()) {
    if (p->empty()) return r.Fail("prompt", "must not be empty");
    if (!r.ParseTokenIds(*p, "prompt", limits.max_body_bytes, &out->input_ids)) return false;
    out->has_input_ids = true;
  } else {
    return r.Expected("prompt", "a string or an array of token ids", *p);
  }

  if (const json* lp = r.Get("logprobs")) {
    if (lp->is_boolean()) {  // some clients send chat-style booleans
      out->spec.return_logprob = lp->get<bool>();
    } else {
      int32_t n = 0;
      r.Int32("logprobs", 0, limits.max_logprobs, &n);
      out->spec.return_logprob = true;
      out->spec.top_logprobs_num = n;
    }
  }
  out->spec.sampling.logprobs = out->spec.return_logprob ? out->spec.top_logprobs_num : -1;
  // Last: validating a constraint compiles it, the one costly check.
  return FinishSampling(r, out) && ParseStructuredOutput(body, j, out->endpoint, limits, &out->spec.grammar, error) &&
         CheckConstrainedSampling(*out, error);
}

bool ParseChatCompletionRequest(std::string_view body, const ApiLimits& limits, GenerateRequest* out,
                                ApiError* error) {
  json j;
  if (!ParseBody(body, limits, &j, error)) return false;
  *out = GenerateRequest{};
  out->endpoint = Endpoint::kChatCompletions;
  FieldReader r(j, "", error);
  ReadOpenAiCommon(r, limits, out);
  if (!r.ok() || !CheckUnsupportedFields(j, out->endpoint, error)) return false;

  const json* messages = r.Get("messages");
  if (!messages) return r.Fail("messages", "is required");
  if (!messages->is_array()) return r.Expected("messages", "an array of messages", *messages);
  if (messages->empty()) return r.Fail("messages", "must contain at least one message");
  if (messages->size() > static_cast<size_t>(limits.max_messages))
    return r.Fail("messages", "at most " + std::to_string(limits.max_messages) + " messages allowed");
  for (size_t i = 0; i < messages->size(); ++i) {
    const json& m = (*messages)[i];
    std::string field = "messages[" + std::to_string(i) + "]";
    if (!m.is_object()) return r.Fail(field, std::string("expected an object, got ") + JsonTypeName(m));
    ChatMessage msg;
    auto role = m.find("role");
    if (role == m.end() || !role->is_string()) return r.Fail(field + ".role", "expected a string");
    msg.role = role->get<std::string>();
    if (msg.role == "developer") msg.role = "system";  // OpenAI's newer name for the system role
    if (msg.role != "system" && msg.role != "user" && msg.role != "assistant" && msg.role != "tool")
      return r.Fail(field + ".role",
                    "expected \"system\", \"user\", \"assistant\" or \"tool\", got \"" + msg.role + "\"");
    auto content = m.find("content");
    if (content == m.end() || content->is_null()) {
      if (msg.role != "assistant") return r.Fail(field + ".content", "is required");
      msg.content_null = true;
    } else if (content->is_string()) {
      msg.content = content->get<std::string>();
    } else if (content->is_array()) {
      for (size_t k = 0; k < content->size(); ++k) {
        const json& part = (*content)[k];
        std::string pfield = field + ".content[" + std::to_string(k) + "]";
        if (!part.is_object() || !part.contains("type") || !part["type"].is_string())
          return r.Fail(pfield, "expected a content part object with a \"type\"");
        if (part["type"].get<std::string>() != "text")
          return r.Fail(pfield + ".type", "only \"text\" content parts are supported, got \"" +
                                              part["type"].get<std::string>() + "\"");
        if (!part.contains("text") || !part["text"].is_string()) return r.Fail(pfield + ".text", "expected a string");
        msg.content += part["text"].get<std::string>();
      }
    } else {
      return r.Fail(field + ".content", std::string("expected a string or an array of content parts, got ") +
                                            JsonTypeName(*content));
    }
    if (!ParseMessageToolFields(m, field, limits, &msg, error)) return false;
    out->messages.push_back(std::move(msg));
  }
  if (!ParseToolFields(body, j, limits, out, error)) return false;
  out->skip_special_tokens_default = !r.Has("skip_special_tokens");
  r.Bool("add_generation_prompt", &out->add_generation_prompt);
  if (!ReadTemplateKwargs(r, &out->chat_template_kwargs)) return false;

  r.Bool("logprobs", &out->spec.return_logprob);
  r.Int32("top_logprobs", 0, limits.max_logprobs, &out->spec.top_logprobs_num);
  if (r.ok() && r.Has("top_logprobs") && !out->spec.return_logprob)
    return r.Fail("top_logprobs", "requires logprobs to be true");
  out->spec.sampling.logprobs = out->spec.return_logprob ? out->spec.top_logprobs_num : -1;
  // Last: validating a constraint compiles it, the one costly check.
  return FinishSampling(r, out) && ParseStructuredOutput(body, j, out->endpoint, limits, &out->spec.grammar, error) &&
         CheckConstrainedSampling(*out, error);
}

bool ParseNativeGenerateRequest(std::string_view body, const ApiLimits& limits, GenerateRequest* out,
                                ApiError* error) {
  json j;
  if (!ParseBody(body, limits, &j, error)) return false;
  *out = GenerateRequest{};
  out->endpoint = Endpoint::kGenerate;
  FieldReader r(j, "", error);
  r.String("rid", &out->rid);
  r.String("model", &out->model);
  r.Bool("stream", &out->spec.stream);
  bool has_text = r.Has("text"), has_ids = r.Has("input_ids");
  if (has_text == has_ids) return r.Fail("text", "exactly one of \"text\" or \"input_ids\" is required");
  if (has_text) {
    r.String("text", &out->text);
    out->has_text = true;
  } else {
    r.TokenIds("input_ids", limits.max_body_bytes, &out->input_ids);
    if (r.ok() && out->input_ids.empty()) return r.Fail("input_ids", "must not be empty");
    out->has_input_ids = true;
  }
  r.Bool("return_logprob", &out->spec.return_logprob);
  r.Int32("top_logprobs_num", 0, limits.max_logprobs, &out->spec.top_logprobs_num);
  ReadSchedulingFields(r, limits, out);
  if (!r.ok()) return false;

  if (const json* sp = r.Get("sampling_params")) {
    if (!sp->is_object()) return r.Expected("sampling_params", "an object", *sp);
    FieldReader s(*sp, "sampling_params.", error);
    s.Int32("max_new_tokens", 0, std::numeric_limits<int32_t>::max(), &out->spec.sampling.max_new_tokens);
    s.Int32("min_new_tokens", 0, std::numeric_limits<int32_t>::max(), &out->spec.sampling.min_new_tokens);
    s.Int32("stream_interval", 0, std::numeric_limits<int32_t>::max(), &out->spec.sampling.stream_interval);
    ReadSamplingFields(s, limits, out);
    if (!s.ok()) return false;
  }
  if (out->spec.top_logprobs_num > 0 && !out->spec.return_logprob) out->spec.return_logprob = true;
  out->spec.sampling.logprobs = out->spec.return_logprob ? out->spec.top_logprobs_num : -1;
  // Last: validating a constraint compiles it, the one costly check.
  return FinishSampling(r, out) && ParseStructuredOutput(body, j, out->endpoint, limits, &out->spec.grammar, error) &&
         CheckConstrainedSampling(*out, error);
}

bool ParseTokenizeRequest(std::string_view body, const ApiLimits& limits, TokenizeRequest* out, ApiError* error) {
  json j;
  if (!ParseBody(body, limits, &j, error)) return false;
  *out = TokenizeRequest{};
  FieldReader r(j, "", error);
  r.String("model", &out->model);
  r.Bool("add_special_tokens", &out->add_special_tokens);
  if (const json* messages = r.Get("messages")) {
    // Reuse the chat parser's message rules through a minimal chat body.
    GenerateRequest chat;
    json chat_body = {{"messages", *messages}};
    for (const char* key : {"add_generation_prompt", "chat_template_kwargs"})
      if (const json* v = r.Get(key)) chat_body[key] = *v;
    if (!ParseChatCompletionRequest(chat_body.dump(), limits, &chat, error)) return false;
    out->messages = std::move(chat.messages);
    out->has_messages = true;
    out->add_generation_prompt = chat.add_generation_prompt;
    out->chat_template_kwargs = std::move(chat.chat_template_kwargs);
    return r.ok();
  }
  const char* key = r.Has("text") ? "text" : "prompt";
  if (!r.Has(key)) return r.Fail("text", "is required (a string)");
  r.String(key, &out->text);
  return r.ok();
}

bool ParseDetokenizeRequest(std::string_view body, const ApiLimits& limits, DetokenizeRequest* out,
                            ApiError* error) {
  json j;
  if (!ParseBody(body, limits, &j, error)) return false;
  *out = DetokenizeRequest{};
  FieldReader r(j, "", error);
  r.String("model", &out->model);
  r.Bool("skip_special_tokens", &out->skip_special_tokens);
  const char* key = r.Has("tokens") ? "tokens" : "input_ids";
  if (!r.Has(key)) return r.Fail("tokens", "is required (an array of token ids)");
  r.TokenIds(key, limits.max_body_bytes, &out->tokens);
  return r.ok();
}

bool CheckModelName(const std::string& requested, const std::string& served_model_name, ApiError* error) {
  if (requested.empty() || requested == "default" || requested == served_model_name) return true;
  *error = ApiError::BadRequest("model", "model: unknown model \"" + requested + "\", this server serves \"" +
                                             served_model_name + "\"");
  return false;
}

}  // namespace radixserve::api
