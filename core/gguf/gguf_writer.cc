#include "core/gguf/gguf_writer.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace radixserve::gguf {
namespace {

class ByteSink {
 public:
  explicit ByteSink(std::vector<uint8_t>* out) : out_(out) {}
  template <typename T>
  void Put(T v) {
    const auto* p = reinterpret_cast<const uint8_t*>(&v);
    out_->insert(out_->end(), p, p + sizeof(T));
  }
  void PutString(const std::string& s) {
    Put<uint64_t>(s.size());
    out_->insert(out_->end(), s.begin(), s.end());
  }
  void PadTo(uint64_t alignment) {
    while (out_->size() % alignment) out_->push_back(0);
  }

 private:
  std::vector<uint8_t>* out_;
};

void PutValue(ByteSink& sink, const Value& v) {
  std::visit(
      [&sink](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::string>) {
          sink.PutString(x);
        } else if constexpr (std::is_same_v<T, std::shared_ptr<Array>>) {
          sink.Put<uint32_t>(static_cast<uint32_t>(x->elem_type));
          sink.Put<uint64_t>(x->items.size());
          for (const auto& item : x->items) PutValue(sink, item);
        } else if constexpr (std::is_same_v<T, bool>) {
          sink.Put<uint8_t>(x ? 1 : 0);
        } else {
          sink.Put<T>(x);
        }
      },
      v);
}

template <typename T>
std::shared_ptr<Array> MakeArray(ValueType t, const std::vector<T>& v) {
  auto a = std::make_shared<Array>();
  a->elem_type = t;
  a->items.reserve(v.size());
  for (const auto& x : v) a->items.emplace_back(x);
  return a;
}

}  // namespace

void GgufWriter::Set(const std::string& key, Value value) {
  for (auto& kv : kvs_) {
    if (kv.key == key) {
      kv.value = std::move(value);
      return;
    }
  }
  kvs_.push_back({key, std::move(value)});
}

void GgufWriter::SetStringArray(const std::string& key, const std::vector<std::string>& v) {
  Set(key, MakeArray(ValueType::kString, v));
}
void GgufWriter::SetF32Array(const std::string& key, const std::vector<float>& v) {
  Set(key, MakeArray(ValueType::kFloat32, v));
}
void GgufWriter::SetI32Array(const std::string& key, const std::vector<int32_t>& v) {
  Set(key, MakeArray(ValueType::kInt32, v));
}

Status GgufWriter::AddTensor(const std::string& name, std::vector<uint64_t> dims, TensorType type,
                             std::vector<uint8_t> bytes) {
  for (const auto& t : tensors_)
    if (t.name == name) return Status::InvalidArgument("tensor '" + name + "' added twice");
  const TensorTypeTraits* tr = GetTensorTypeTraits(type);
  if (!tr) return Status::InvalidArgument("tensor '" + name + "': unknown type " + TensorTypeName(type));
  if (dims.empty() || dims.size() > 4) return Status::InvalidArgument("tensor '" + name + "': needs 1..4 dims");
  if (dims[0] % tr->block_elems != 0)
    return Status::InvalidArgument("tensor '" + name + "': row length not a multiple of the block size");
  TensorInfo t;
  t.name = name;
  t.dims = std::move(dims);
  t.type = type;
  if (bytes.size() != t.num_bytes())
    return Status::InvalidArgument("tensor '" + name + "': expected " + std::to_string(t.num_bytes()) + " bytes, got " +
                                   std::to_string(bytes.size()));
  tensors_.push_back(std::move(t));
  data_.push_back(std::move(bytes));
  return Status::Ok();
}

Result<uint64_t> GgufWriter::Alignment() const {
  uint64_t alignment = kDefaultAlignment;
  for (const auto& kv : kvs_) {
    if (kv.key != "general.alignment") continue;
    const auto* u = std::get_if<uint32_t>(&kv.value);
    if (!u || *u == 0 || (*u & (*u - 1)) != 0)
      return Status::InvalidArgument("general.alignment must be a uint32 power of two");
    alignment = *u;
  }
  return alignment;
}

Result<std::vector<uint8_t>> GgufWriter::SerializeHeader() const {
  RS_ASSIGN_OR_RETURN(uint64_t alignment, Alignment());
  std::vector<uint8_t> out;
  ByteSink sink(&out);
  sink.Put<uint32_t>(kMagic);
  sink.Put<uint32_t>(version_);
  sink.Put<uint64_t>(tensors_.size());
  sink.Put<uint64_t>(kvs_.size());
  for (const auto& kv : kvs_) {
    sink.PutString(kv.key);
    sink.Put<uint32_t>(static_cast<uint32_t>(TypeOf(kv.value)));
    PutValue(sink, kv.value);
  }
  uint64_t offset = 0;
  for (const auto& t : tensors_) {
    sink.PutString(t.name);
    sink.Put<uint32_t>(static_cast<uint32_t>(t.dims.size()));
    for (uint64_t d : t.dims) sink.Put<uint64_t>(d);
    sink.Put<uint32_t>(static_cast<uint32_t>(t.type));
    sink.Put<uint64_t>(offset);
    offset += (t.num_bytes() + alignment - 1) / alignment * alignment;
  }
  sink.PadTo(alignment);
  return out;
}

Result<std::vector<uint8_t>> GgufWriter::Serialize() const {
  RS_ASSIGN_OR_RETURN(uint64_t alignment, Alignment());
  RS_ASSIGN_OR_RETURN(std::vector<uint8_t> out, SerializeHeader());
  ByteSink sink(&out);
  for (const auto& bytes : data_) {
    out.insert(out.end(), bytes.begin(), bytes.end());
    sink.PadTo(alignment);
  }
  return out;
}

Status GgufWriter::WriteFile(const std::string& path) const {
  RS_ASSIGN_OR_RETURN(uint64_t alignment, Alignment());
  RS_ASSIGN_OR_RETURN(std::vector<uint8_t> header, SerializeHeader());
  // Write to a temporary name and rename, so a reader never sees a half-written model.
  std::string tmp = path + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) return Status::IOError(path + ": cannot create: " + std::strerror(errno));
  // Tensors are streamed after the header rather than copied into one buffer (models can be large).
  static const uint8_t kZeros[256] = {};
  bool ok = std::fwrite(header.data(), 1, header.size(), f) == header.size();
  for (const auto& bytes : data_) {
    if (!ok) break;
    ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
    uint64_t pad = (alignment - bytes.size() % alignment) % alignment;
    while (ok && pad > 0) {
      uint64_t n = pad < sizeof(kZeros) ? pad : sizeof(kZeros);
      ok = std::fwrite(kZeros, 1, n, f) == n;
      pad -= n;
    }
  }
  ok = ok && std::fflush(f) == 0;
  ok = (std::fclose(f) == 0) && ok;
  if (!ok) {
    std::remove(tmp.c_str());
    return Status::IOError(path + ": write failed");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return Status::IOError(path + ": rename failed: " + std::strerror(errno));
  }
  return Status::Ok();
}

}  // namespace radixserve::gguf
