// greedy_ids: llama.cpp's greedy continuation of a token-id prompt, for cross-checking radixserve.
//
// Built by bench/compare_llamacpp.sh against a llama.cpp build (not part of the radixserve build:
// llama.cpp is not a dependency). It decodes the prompt in one batch, then feeds the argmax back
// one token at a time (first maximum on ties, as radixserve's greedy sampler), and prints
//   line 1: the generated ids as a JSON array (the format of `radixserve generate --print-ids`);
//   line 2: each step's gap between the best and the second-best logit, as a JSON array,
//   line 3: each step's second-best id, as a JSON array,
// so a caller can tell a fork at a near-tie (the other engine took llama.cpp's runner-up, which
// trailed by a hair) from a real difference.
//
// usage: greedy_ids MODEL.gguf 1,15,27 N_TOKENS [f16|f32] [THREADS]
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "llama.h"

namespace {

struct Best {
  int id;
  int second;
  float gap;  // best minus second best
};

Best Argmax(const float* row, int n) {
  int best = 0;
  for (int i = 1; i < n; ++i)
    if (row[i] > row[best]) best = i;
  int second = best == 0 ? 1 : 0;
  for (int i = 0; i < n; ++i)
    if (i != best && row[i] > row[second]) second = i;
  return {best, second, row[best] - row[second]};
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

  std::vector<int> out, seconds;
  std::vector<float> gaps;
  llama_token next = 0;
  for (int step = 0; step < n_tokens; ++step) {
    llama_batch batch = step == 0 ? llama_batch_get_one(prompt.data(), static_cast<int32_t>(prompt.size()))
                                  : llama_batch_get_one(&next, 1);
    if (llama_decode(ctx, batch) != 0) {
      std::fprintf(stderr, "error: llama_decode failed at step %d\n", step);
      return 1;
    }
    const Best best = Argmax(llama_get_logits_ith(ctx, -1), n_vocab);
    next = best.id;
    out.push_back(best.id);
    gaps.push_back(best.gap);
    seconds.push_back(best.second);
  }
  std::string ids_json = "[", gaps_json = "[", seconds_json = "[";
  for (size_t i = 0; i < out.size(); ++i) {
    ids_json += (i ? "," : "") + std::to_string(out[i]);
    seconds_json += (i ? "," : "") + std::to_string(seconds[i]);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%s%.6g", i ? "," : "", gaps[i]);
    gaps_json += buf;
  }
  std::printf("%s]\n%s]\n%s]\n", ids_json.c_str(), gaps_json.c_str(), seconds_json.c_str());
  llama_free(ctx);
  llama_model_free(model);
  llama_backend_free();
  return 0;
}
