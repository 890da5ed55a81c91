// `radixserve gen-model`: writes a llama GGUF with deterministic weights.
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
  uint32_t dim = 0, layers = 0, heads = 0, kv_heads = 0, ffn = 0, context = 0;
  uint64_t seed = 1;
  bool tied = false;
};

int RunGenModel(const GenModelOptions& o) {
  auto spec = modelgen::SpecForSize(o.size);
  if (!spec.ok()) {
    std::fprintf(stderr, "gen-model: %s\n", spec.status().message().c_str());
    return 2;
  }
  auto type = modelgen::ParseWeightType(o.type);
  if (!type.ok()) {
    std::fprintf(stderr, "gen-model: %s\n", type.status().message().c_str());
    return 2;
  }
  spec->weights = *type;
  spec->seed = o.seed;
  spec->tied_output = o.tied;
  spec->tokenizer_from = o.tokenizer_from;
  if (o.dim) spec->dim = o.dim;
  if (o.layers) spec->layers = o.layers;
  if (o.heads) spec->heads = o.heads;
  if (o.kv_heads) spec->kv_heads = o.kv_heads;
  if (o.ffn) spec->ffn = o.ffn;
  if (o.context) spec->context = o.context;
  auto start = std::chrono::steady_clock::now();
  Status s = modelgen::GenerateModel(*spec, o.out);
  if (!s.ok()) {
    std::fprintf(stderr, "gen-model: %s\n", s.ToString().c_str());
    return 1;
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("wrote %s (dim %u, %u layers, %u heads, %u kv heads, ffn %u, ctx %u, %s) in %.1f s\n", o.out.c_str(),
              spec->dim, spec->layers, spec->heads, spec->kv_heads, spec->ffn, spec->context, o.type.c_str(), secs);
  return 0;
}

CommandRegistrar reg({"gen-model", "Write a llama GGUF model with deterministic weights",
                      [](CLI::App& app) -> std::function<int()> {
                        auto o = std::make_shared<GenModelOptions>();
                        app.add_option("-o,--out", o->out, "Output GGUF path")->required();
                        app.add_option("--size", o->size, "tiny | small | medium")->capture_default_str();
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
                        app.add_option("--seed", o->seed, "Weight seed")->capture_default_str();
                        app.add_flag("--tied", o->tied, "Tie the output matrix to the embeddings");
                        return [o] { return RunGenModel(*o); };
                      }});

}  // namespace
}  // namespace radixserve::tools
