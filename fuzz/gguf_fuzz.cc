// Fuzz target: arbitrary bytes → GgufFile::Parse, then every key through every typed getter
// and every tensor's bytes read (ASan sees any read outside the input).
#include <cstddef>
#include <cstdint>
#include <span>

#include "core/gguf/gguf_reader.h"
#include "fuzz/fuzz_check.h"

using radixserve::gguf::GgufFile;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto parsed = GgufFile::Parse(std::span<const uint8_t>(data, size), "fuzz.gguf");
  if (!parsed.ok()) return 0;
  const GgufFile& f = **parsed;
  // data_offset may lie past the end when there are no tensor bytes (the padding is optional).
  for (const auto& kv : f.metadata()) {
    FUZZ_CHECK(f.Find(kv.key) != nullptr);
    (void)f.GetString(kv.key);
    (void)f.GetInt(kv.key);
    (void)f.GetFloat(kv.key);
    (void)f.GetBool(kv.key);
    (void)f.GetStringArray(kv.key);
    (void)f.GetFloatArray(kv.key);
    (void)f.GetIntArray(kv.key);
    (void)f.GetIntOr(kv.key, 0);
    (void)f.GetFloatOr(kv.key, 0.0);
    (void)f.GetBoolOr(kv.key, false);
  }
  volatile uint8_t sink = 0;
  for (const auto& t : f.tensors()) {
    FUZZ_CHECK(f.FindTensor(t.name) != nullptr);
    uint64_t bytes = t.num_bytes();
    (void)t.num_elements();
    if (bytes == 0) continue;
    // A parsed tensor must lie inside the input: read its first and last byte.
    FUZZ_CHECK(f.data_offset() + t.offset + bytes <= size);
    const uint8_t* p = f.TensorData(t);
    sink = sink ^ p[0] ^ p[bytes - 1];
  }
  return 0;
}
