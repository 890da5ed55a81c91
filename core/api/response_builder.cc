#include "core/api/response_builder.h"

#include "core/api/chat_output.h"

#include <nlohmann/json.hpp>

namespace radixserve::api {
namespace {

using nlohmann::json;

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

json Bytes(const std::string& token) {
  json bytes = json::array();
  for (unsigned char c : token) bytes.push_back(static_cast<int>(c));
  return bytes;
}

json FinishReasonJson(FinishKind kind) {
  const char* reason = OpenAiFinishReason(kind);
  return reason ? json(reason) : json(nullptr);
}

// A chat answer that made calls and ended on its own finishes with "tool_calls" (OpenAI's rule);
// one cut by max_tokens stays "length".
json ChatFinishReasonJson(FinishKind kind, bool made_calls) {
  if (made_calls && (kind == FinishKind::kMatchedToken || kind == FinishKind::kMatchedStr)) return "tool_calls";
  return FinishReasonJson(kind);
}

// Completions logprobs: {tokens, token_logprobs, top_logprobs: [{token: logprob}], text_offset}.
json CompletionLogprobs(const std::vector<TokenLogprob>& logprobs, size_t text_offset_base) {
  json tokens = json::array(), token_logprobs = json::array(), top = json::array(), offsets = json::array();
  size_t offset = text_offset_base;
  for (const TokenLogprob& lp : logprobs) {
    tokens.push_back(lp.token);
    token_logprobs.push_back(lp.logprob);
    json alternatives = json::object();
    for (const TopLogprob& t : lp.top) alternatives[t.token] = t.logprob;
    top.push_back(std::move(alternatives));
    offsets.push_back(offset);
    offset += lp.token.size();
  }
  return {{"tokens", std::move(tokens)}, {"token_logprobs", std::move(token_logprobs)},
          {"top_logprobs", std::move(top)}, {"text_offset", std::move(offsets)}};
}

// Chat logprobs: {content: [{token, logprob, bytes, top_logprobs: [{token, logprob, bytes}]}]}.
json ChatLogprobs(const std::vector<TokenLogprob>& logprobs) {
  json content = json::array();
  for (const TokenLogprob& lp : logprobs) {
    json top = json::array();
    for (const TopLogprob& t : lp.top) top.push_back({{"token", t.token}, {"logprob", t.logprob}, {"bytes", Bytes(t.token)}});
    content.push_back({{"token", lp.token}, {"logprob", lp.logprob}, {"bytes", Bytes(lp.token)}, {"top_logprobs", std::move(top)}});
  }
  return {{"content", std::move(content)}};
}

json UsageJson(const Usage& u) {
  return {{"prompt_tokens", u.prompt_tokens},
          {"completion_tokens", u.completion_tokens},
          {"total_tokens", u.prompt_tokens + u.completion_tokens},
          {"prompt_tokens_details", {{"cached_tokens", u.cached_tokens}}}};
}

json NativeChoice(const ChoiceResult& c, bool with_logprobs) {
  json meta = {{"id", c.rid},
               {"finish_reason", c.finish.ToJsonValue()},
               {"prompt_tokens", c.prompt_tokens},
               {"completion_tokens", c.completion_tokens},
               {"cached_tokens", c.cached_tokens}};
  if (with_logprobs) {
    // SGLang's shape: [logprob, token_id, text] per position; top: a list of those per position.
    json tokens = json::array(), top = json::array();
    for (const TokenLogprob& lp : c.logprobs) {
      tokens.push_back(json::array({lp.logprob, lp.token_id, lp.token}));
      json alternatives = json::array();
      for (const TopLogprob& t : lp.top) alternatives.push_back(json::array({t.logprob, t.token_id, t.token}));
      top.push_back(std::move(alternatives));
    }
    meta["output_token_logprobs"] = std::move(tokens);
    meta["output_top_logprobs"] = std::move(top);
  }
  return {{"text", c.text}, {"output_ids", c.token_ids}, {"meta_info", std::move(meta)}};
}

json ChunkBase(const ResponseContext& ctx, const char* object, bool include_usage) {
  json j = {{"id", ctx.id}, {"object", object}, {"created", ctx.created}, {"model", ctx.model}};
  if (include_usage) j["usage"] = nullptr;  // OpenAI: every chunk but the last carries usage: null
  return j;
}

}  // namespace

void ChoiceResult::Append(const GenerateOutput& output) {
  text += output.text_delta;
  token_ids.insert(token_ids.end(), output.token_ids.begin(), output.token_ids.end());
  logprobs.insert(logprobs.end(), output.logprobs.begin(), output.logprobs.end());
  if (output.finish.kind != FinishKind::kNone) finish = output.finish;
  prompt_tokens = output.prompt_tokens;
  completion_tokens = output.completion_tokens;
  cached_tokens = output.cached_tokens;
}

Usage SumUsage(const std::vector<ChoiceResult>& choices) {
  Usage u;
  if (choices.empty()) return u;
  u.prompt_tokens = choices[0].prompt_tokens;
  u.cached_tokens = choices[0].cached_tokens;
  for (const ChoiceResult& c : choices) u.completion_tokens += c.completion_tokens;
  return u;
}

const char* OpenAiFinishReason(FinishKind kind) {
  switch (kind) {
    case FinishKind::kMatchedToken:
    case FinishKind::kMatchedStr: return "stop";
    case FinishKind::kLength: return "length";
    default: return nullptr;
  }
}

std::string BuildCompletionResponse(const ResponseContext& ctx, const std::vector<ChoiceResult>& choices,
                                    bool with_logprobs) {
  json out_choices = json::array();
  for (size_t i = 0; i < choices.size(); ++i) {
    const ChoiceResult& c = choices[i];
    out_choices.push_back({{"index", i},
                           {"text", c.text},
                           {"logprobs", with_logprobs ? CompletionLogprobs(c.logprobs, 0) : json(nullptr)},
                           {"finish_reason", FinishReasonJson(c.finish.kind)}});
  }
  return Dump({{"id", ctx.id},
               {"object", "text_completion"},
               {"created", ctx.created},
               {"model", ctx.model},
               {"choices", std::move(out_choices)},
               {"usage", UsageJson(SumUsage(choices))}});
}

std::string BuildChatCompletionResponse(const ResponseContext& ctx, const std::vector<ChoiceResult>& choices,
                                        const std::vector<tool_calls::ParsedOutput>& messages, bool with_logprobs) {
  json out_choices = json::array();
  for (size_t i = 0; i < choices.size(); ++i) {
    const ChoiceResult& c = choices[i];
    const tool_calls::ParsedOutput& m = messages.at(i);
    out_choices.push_back({{"index", i},
                           {"message", ChatMessageJson(m)},
                           {"logprobs", with_logprobs ? ChatLogprobs(c.logprobs) : json(nullptr)},
                           {"finish_reason", ChatFinishReasonJson(c.finish.kind, !m.tool_calls.empty())}});
  }
  return Dump({{"id", ctx.id},
               {"object", "chat.completion"},
               {"created", ctx.created},
               {"model", ctx.model},
               {"choices", std::move(out_choices)},
               {"usage", UsageJson(SumUsage(choices))}});
}

std::string BuildNativeGenerateResponse(const std::vector<ChoiceResult>& choices, bool with_logprobs) {
  if (choices.size() == 1) return Dump(NativeChoice(choices[0], with_logprobs));
  json out = json::array();
  for (size_t i = 0; i < choices.size(); ++i) {
    json c = NativeChoice(choices[i], with_logprobs);
    c["index"] = i;
    out.push_back(std::move(c));
  }
  return Dump(out);
}

std::string SseEvent(std::string_view json_text) {
  std::string out;
  out.reserve(json_text.size() + 8);
  out += "data: ";
  out += json_text;
  out += "\n\n";
  return out;
}

std::string BuildCompletionChunk(const ResponseContext& ctx, int32_t index, const GenerateOutput& delta,
                                 bool with_logprobs, size_t text_offset_base, bool include_usage) {
  json j = ChunkBase(ctx, "text_completion", include_usage);
  j["choices"] = json::array({{{"index", index},
                               {"text", delta.text_delta},
                               {"logprobs", with_logprobs ? CompletionLogprobs(delta.logprobs, text_offset_base)
                                                          : json(nullptr)},
                               {"finish_reason", FinishReasonJson(delta.finish.kind)}}});
  return SseEvent(Dump(j));
}

std::string BuildChatRoleChunk(const ResponseContext& ctx, int32_t index, bool include_usage) {
  json j = ChunkBase(ctx, "chat.completion.chunk", include_usage);
  j["choices"] = json::array({{{"index", index},
                               {"delta", {{"role", "assistant"}, {"content", ""}}},
                               {"logprobs", nullptr},
                               {"finish_reason", nullptr}}});
  return SseEvent(Dump(j));
}

std::string BuildChatChunk(const ResponseContext& ctx, int32_t index, const tool_calls::OutputDelta& parsed,
                           const GenerateOutput& raw, bool made_calls, bool with_logprobs, bool include_usage) {
  json j = ChunkBase(ctx, "chat.completion.chunk", include_usage);
  json d = ChatDeltaJson(parsed);
  if (d.empty() && raw.finish.kind == FinishKind::kNone) d["content"] = "";
  j["choices"] = json::array({{{"index", index},
                               {"delta", std::move(d)},
                               {"logprobs", with_logprobs ? ChatLogprobs(raw.logprobs) : json(nullptr)},
                               {"finish_reason", ChatFinishReasonJson(raw.finish.kind, made_calls)}}});
  return SseEvent(Dump(j));
}

std::string BuildUsageChunk(const ResponseContext& ctx, bool chat, const Usage& usage) {
  json j = ChunkBase(ctx, chat ? "chat.completion.chunk" : "text_completion", false);
  j["choices"] = json::array();
  j["usage"] = UsageJson(usage);
  return SseEvent(Dump(j));
}

std::string BuildNativeStreamEvent(const ChoiceResult& choice, int32_t index, bool with_index, bool with_logprobs) {
  json j = NativeChoice(choice, with_logprobs);
  if (with_index) j["index"] = index;
  return SseEvent(Dump(j));
}

std::string BuildStreamErrorEvent(const std::string& error_json) { return SseEvent(error_json); }

}  // namespace radixserve::api
