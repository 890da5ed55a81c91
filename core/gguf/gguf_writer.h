// GgufWriter: builds a GGUF v3 (or v2) file from metadata and tensors.
// Used by the model generator and by tests. Not thread-safe; one writer per file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/gguf/gguf_types.h"
#include "core/util/status.h"

namespace radixserve::gguf {

class GgufWriter {
 public:
  explicit GgufWriter(uint32_t version = 3) : version_(version) {}

  // Sets (or replaces) a metadata value; keys keep first-insertion order.
  void Set(const std::string& key, Value value);
  void SetString(const std::string& key, std::string v) { Set(key, Value(std::move(v))); }
  void SetU32(const std::string& key, uint32_t v) { Set(key, Value(v)); }
  void SetI32(const std::string& key, int32_t v) { Set(key, Value(v)); }
  void SetF32(const std::string& key, float v) { Set(key, Value(v)); }
  void SetBool(const std::string& key, bool v) { Set(key, Value(v)); }
  void SetStringArray(const std::string& key, const std::vector<std::string>& v);
  void SetF32Array(const std::string& key, const std::vector<float>& v);
  void SetI32Array(const std::string& key, const std::vector<int32_t>& v);

  // Adds a tensor; `bytes` must hold exactly the type's size for `dims` (copied).
  Status AddTensor(const std::string& name, std::vector<uint64_t> dims, TensorType type,
                   std::vector<uint8_t> bytes);

  // Serialises everything (alignment from general.alignment or 32).
  Result<std::vector<uint8_t>> Serialize() const;
  Status WriteFile(const std::string& path) const;

 private:
  Result<uint64_t> Alignment() const;
  Result<std::vector<uint8_t>> SerializeHeader() const;  // up to the (aligned) start of tensor data

  uint32_t version_;
  std::vector<KeyValue> kvs_;
  std::vector<TensorInfo> tensors_;
  std::vector<std::vector<uint8_t>> data_;
};

}  // namespace radixserve::gguf
