// `radixserve gen-model`: writes a GGUF model (llama, qwen3, qwen3moe, gemma2, gemma3, granite,
// smollm3 or phi3) with deterministic weights.
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>

#include "core/modelgen/model_generator.h"
#include "tools/command.h"

namespace radixserve::tools {
namespace {

struct GenModelOptions {
  std::string out;
  std::string size = "tiny";
  std::string type = "f32";
  std::string tokenizer_from;
  std::string arch = "llama";
  uint32_t dim = 0, layers = 0, heads = 0, kv_heads = 0, ffn = 0, context = 0, head_dim = 0;
  uint32_t experts = 0, experts_used = 0, expert_ffn = 0, sliding_window = 0, swa_pattern = 0;
  float attn_softcap = 0.0f, final_softcap = 0.0f;
  uint64_t seed = 1;
  bool tied = false;
};

int RunGenModel(const GenModelOptions& o) {
  auto spec = modelgen::SpecForSize(o.size);
  if (!spec.ok()) {
    std::fprintf(stderr, "gen-model: %s\n", spec.status().message().c_str());
    return 2;
  }
  if (Status st = modelgen::UseArchitecture(o.arch, &*spec); !st.ok()) {
    std::fprintf(stderr, "gen-model: %s\n", st.message().c_str());
    return 2;
  }
  auto type = modelgen::ParseWeightType(o.type);
  if (!type.ok()) {
    std::fprintf(stderr, "gen-model: %s\n", type.status().message().c_str());
    return 2;
  }
  spec->weights = *type;
  spec->seed = o.seed;
  if (o.tied) spec->tied_output = true;  // gemma2/gemma3 are tied already (UseArchitecture)
  spec->tokenizer_from = o.tokenizer_from;
  if (o.dim) spec->dim = o.dim;
  if (o.layers) spec->layers = o.layers;
  if (o.heads) spec->heads = o.heads;
  if (o.kv_heads) spec->kv_heads = o.kv_heads;
  if (o.ffn) spec->ffn = o.ffn;
  if (o.context) spec->context = o.context;
  if (o.head_dim) spec->head_dim = o.head_dim;
  if (o.experts) spec->experts = o.experts;
  if (o.experts_used) spec->experts_used = o.experts_used;
  if (o.expert_ffn) spec->expert_ffn = o.expert_ffn;
  if (o.sliding_window) spec->sliding_window = o.sliding_window;
  if (o.swa_pattern) spec->swa_pattern = o.swa_pattern;
  if (o.attn_softcap > 0.0f) spec->attn_softcap = o.attn_softcap;
  if (o.final_softcap > 0.0f) spec->final_softcap = o.final_softcap;
  auto start = std::chrono::steady_clock::now();
  Status s = modelgen::GenerateModel(*spec, o.out);
  if (!s.ok()) {
    std::fprintf(stderr, "gen-model: %s\n", s.ToString().c_str());
    return 1;
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::string moe;
  if (spec->arch == "qwen3moe")
    moe = ", " + std::to_string(spec->experts) + " experts (" + std::to_string(spec->experts_used) + " used) of ffn " +
          std::to_string(spec->expert_ffn ? spec->expert_ffn : spec->ffn / 4);
  std::printf("wrote %s (%s, dim %u, %u layers, %u heads, %u kv heads, ffn %u%s, ctx %u, %s) in %.1f s\n", o.out.c_str(),
              spec->arch.c_str(), spec->dim, spec->layers, spec->heads, spec->kv_heads, spec->ffn, moe.c_str(),
              spec->context, o.type.c_str(), secs);
  return 0;
}

CommandRegistrar gen_model_registrar({"gen-model", "Write a GGUF model (llama, qwen3, qwen3moe, gemma2, gemma3, granite, smollm3, phi3) with deterministic weights",
                      [](CLI::App& app) -> std::function<int()> {
                        auto o = std::make_shared<GenModelOptions>();
                        app.add_option("-o,--out", o->out, "Output GGUF path")->required();
                        app.add_option("--size", o->size, "tiny | small | medium")->capture_default_str();
                        app.add_option("--arch", o->arch,
                                       "llama | qwen3 | qwen3moe | gemma2 | gemma3 | granite | smollm3 | phi3 (phi3: the "
                                       "Phi-4-mini layout)")
                            ->capture_default_str();
                        app.add_option("--type", o->type, "f32 f16 bf16 q8_0 q4_0 q4_1 q5_0 q5_1 iq4_nl q2_k q3_k q4_k q5_k q6_k q4_k_m q5_k_m")
                            ->capture_default_str();
                        app.add_option("--tokenizer-from", o->tokenizer_from,
                                       "Copy the tokenizer of this GGUF (default: the built-in vocabulary)");
                        app.add_option("--dim", o->dim, "Override the embedding size");
                        app.add_option("--layers", o->layers, "Override the layer count");
                        app.add_option("--heads", o->heads, "Override the attention head count");
                        app.add_option("--kv-heads", o->kv_heads, "Override the KV head count");
                        app.add_option("--ffn", o->ffn, "Override the feed-forward size");
                        app.add_option("--context", o->context, "Override the context length");
                        app.add_option("--head-dim", o->head_dim,
                                       "Head size other than dim/heads (qwen3, qwen3moe, gemma2, gemma3, granite, smollm3)");
                        app.add_option("--experts", o->experts, "qwen3moe: number of experts (default 8)");
                        app.add_option("--experts-used", o->experts_used, "qwen3moe: experts per token (default 2)");
                        app.add_option("--expert-ffn", o->expert_ffn, "qwen3moe: feed-forward size of an expert (default ffn/4)");
                        app.add_option("--sliding-window", o->sliding_window,
                                       "gemma2/gemma3: attention.sliding_window (default 4096 / 1024)");
                        app.add_option("--swa-pattern", o->swa_pattern,
                                       "gemma2/gemma3: attention.sliding_window_pattern (default: not written, llama.cpp's 2 / 6)");
                        app.add_option("--attn-softcap", o->attn_softcap, "gemma2: attention logit soft-cap (default 50)");
                        app.add_option("--final-softcap", o->final_softcap, "gemma2: final logit soft-cap (default 30)");
                        app.add_option("--seed", o->seed, "Weight seed")->capture_default_str();
                        app.add_flag("--tied", o->tied, "Tie the output matrix to the embeddings");
                        return [o] { return RunGenModel(*o); };
                      }});

}  // namespace
}  // namespace radixserve::tools
