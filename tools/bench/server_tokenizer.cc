#include "tools/bench/server_tokenizer.h"

#include <cstdlib>
#include <nlohmann/json.hpp>

namespace radixserve::bench {
namespace {

using nlohmann::json;

Result<json> PostJson(const HttpEndpoint& ep, const std::string& api_key, const std::string& path, const json& body) {
  HttpCallOptions call;
  call.method = "POST";
  call.path = path;
  call.body = body.dump(-1, ' ', false, json::error_handler_t::replace);
  call.timeout_ms = 30000;
  if (!api_key.empty()) call.headers.push_back({"Authorization", "Bearer " + api_key});
  HttpCallResult r = HttpCall(ep, call);
  if (r.failure == FailureKind::kHttpStatus && r.status >= 400 && r.status < 500)
    return Status::InvalidArgument("POST " + path + ": " + r.error);
  if (!r.ok()) return Status::Unavailable("POST " + path + ": " + r.error);
  json j = json::parse(r.body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return Status::Corrupt("POST " + path + ": the answer is not a JSON object");
  return j;
}

}  // namespace

Result<std::vector<int32_t>> ServerTokenizer::Tokenize(const std::string& text, bool add_special) const {
  // radixserve reads text/add_special_tokens, llama.cpp content/add_special; each ignores the other's.
  json body = {{"text", text}, {"content", text}, {"add_special_tokens", add_special}, {"add_special", add_special}};
  RS_ASSIGN_OR_RETURN(json j, PostJson(endpoint_, api_key_, "/tokenize", body));
  auto it = j.find("tokens");
  if (it == j.end() || !it->is_array()) return Status::Corrupt("POST /tokenize: no \"tokens\" array in the answer");
  std::vector<int32_t> ids;
  ids.reserve(it->size());
  for (const json& t : *it) {
    if (t.is_number_integer()) ids.push_back(t.get<int32_t>());
    else if (t.is_object() && t.contains("id")) ids.push_back(t["id"].get<int32_t>());
    else return Status::Corrupt("POST /tokenize: a token is not an integer");
  }
  return ids;
}

Result<std::string> ServerTokenizer::Detokenize(const std::vector<int32_t>& ids) const {
  RS_ASSIGN_OR_RETURN(json j, PostJson(endpoint_, api_key_, "/detokenize", json{{"tokens", ids}}));
  for (const char* key : {"text", "content"})
    if (auto it = j.find(key); it != j.end() && it->is_string()) return it->get<std::string>();
  return Status::Corrupt("POST /detokenize: no \"text\" in the answer");
}

Result<int32_t> ServerTokenizer::ProbeVocabSize() const {
  // Invariant: id lo is accepted, id hi is refused.
  int32_t lo = 0, hi = 1 << 24;
  RS_RETURN_IF_ERROR(Detokenize({0}).status());
  if (Detokenize({hi}).ok()) return Status::Unsupported("the server's /detokenize accepts any id; pass --vocab-size");
  while (hi - lo > 1) {
    const int32_t mid = lo + (hi - lo) / 2;
    Result<std::string> r = Detokenize({mid});
    if (r.ok()) {
      lo = mid;
    } else if (r.status().code() == StatusCode::kInvalidArgument) {
      hi = mid;
    } else {
      return r.status();
    }
  }
  return hi;
}

std::optional<int32_t> ServerTokenizer::BosId() const {
  auto with = Tokenize("a", true);
  auto without = Tokenize("a", false);
  if (!with.ok() || !without.ok() || with->size() != without->size() + 1) return std::nullopt;
  return (*with)[0];
}

Result<std::string> ServerTokenizer::FitText(const std::string& prefix_text, std::vector<int32_t> ids,
                                             int32_t target_total, const VocabRange& vocab,
                                             std::mt19937_64& rng) const {
  std::string best;
  int32_t best_error = -1;
  for (int round = 0; round < 8; ++round) {
    if (ids.empty()) ids = RandomTokens(1, vocab, rng);
    RS_ASSIGN_OR_RETURN(std::string text, Detokenize(ids));
    RS_ASSIGN_OR_RETURN(std::vector<int32_t> tokens, Tokenize(prefix_text + text, /*add_special=*/true));
    const int32_t diff = target_total - static_cast<int32_t>(tokens.size());
    if (best_error < 0 || std::abs(diff) < best_error) {
      best_error = std::abs(diff);
      best = text;
    }
    if (diff == 0) break;
    if (diff < 0) {
      ids.resize(static_cast<size_t>(std::max<int32_t>(1, static_cast<int32_t>(ids.size()) + diff)));
    } else {
      std::vector<int32_t> more = RandomTokens(diff, vocab, rng);
      ids.insert(ids.end(), more.begin(), more.end());
    }
  }
  return best;
}

}  // namespace radixserve::bench
