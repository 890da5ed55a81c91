// greedy_ids: llama.cpp's greedy continuation of a token-id prompt, for cross-checking radixserve.
//
// Built by bench/compare_llamacpp.sh against a llama.cpp build (not part of the radixserve build:
// llama.cpp is not a dependency). It decodes the prompt in one batch, then feeds the argmax back
// one token at a time (first maximum on ties, as radixserve's greedy sampler), and prints
//   line 1: the generated ids as a JSON array (the format of `radixserve generate --print-ids`);
//   line 2: each step's kTop best ids after the first with their gaps below it, as a JSON array
//           of [[id, gap], ...] per step,
// so a caller can tell a fork at a near-tie (the other engine took a token that trailed
// llama.cpp's best by a hair) from a real difference.
//
// usage: greedy_ids MODEL.gguf 1,15,27 N_TOKENS [f16|f32] [THREADS]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "llama.h"

namespace {

constexpr int kTop = 8;  // runners-up reported per step

// Ids by logit, best first (the first maximum on ties); the first kTop + 1 of them.
std::vector<int> Best(const float* row, int n) {
  std::vector<int> ids(n);
  for (int i = 0; i < n; ++i) ids[i] = i;
  const int k = std::min(n, kTop + 1);
  std::partial_sort(ids.begin(), ids.begin() + k, ids.end(),
                    [&](int a, int b) { return row[a] > row[b] || (row[a] == row[b] && a < b); });
  ids.resize(k);
  return ids;
}

int Usage() {
  std::fprintf(stderr, "usage: greedy_ids MODEL.gguf ID,ID,... N_TOKENS [f16|f32] [THREADS]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) return Usage();
  std::vector<llama_token> prompt;
  std::stringstream ids(argv[2]);
  for (std::string item; std::getline(ids, item, ',');) prompt.push_back(std::atoi(item.c_str()));
  const int n_tokens = std::atoi(argv[3]);
  const std::string kv = argc > 4 ? argv[4] : "f16";
  const int threads = argc > 5 ? std::atoi(argv[5]) : 2;
  if (prompt.empty() || n_tokens < 1 || (kv != "f16" && kv != "f32")) return Usage();

  llama_backend_init();
  llama_model_params mp = llama_model_default_params();
  mp.n_gpu_layers = 0;
  llama_model* model = llama_model_load_from_file(argv[1], mp);
  if (model == nullptr) {
    std::fprintf(stderr, "error: llama.cpp could not load %s\n", argv[1]);
    return 1;
  }
  llama_context_params cp = llama_context_default_params();
  cp.n_ctx = static_cast<uint32_t>(prompt.size() + n_tokens + 8);
  cp.n_batch = cp.n_ubatch = cp.n_ctx;
  cp.n_threads = cp.n_threads_batch = threads;
  cp.type_k = cp.type_v = kv == "f32" ? GGML_TYPE_F32 : GGML_TYPE_F16;
  llama_context* ctx = llama_init_from_model(model, cp);
  if (ctx == nullptr) {
    std::fprintf(stderr, "error: llama.cpp could not make a context for %s\n", argv[1]);
    return 1;
  }
  const int n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));

  std::vector<int> out;
  std::string runners_json = "[";
  llama_token next = 0;
  for (int step = 0; step < n_tokens; ++step) {
    llama_batch batch = step == 0 ? llama_batch_get_one(prompt.data(), static_cast<int32_t>(prompt.size()))
                                  : llama_batch_get_one(&next, 1);
    if (llama_decode(ctx, batch) != 0) {
      std::fprintf(stderr, "error: llama_decode failed at step %d\n", step);
      return 1;
    }
    const float* row = llama_get_logits_ith(ctx, -1);
    const std::vector<int> best = Best(row, n_vocab);
    next = best[0];
    out.push_back(best[0]);
    runners_json += step ? ",[" : "[";
    for (size_t j = 1; j < best.size(); ++j) {
      char buf[48];
      std::snprintf(buf, sizeof buf, "%s[%d,%.6g]", j > 1 ? "," : "", best[j], row[best[0]] - row[best[j]]);
      runners_json += buf;
    }
    runners_json += "]";
  }
  std::string ids_json = "[";
  for (size_t i = 0; i < out.size(); ++i) ids_json += (i ? "," : "") + std::to_string(out[i]);
  std::printf("%s]\n%s]\n", ids_json.c_str(), runners_json.c_str());
  llama_free(ctx);
  llama_model_free(model);
  llama_backend_free();
  return 0;
}
