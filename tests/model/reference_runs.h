// Test helper: the runs of ../shared/models/ref (llama.cpp's logits for its own model files; read
// ref/README.md) and the distance of an engine's logits from them, shared by the CPU's reference
// test and the CUDA one. `ref_dir` ends in "/models/ref/".
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace radixserve::model {

// The manifest (an empty object when the directory has none: the tests then fail on it).
inline nlohmann::json ReadRefManifest(const std::string& ref_dir) {
  std::ifstream in(ref_dir + "manifest.json");
  return in.good() ? nlohmann::json::parse(in) : nlohmann::json::object();
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
};

}  // namespace radixserve::model
