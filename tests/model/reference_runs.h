// Test helper: the runs of ../shared/models/ref (llama.cpp's logits for its own model files; read
// ref/README.md) and the distance of an engine's logits from them, shared by the CPU's reference
// test and the CUDA one. `ref_dir` ends in "/models/ref/".
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cctype>
#include <cstring>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <span>
#include <vector>

#include "core/model/forward_input.h"
#include "core/util/status.h"

namespace radixserve::model {

// The manifest (an empty object when the directory has none: the tests then fail on it).
inline nlohmann::json ReadRefManifest(const std::string& ref_dir) {
  std::ifstream in(ref_dir + "manifest.json");
  return in.good() ? nlohmann::json::parse(in) : nlohmann::json::object();
}

// A test name for dequantisation case `i` of a manifest: its path past "deq/", every character
// that is not a letter or a digit as '_'.
inline std::string DequantCaseName(const nlohmann::json& manifest, int i) {
  std::string n = manifest["dequant"][i]["path"].get<std::string>().substr(4);
  for (char& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

// The names of the manifest's runs, and a run's name as a gtest parameter name.
inline std::vector<std::string> RefRunNames(const nlohmann::json& manifest) {
  std::vector<std::string> names;
  if (manifest.contains("runs"))
    for (const auto& [name, run] : manifest["runs"].items()) names.push_back(name);
  return names;
}
inline std::string RefRunTestName(const ::testing::TestParamInfo<std::string>& info) {
  std::string n = info.param;
  for (char& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

// A raw little-endian float32 file of the reference.
inline std::vector<float> ReadRefFloats(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<float> out(bytes.size() / 4);
  std::memcpy(out.data(), bytes.data(), out.size() * 4);
  return out;
}

// The weight type of a run's model, from its name ("a_llama.Q4_K_M" -> "Q4_K_M").
inline std::string RefRunType(const nlohmann::json& run) {
  const std::string name = run["model"].get<std::string>();
  return name.substr(name.find('.') + 1);
}

// Distances of logit rows from the reference's: max |d|, KL(ref || got) per row, top-1 agreement.
struct LogitDistance {
  double max_abs = 0, kl_sum = 0, kl_max = 0;
  int rows = 0, argmax_agree = 0, kl_max_row = -1;
  std::vector<double> row_kl;  // every row's KL, in order
  int RowsAbove(double kl) const { return static_cast<int>(std::count_if(row_kl.begin(), row_kl.end(), [&](double k) { return k > kl; })); }
  void Add(const float* ref, const float* got, int64_t n) {
    double mr = -1e300, mg = -1e300;
    for (int64_t i = 0; i < n; ++i) {
      mr = std::max<double>(mr, ref[i]);
      mg = std::max<double>(mg, got[i]);
      max_abs = std::max(max_abs, std::abs(static_cast<double>(ref[i]) - got[i]));
    }
    double sr = 0, sg = 0;
    for (int64_t i = 0; i < n; ++i) {
      sr += std::exp(ref[i] - mr);
      sg += std::exp(got[i] - mg);
    }
    const double lr = mr + std::log(sr), lg = mg + std::log(sg);
    double kl = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double pr = ref[i] - lr, pg = got[i] - lg;
      kl += std::exp(pr) * (pr - pg);
    }
    if (kl > kl_max) kl_max = kl, kl_max_row = rows;
    kl_sum += kl;
    row_kl.push_back(kl);
    argmax_agree += std::max_element(ref, ref + n) - ref == std::max_element(got, got + n) - got;
    ++rows;
  }
  double kl_mean() const { return rows ? kl_sum / rows : 0; }
};

// A run's bounds on those distances, with the reason for them.
struct LogitBounds {
  double max_abs, kl_mean, kl_max;
  bool exact_greedy;  // every argmax and greedy id equal
  const char* why;
  // The fraction of rows allowed above kl_max (qwen3moe's quantised files: expert-routing flips at
  // near-ties, ref2 README 5.3); 0: none.
  double kl_max_row_fraction = 0.0;
};

// Runs every prompt of `run` through an engine and checks its logits against the reference's
// under `b` (gtest failures name the run, phase, row and miss): the prompt's prefill with every
// position's logits, then each greedy step teacher-forced with llama.cpp's id, the engine's own
// greedy choice counted as a fork where it differs. `start(total)` readies the engine's KV cache
// for a prompt that will hold `total` tokens; `forward(seqs, logits, options)` runs one batch.
// Slots are taken in reverse order (each prompt writes every slot it reads before reading it).
template <class Start, class Forward>
void CheckRefRun(const std::string& name, const nlohmann::json& run, const std::string& ref_dir, const LogitBounds& b,
                 Start&& start, Forward&& forward) {
  const int64_t vocab = run["n_vocab"].get<int64_t>();
  LogitDistance prefill, decode;
  int forks = 0, greedy_steps = 0;
  for (const auto& p : run["prompts"]) {
    const auto prompt = p["prompt_ids"].get<std::vector<int32_t>>();
    const auto greedy = p["greedy_ids"].get<std::vector<int32_t>>();
    const auto ref_prefill = ReadRefFloats(ref_dir + p["prefill_logits"]["path"].get<std::string>());
    const auto ref_decode = ReadRefFloats(ref_dir + p["decode_logits"]["path"].get<std::string>());
    ASSERT_EQ(ref_prefill.size(), prompt.size() * vocab) << name;
    ASSERT_EQ(ref_decode.size(), greedy.size() * vocab) << name;
    const int64_t total = static_cast<int64_t>(prompt.size() + greedy.size());
    ASSERT_TRUE(start(total)) << name;
    std::vector<int32_t> slots(total);
    for (int64_t i = 0; i < total; ++i) slots[i] = static_cast<int32_t>(total - 1 - i);

    std::vector<float> logits(prompt.size() * vocab);
    SequenceInput in{0, prompt, std::span<const int32_t>(slots.data(), prompt.size())};
    ForwardOptions all;
    all.all_logits = true;
    const Status prefilled = forward(std::span<const SequenceInput>(&in, 1), std::span<float>(logits), all);
    ASSERT_TRUE(prefilled.ok()) << name << ": " << prefilled.ToString();
    for (size_t r = 0; r < prompt.size(); ++r) prefill.Add(&ref_prefill[r * vocab], &logits[r * vocab], vocab);
    int32_t own = static_cast<int32_t>(std::max_element(logits.end() - vocab, logits.end()) - (logits.end() - vocab));
    for (size_t s = 0; s < greedy.size(); ++s) {
      ++greedy_steps;
      forks += own != greedy[s];
      const int32_t cached = static_cast<int32_t>(prompt.size() + s);
      SequenceInput step{cached, std::span<const int32_t>(&greedy[s], 1),
                         std::span<const int32_t>(slots.data(), cached + 1)};
      std::span<float> row(logits.data(), vocab);
      const Status stepped = forward(std::span<const SequenceInput>(&step, 1), row, ForwardOptions{});
      ASSERT_TRUE(stepped.ok()) << name << ": " << stepped.ToString();
      decode.Add(&ref_decode[s * vocab], row.data(), vocab);
      own = static_cast<int32_t>(std::max_element(row.begin(), row.end()) - row.begin());
    }
  }
  std::printf("%-28s prefill: max|d| %.3g  KL mean %.3g max %.3g  top-1 %d/%d | decode: max|d| %.3g  KL mean %.3g "
              "max %.3g  top-1 %d/%d | greedy forks %d/%d\n",
              name.c_str(), prefill.max_abs, prefill.kl_mean(), prefill.kl_max, prefill.argmax_agree, prefill.rows,
              decode.max_abs, decode.kl_mean(), decode.kl_max, decode.argmax_agree, decode.rows, forks, greedy_steps);
  for (const auto* d : {&prefill, &decode}) {
    const char* phase = d == &prefill ? "prefill" : "decode";
    EXPECT_LE(d->max_abs, b.max_abs) << name << " " << phase << ": " << b.why;
    EXPECT_LE(d->kl_mean(), b.kl_mean) << name << " " << phase << ": " << b.why;
    if (b.kl_max_row_fraction > 0) {
      std::printf("%-28s %s: %d of %d rows above KL %.3g\n", name.c_str(), phase, d->RowsAbove(b.kl_max), d->rows, b.kl_max);
      // Whole rows: 3 % of the 64 decode rows is up to 2 of them.
      EXPECT_LE(d->RowsAbove(b.kl_max), std::ceil(b.kl_max_row_fraction * d->rows)) << name << " " << phase << ": " << b.why;
    } else {
      EXPECT_LE(d->kl_max, b.kl_max) << name << " " << phase << " row " << d->kl_max_row << ": " << b.why;
    }
    if (b.exact_greedy) {
      EXPECT_EQ(d->argmax_agree, d->rows) << name << " " << phase;
    }
  }
  if (b.exact_greedy) {
    EXPECT_EQ(forks, 0) << name << ": greedy ids must be identical";
  }
}

}  // namespace radixserve::model
