// GgufFile: reads a GGUF v2/v3 file (metadata, tensor infos, memory-mapped data).
//
// Every field is validated while parsing; a corrupt file gives a Status that
// names the file, the byte offset and what was expected, never a crash.
// A GgufFile is immutable after Open/Parse and safe to read from many threads.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/gguf/gguf_types.h"
#include "core/util/status.h"

namespace radixserve::gguf {

class GgufFile {
 public:
  // Memory-maps `path` and parses it.
  static Result<std::unique_ptr<GgufFile>> Open(const std::string& path);
  // Parses bytes owned by the caller, which must outlive the result. `name` appears in errors.
  static Result<std::unique_ptr<GgufFile>> Parse(std::span<const uint8_t> bytes, std::string name);

  ~GgufFile();
  GgufFile(const GgufFile&) = delete;
  GgufFile& operator=(const GgufFile&) = delete;

  const std::string& name() const { return name_; }
  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }  // file offset of the tensor data section

  // Metadata in file order.
  const std::vector<KeyValue>& metadata() const { return kvs_; }
  const Value* Find(std::string_view key) const;
  bool Has(std::string_view key) const { return Find(key) != nullptr; }

  // Typed getters: NotFound when absent, InvalidArgument when of another type.
  // GetInt accepts every integer type; GetFloat accepts float32/float64 and integers.
  Result<std::string> GetString(std::string_view key) const;
  Result<int64_t> GetInt(std::string_view key) const;
  Result<double> GetFloat(std::string_view key) const;
  Result<bool> GetBool(std::string_view key) const;
  Result<std::vector<std::string>> GetStringArray(std::string_view key) const;
  Result<std::vector<float>> GetFloatArray(std::string_view key) const;
  Result<std::vector<int64_t>> GetIntArray(std::string_view key) const;
  // Defaults for optional keys (still an error when present with a wrong type).
  Result<int64_t> GetIntOr(std::string_view key, int64_t fallback) const;
  Result<double> GetFloatOr(std::string_view key, double fallback) const;
  Result<bool> GetBoolOr(std::string_view key, bool fallback) const;

  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const TensorInfo* FindTensor(std::string_view name) const;
  // Pointer to a tensor's bytes (in the mapping); valid while this GgufFile lives.
  const uint8_t* TensorData(const TensorInfo& t) const { return base_ + data_offset_ + t.offset; }

 private:
  GgufFile() = default;
  Status ParseAll();

  std::string name_;
  const uint8_t* base_ = nullptr;
  uint64_t size_ = 0;
  void* mapping_ = nullptr;  // owned mmap, or null when parsing caller bytes
  uint32_t version_ = 0;
  uint64_t alignment_ = kDefaultAlignment;
  uint64_t data_offset_ = 0;
  std::vector<KeyValue> kvs_;
  std::vector<TensorInfo> tensors_;
};

}  // namespace radixserve::gguf
