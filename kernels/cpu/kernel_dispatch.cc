// The kernel functions everyone calls: each forwards to the active kernel set (kernel_set.h).
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "kernels/cpu/attention.h"
#include "kernels/cpu/convert.h"
#include "kernels/cpu/gemm_float.h"
#include "kernels/cpu/gemm_int8.h"
#include "kernels/cpu/gemm_int8_amx.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/kernel_set.h"
#include "kernels/cpu/matmul_stream.h"
#include "kernels/cpu/q8_0.h"
#include "kernels/cpu/quant_blocks.h"
#include "kernels/cpu/vec_ops.h"

// The sets kernels/cpu/CMakeLists.txt builds for this target.
extern "C" const radixserve::kernels::KernelTable* radixserve_kernels_scalar();
#if defined(__x86_64__)
extern "C" const radixserve::kernels::KernelTable* radixserve_kernels_avx2();
extern "C" const radixserve::kernels::KernelTable* radixserve_kernels_avx512();
extern "C" const radixserve::kernels::KernelTable* radixserve_kernels_avx512_vnni();
#endif


namespace radixserve::kernels {
namespace {

struct KernelSet {
  const KernelTable* table;
  bool (*runs)(const CpuFeatures&);
};

#if defined(__x86_64__)
// The VNNI set with its float GEMM compiled for AVX-512 BF16.
const KernelTable* Bf16Table() {
  static const KernelTable table = [] {
    KernelTable t = *radixserve_kernels_avx512_vnni();
    t.name = "avx512-bf16";
    t.gemm_float_supports = &radixserve_gemm_float_supports_bf16;
    t.gemm_float_pack_x = &radixserve_gemm_float_pack_x_bf16;
    t.gemm_float_rows = &radixserve_gemm_float_rows_bf16;
    return t;
  }();
  return &table;
}

// The BF16 set with its int8 GEMM on AMX tiles (every CPU with AMX has AVX-512 BF16).
const KernelTable* AmxTable() {
  static const KernelTable table = [] {
    KernelTable t = *Bf16Table();
    t.name = "avx512-amx";
    t.gemm_int8_rows = &radixserve_gemm_int8_rows_amx;
    return t;
  }();
  return &table;
}

#endif  // __x86_64__

// Best last.
const KernelSet* Sets(size_t* n) {
  static const KernelSet sets[] = {
      {radixserve_kernels_scalar(), [](const CpuFeatures&) { return true; }},
#if defined(__x86_64__)
      {radixserve_kernels_avx2(), [](const CpuFeatures& f) { return f.avx2 && f.fma && f.f16c; }},
      {radixserve_kernels_avx512(), [](const CpuFeatures& f) { return f.avx2 && f.fma && f.f16c && f.avx512(); }},
      {radixserve_kernels_avx512_vnni(),
       [](const CpuFeatures& f) { return f.avx2 && f.fma && f.f16c && f.avx512() && f.avx512_vnni; }},
      {Bf16Table(),
       [](const CpuFeatures& f) {
         return f.avx2 && f.fma && f.f16c && f.avx512() && f.avx512_vnni && f.avx512_bf16;
       }},
      {AmxTable(),
       [](const CpuFeatures& f) {
         return f.avx2 && f.fma && f.f16c && f.avx512() && f.avx512_vnni && f.avx512_bf16 && AmxTilesPermitted();
       }},
#endif
  };
  *n = sizeof(sets) / sizeof(sets[0]);
  return sets;
}

std::atomic<const KernelTable*> g_active{nullptr};
std::once_flag g_choose;

const KernelTable* Find(std::string_view name, Status* status) {
  size_t n = 0;
  const KernelSet* sets = Sets(&n);
  for (size_t i = 0; i < n; ++i) {
    if (name != sets[i].table->name) continue;
    if (!sets[i].runs(DetectCpu())) {
      *status = Status::Unsupported("kernel set '" + std::string(name) + "' needs instructions this CPU lacks");
      return nullptr;
    }
    *status = Status::Ok();
    return sets[i].table;
  }
  std::string known;
  for (size_t i = 0; i < n; ++i) known += std::string(i ? ", " : "") + sets[i].table->name;
  *status = Status::InvalidArgument("unknown kernel set '" + std::string(name) + "' (" + known + ")");
  return nullptr;
}

void Choose() {
  size_t n = 0;
  const KernelSet* sets = Sets(&n);
  const KernelTable* best = sets[0].table;
  for (size_t i = 0; i < n; ++i)
    if (sets[i].runs(DetectCpu())) best = sets[i].table;
  if (const char* want = std::getenv("RADIXSERVE_KERNELS"); want && *want) {
    Status s;
    if (const KernelTable* t = Find(want, &s)) {
      best = t;
    } else {
      std::fprintf(stderr, "radixserve: RADIXSERVE_KERNELS=%s: %s; using %s\n", want, s.message().c_str(), best->name);
    }
  }
  g_active.store(best, std::memory_order_release);
}

inline const KernelTable& K() {
  const KernelTable* t = g_active.load(std::memory_order_acquire);
  if (t == nullptr) [[unlikely]] {
    std::call_once(g_choose, Choose);
    t = g_active.load(std::memory_order_acquire);
  }
  return *t;
}

}  // namespace

std::vector<std::string> KernelSetNames() {
  size_t n = 0;
  const KernelSet* sets = Sets(&n);
  std::vector<std::string> names;
  for (size_t i = 0; i < n; ++i) names.push_back(sets[i].table->name);
  return names;
}

std::vector<std::string> RunnableKernelSets() {
  size_t n = 0;
  const KernelSet* sets = Sets(&n);
  std::vector<std::string> names;
  for (size_t i = 0; i < n; ++i)
    if (sets[i].runs(DetectCpu())) names.push_back(sets[i].table->name);
  return names;
}

const char* ActiveKernelSet() { return K().name; }

Status UseKernelSet(std::string_view name) {
  K();  // the first choice is made (and RADIXSERVE_KERNELS read) before this one replaces it
  Status s;
  const KernelTable* t = Find(name, &s);
  if (t != nullptr) g_active.store(t, std::memory_order_release);
  return s;
}

float DotF32(const float* a, const float* b, int64_t n) { return K().dot_f32(a, b, n); }
float DotF16F32(const uint16_t* w, const float* x, int64_t n) { return K().dot_f16_f32(w, x, n); }
float DotBf16F32(const uint16_t* w, const float* x, int64_t n) { return K().dot_bf16_f32(w, x, n); }
void Axpy(float a, const float* x, float* y, int64_t n) { K().axpy(a, x, y, n); }
void RmsNorm(const float* x, const float* w, float eps, float* y, int64_t n) { K().rms_norm(x, w, eps, y, n); }
void SiluMul(const float* gate, const float* up, float* out, int64_t n) { K().silu_mul(gate, up, out, n); }
void Softmax(float* x, int64_t n) { K().softmax(x, n); }
void SoftCap(float* x, int64_t n, float cap) { K().soft_cap(x, n, cap); }
void RopeNorm(float* x, int num_heads, int head_dim, int rot_dim, const float* cos_sin) {
  K().rope_norm(x, num_heads, head_dim, rot_dim, cos_sin);
}
void RopeNeox(float* x, int num_heads, int head_dim, int rot_dim, const float* cos_sin) {
  K().rope_neox(x, num_heads, head_dim, rot_dim, cos_sin);
}
void GeluMul(const float* gate, const float* up, float* out, int64_t n) { K().gelu_mul(gate, up, out, n); }
void QuantizeRowQ8_0(const float* x, BlockQ8_0* y, int64_t n) { K().quantize_row_q8_0(x, y, n); }
void QuantizeRowQ8Shared(const float* x, BlockQ8_0* y, int64_t n, int group) {
  K().quantize_row_q8_shared(x, y, n, group);
}
void DequantizeRowQ8_0(const BlockQ8_0* x, float* y, int64_t n) { K().dequantize_row_q8_0(x, y, n); }
float DotQ8_0(const BlockQ8_0* a, const BlockQ8_0* b, int64_t n) { return K().dot_q8_0(a, b, n); }
const float* KvRowF32(const void* base, const KvLayerView& kv, int kv_head, int32_t slot, int head_dim, float* buf) {
  return K().kv_row_f32(base, kv, kv_head, slot, head_dim, buf);
}
void AttendSlots(const float* q, int group, const KvLayerView& kv, int kv_head, const int32_t* slots, int64_t n_keys,
                 int head_dim, float scale, float* scores, float* out, float softcap) {
  K().attend_slots(q, group, kv, kv_head, slots, n_keys, head_dim, scale, scores, out, softcap);
}
void ConvertF16ToF32(const uint16_t* src, float* dst, int64_t n) { K().convert_f16_to_f32(src, dst, n); }
void ConvertF32ToF16(const float* src, uint16_t* dst, int64_t n) { K().convert_f32_to_f16(src, dst, n); }
void ConvertBf16ToF32(const uint16_t* src, float* dst, int64_t n) { K().convert_bf16_to_f32(src, dst, n); }
void ConvertF32ToBf16(const float* src, uint16_t* dst, int64_t n) { K().convert_f32_to_bf16(src, dst, n); }
bool GemmInt8Supports(WeightType type) { return K().gemm_int8_supports(type); }
void GemmInt8Rows(const WeightView& w, const QuantizedBatch& x, int64_t r0, int64_t r1, float* y, int64_t ldy,
                  void* pack) {
  K().gemm_int8_rows(w, x, r0, r1, y, ldy, pack);
}
bool GemmFloatSupports(WeightType type) { return K().gemm_float_supports(type); }
bool GemmFloatRoundsActivationsToBf16() {
#if defined(__x86_64__)
  return K().gemm_float_rows == &radixserve_gemm_float_rows_bf16;
#else
  return false;
#endif
}
void GemmFloatPackX(WeightType type, const float* x, int64_t n, int64_t cols, void* packed, int64_t b0, int64_t b1) {
  K().gemm_float_pack_x(type, x, n, cols, packed, b0, b1);
}
void GemmFloatRows(const WeightView& w, const void* packed, int64_t n, int64_t r0, int64_t r1, float* y, int64_t ldy,
                   void* panel) {
  K().gemm_float_rows(w, packed, n, r0, r1, y, ldy, panel);
}
void DequantizeBlocks(WeightType type, const void* src, float* dst, int64_t n) {
  K().dequantize_blocks(type, src, dst, n);
}

namespace internal {
void StreamRows(const WeightView& w, const float* x, const QuantizedActivations& xq, int64_t n, int64_t r0, int64_t r1,
                float* y) {
  K().stream_rows(w, x, xq, n, r0, r1, y);
}
}  // namespace internal

}  // namespace radixserve::kernels
