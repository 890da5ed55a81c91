#include "core/gguf/gguf_reader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>
#include <unordered_set>

namespace radixserve::gguf {
namespace {

constexpr uint32_t kMaxDims = 4;          // ggml's limit
constexpr int kMaxArrayNesting = 8;       // deeper nesting is refused rather than recursed into
constexpr uint64_t kMaxStringLen = 1ull << 30;

// Bounds-checked little-endian cursor over the file bytes; every failure names the offset.
class Cursor {
 public:
  Cursor(const uint8_t* data, uint64_t size, const std::string& name) : data_(data), size_(size), name_(name) {}

  uint64_t offset() const { return pos_; }
  uint64_t remaining() const { return size_ - pos_; }

  Status Error(const std::string& what) const {
    return Status::Corrupt(name_ + ": offset " + std::to_string(pos_) + ": " + what);
  }
  Status ErrorAt(uint64_t at, StatusCode code, const std::string& what) const {
    return Status(code, name_ + ": offset " + std::to_string(at) + ": " + what);
  }

  template <typename T>
  Status Read(T* out, const char* what) {
    if (remaining() < sizeof(T))
      return Error(std::string("truncated file: expected ") + std::to_string(sizeof(T)) + " bytes of " + what +
                   ", only " + std::to_string(remaining()) + " left");
    std::memcpy(out, data_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return Status::Ok();
  }

  Status ReadString(std::string* out, const char* what) {
    uint64_t len = 0;
    RS_RETURN_IF_ERROR(Read(&len, what));
    if (len > remaining() || len > kMaxStringLen)
      return Error(std::string("truncated file: ") + what + " of length " + std::to_string(len) + " but only " +
                   std::to_string(remaining()) + " bytes left");
    out->assign(reinterpret_cast<const char*>(data_ + pos_), len);
    pos_ += len;
    return Status::Ok();
  }

 private:
  const uint8_t* data_;
  uint64_t size_;
  uint64_t pos_ = 0;
  const std::string& name_;
};

// Smallest encoded size of one value of `t` (used to reject counts the file cannot hold).
uint64_t MinEncodedSize(ValueType t) {
  switch (t) {
    case ValueType::kUint8: case ValueType::kInt8: case ValueType::kBool: return 1;
    case ValueType::kUint16: case ValueType::kInt16: return 2;
    case ValueType::kUint32: case ValueType::kInt32: case ValueType::kFloat32: return 4;
    case ValueType::kUint64: case ValueType::kInt64: case ValueType::kFloat64: return 8;
    case ValueType::kString: return 8;
    case ValueType::kArray: return 12;
  }
  return 1;
}

bool IsKnownValueType(uint32_t t) { return t <= static_cast<uint32_t>(ValueType::kFloat64); }

Status ReadValue(Cursor& c, ValueType type, int depth, Value* out);

template <typename T>
Status ReadScalar(Cursor& c, Value* out, const char* what) {
  T v{};
  RS_RETURN_IF_ERROR(c.Read(&v, what));
  *out = v;
  return Status::Ok();
}

Status ReadArray(Cursor& c, int depth, Value* out) {
  if (depth >= kMaxArrayNesting)
    return c.Error("arrays nested deeper than " + std::to_string(kMaxArrayNesting) + " levels");
  uint32_t raw_type = 0;
  RS_RETURN_IF_ERROR(c.Read(&raw_type, "array element type"));
  if (!IsKnownValueType(raw_type))
    return c.Error("unknown array element type " + std::to_string(raw_type) + " (expected 0..12)");
  uint64_t count = 0;
  RS_RETURN_IF_ERROR(c.Read(&count, "array length"));
  auto elem = static_cast<ValueType>(raw_type);
  if (count > c.remaining() / MinEncodedSize(elem))
    return c.Error("array of " + std::to_string(count) + " " + std::string(ValueTypeName(elem)) +
                   " values cannot fit in the " + std::to_string(c.remaining()) + " bytes left");
  auto arr = std::make_shared<Array>();
  arr->elem_type = elem;
  arr->items.resize(count);
  for (uint64_t i = 0; i < count; ++i) RS_RETURN_IF_ERROR(ReadValue(c, elem, depth + 1, &arr->items[i]));
  *out = std::move(arr);
  return Status::Ok();
}

Status ReadValue(Cursor& c, ValueType type, int depth, Value* out) {
  switch (type) {
    case ValueType::kUint8: return ReadScalar<uint8_t>(c, out, "uint8 value");
    case ValueType::kInt8: return ReadScalar<int8_t>(c, out, "int8 value");
    case ValueType::kUint16: return ReadScalar<uint16_t>(c, out, "uint16 value");
    case ValueType::kInt16: return ReadScalar<int16_t>(c, out, "int16 value");
    case ValueType::kUint32: return ReadScalar<uint32_t>(c, out, "uint32 value");
    case ValueType::kInt32: return ReadScalar<int32_t>(c, out, "int32 value");
    case ValueType::kFloat32: return ReadScalar<float>(c, out, "float32 value");
    case ValueType::kUint64: return ReadScalar<uint64_t>(c, out, "uint64 value");
    case ValueType::kInt64: return ReadScalar<int64_t>(c, out, "int64 value");
    case ValueType::kFloat64: return ReadScalar<double>(c, out, "float64 value");
    case ValueType::kBool: {
      uint8_t b = 0;
      uint64_t at = c.offset();
      RS_RETURN_IF_ERROR(c.Read(&b, "bool value"));
      if (b > 1) return c.ErrorAt(at, StatusCode::kCorrupt, "bool value must be 0 or 1, got " + std::to_string(b));
      *out = (b == 1);
      return Status::Ok();
    }
    case ValueType::kString: {
      std::string s;
      RS_RETURN_IF_ERROR(c.ReadString(&s, "string value"));
      *out = std::move(s);
      return Status::Ok();
    }
    case ValueType::kArray: return ReadArray(c, depth, out);
  }
  return c.Error("unknown value type");
}

std::string KeyError(const std::string& file, std::string_view key, const std::string& what) {
  return file + ": metadata key '" + std::string(key) + "': " + what;
}

}  // namespace

Result<std::unique_ptr<GgufFile>> GgufFile::Open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT) return Status::NotFound(path + ": no such file");
    return Status::IOError(path + ": cannot open: " + std::strerror(err));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return Status::IOError(path + ": cannot stat: " + std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::InvalidArgument(path + ": not a regular file");
  }
  std::unique_ptr<GgufFile> f(new GgufFile());
  f->name_ = path;
  f->size_ = static_cast<uint64_t>(st.st_size);
  if (f->size_ > 0) {
    void* m = ::mmap(nullptr, f->size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      return Status::IOError(path + ": mmap failed: " + std::strerror(err));
    }
    f->mapping_ = m;
    f->base_ = static_cast<const uint8_t*>(m);
  }
  ::close(fd);
  RS_RETURN_IF_ERROR(f->ParseAll());
  return f;
}

Result<std::unique_ptr<GgufFile>> GgufFile::Parse(std::span<const uint8_t> bytes, std::string name) {
  std::unique_ptr<GgufFile> f(new GgufFile());
  f->name_ = std::move(name);
  f->base_ = bytes.data();
  f->size_ = bytes.size();
  RS_RETURN_IF_ERROR(f->ParseAll());
  return f;
}

GgufFile::~GgufFile() {
  if (mapping_) ::munmap(mapping_, size_);
}

Status GgufFile::ParseAll() {
  Cursor c(base_, size_, name_);
  uint32_t magic = 0;
  RS_RETURN_IF_ERROR(c.Read(&magic, "magic"));
  if (magic != kMagic) {
    char got[5] = {0, 0, 0, 0, 0};
    std::memcpy(got, &magic, 4);
    for (char& ch : got)
      if (ch && (ch < 32 || ch > 126)) ch = '?';
    return c.ErrorAt(0, StatusCode::kCorrupt, std::string("bad magic: expected \"GGUF\", got \"") + got + "\"");
  }
  RS_RETURN_IF_ERROR(c.Read(&version_, "version"));
  if (version_ != 2 && version_ != 3)
    return c.ErrorAt(4, StatusCode::kUnsupported,
                     "unsupported GGUF version " + std::to_string(version_) + " (supported: 2, 3)");
  uint64_t n_tensors = 0, n_kv = 0;
  RS_RETURN_IF_ERROR(c.Read(&n_tensors, "tensor count"));
  RS_RETURN_IF_ERROR(c.Read(&n_kv, "metadata count"));
  // Each key/value needs at least 8 (key length) + 4 (type) + 1 bytes; each tensor info 8+4+4+8.
  if (n_kv > c.remaining() / 13)
    return c.Error("metadata count " + std::to_string(n_kv) + " cannot fit in the " + std::to_string(c.remaining()) +
                   " bytes left");
  if (n_tensors > c.remaining() / 24)
    return c.Error("tensor count " + std::to_string(n_tensors) + " cannot fit in the " +
                   std::to_string(c.remaining()) + " bytes left");

  kvs_.reserve(n_kv);
  std::unordered_set<std::string> seen_keys;
  for (uint64_t i = 0; i < n_kv; ++i) {
    KeyValue kv;
    uint64_t key_at = c.offset();
    RS_RETURN_IF_ERROR(c.ReadString(&kv.key, "metadata key"));
    if (!seen_keys.insert(kv.key).second)
      return c.ErrorAt(key_at, StatusCode::kCorrupt, "duplicate metadata key '" + kv.key + "'");
    uint32_t raw_type = 0;
    RS_RETURN_IF_ERROR(c.Read(&raw_type, "metadata value type"));
    if (!IsKnownValueType(raw_type))
      return c.Error("metadata key '" + kv.key + "' has unknown value type " + std::to_string(raw_type) +
                     " (expected 0..12)");
    RS_RETURN_IF_ERROR(ReadValue(c, static_cast<ValueType>(raw_type), 0, &kv.value));
    kvs_.push_back(std::move(kv));
  }

  if (const Value* a = Find("general.alignment")) {
    const auto* u = std::get_if<uint32_t>(a);
    if (!u) return Status::Corrupt(KeyError(name_, "general.alignment", "expected uint32, got " +
                                                                            std::string(ValueTypeName(TypeOf(*a)))));
    if (*u == 0 || (*u & (*u - 1)) != 0)
      return Status::Corrupt(KeyError(name_, "general.alignment", "must be a power of two, got " + std::to_string(*u)));
    alignment_ = *u;
  }

  tensors_.reserve(n_tensors);
  std::unordered_set<std::string> seen_tensors;
  for (uint64_t i = 0; i < n_tensors; ++i) {
    TensorInfo t;
    uint64_t info_at = c.offset();
    RS_RETURN_IF_ERROR(c.ReadString(&t.name, "tensor name"));
    if (!seen_tensors.insert(t.name).second)
      return c.ErrorAt(info_at, StatusCode::kCorrupt, "duplicate tensor name '" + t.name + "'");
    uint32_t n_dims = 0;
    RS_RETURN_IF_ERROR(c.Read(&n_dims, "tensor dimension count"));
    if (n_dims == 0 || n_dims > kMaxDims)
      return c.Error("tensor '" + t.name + "' has " + std::to_string(n_dims) + " dimensions (expected 1.." +
                     std::to_string(kMaxDims) + ")");
    t.dims.resize(n_dims);
    uint64_t elements = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
      RS_RETURN_IF_ERROR(c.Read(&t.dims[d], "tensor dimension"));
      if (t.dims[d] == 0) return c.Error("tensor '" + t.name + "' has a zero dimension");
      if (elements > std::numeric_limits<uint64_t>::max() / t.dims[d] || elements * t.dims[d] > (1ull << 50))
        return c.Error("tensor '" + t.name + "' element count overflows");
      elements *= t.dims[d];
    }
    uint32_t raw_type = 0;
    uint64_t type_at = c.offset();
    RS_RETURN_IF_ERROR(c.Read(&raw_type, "tensor type"));
    t.type = static_cast<TensorType>(raw_type);
    const TensorTypeTraits* tr = GetTensorTypeTraits(t.type);
    if (!tr)
      return c.ErrorAt(type_at, StatusCode::kCorrupt,
                       "tensor '" + t.name + "' has unknown tensor type " + std::to_string(raw_type));
    if (t.dims[0] % tr->block_elems != 0)
      return c.ErrorAt(type_at, StatusCode::kCorrupt,
                       "tensor '" + t.name + "' row length " + std::to_string(t.dims[0]) +
                           " is not a multiple of the " + std::string(tr->name) + " block size " +
                           std::to_string(tr->block_elems));
    uint64_t off_at = c.offset();
    RS_RETURN_IF_ERROR(c.Read(&t.offset, "tensor data offset"));
    if (t.offset % alignment_ != 0)
      return c.ErrorAt(off_at, StatusCode::kCorrupt,
                       "tensor '" + t.name + "' data offset " + std::to_string(t.offset) + " is not a multiple of the alignment " +
                           std::to_string(alignment_));
    tensors_.push_back(std::move(t));
  }

  uint64_t end_of_infos = c.offset();
  data_offset_ = (end_of_infos + alignment_ - 1) / alignment_ * alignment_;
  uint64_t data_size = size_ > data_offset_ ? size_ - data_offset_ : 0;
  for (const TensorInfo& t : tensors_) {
    uint64_t nbytes = t.num_bytes();
    if (t.offset > data_size || nbytes > data_size - t.offset)
      return Status::Corrupt(name_ + ": offset " + std::to_string(data_offset_ + t.offset) + ": tensor '" + t.name +
                             "' data (" + std::to_string(nbytes) + " bytes at data offset " + std::to_string(t.offset) +
                             ") runs past the end of the file (data section is " + std::to_string(data_size) +
                             " bytes)");
  }
  return Status::Ok();
}

const Value* GgufFile::Find(std::string_view key) const {
  for (const auto& kv : kvs_)
    if (kv.key == key) return &kv.value;
  return nullptr;
}

const TensorInfo* GgufFile::FindTensor(std::string_view name) const {
  for (const auto& t : tensors_)
    if (t.name == name) return &t;
  return nullptr;
}

namespace {

bool AsInt(const Value& v, int64_t* out) {
  return std::visit(
      [out](const auto& x) -> bool {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, uint64_t>) {
          if (x > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return false;
          *out = static_cast<int64_t>(x);
          return true;
        } else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
          *out = static_cast<int64_t>(x);
          return true;
        } else {
          return false;
        }
      },
      v);
}

bool AsFloat(const Value& v, double* out) {
  if (const auto* f = std::get_if<float>(&v)) { *out = *f; return true; }
  if (const auto* d = std::get_if<double>(&v)) { *out = *d; return true; }
  int64_t i = 0;
  if (AsInt(v, &i)) { *out = static_cast<double>(i); return true; }
  return false;
}

std::string TypeMismatch(const Value& v, const char* expected) {
  std::string got(ValueTypeName(TypeOf(v)));
  if (const auto* a = std::get_if<std::shared_ptr<Array>>(&v)) got += " of " + std::string(ValueTypeName((*a)->elem_type));
  return std::string("expected ") + expected + ", got " + got;
}

}  // namespace

Result<std::string> GgufFile::GetString(std::string_view key) const {
  const Value* v = Find(key);
  if (!v) return Status::NotFound(KeyError(name_, key, "not present"));
  if (const auto* s = std::get_if<std::string>(v)) return *s;
  return Status::InvalidArgument(KeyError(name_, key, TypeMismatch(*v, "string")));
}

Result<int64_t> GgufFile::GetInt(std::string_view key) const {
  const Value* v = Find(key);
  if (!v) return Status::NotFound(KeyError(name_, key, "not present"));
  int64_t i = 0;
  if (AsInt(*v, &i)) return i;
  return Status::InvalidArgument(KeyError(name_, key, TypeMismatch(*v, "an integer")));
}

Result<double> GgufFile::GetFloat(std::string_view key) const {
  const Value* v = Find(key);
  if (!v) return Status::NotFound(KeyError(name_, key, "not present"));
  double d = 0;
  if (AsFloat(*v, &d)) return d;
  return Status::InvalidArgument(KeyError(name_, key, TypeMismatch(*v, "a number")));
}

Result<bool> GgufFile::GetBool(std::string_view key) const {
  const Value* v = Find(key);
  if (!v) return Status::NotFound(KeyError(name_, key, "not present"));
  if (const auto* b = std::get_if<bool>(v)) return *b;
  return Status::InvalidArgument(KeyError(name_, key, TypeMismatch(*v, "bool")));
}

Result<int64_t> GgufFile::GetIntOr(std::string_view key, int64_t fallback) const {
  return Has(key) ? GetInt(key) : Result<int64_t>(fallback);
}
Result<double> GgufFile::GetFloatOr(std::string_view key, double fallback) const {
  return Has(key) ? GetFloat(key) : Result<double>(fallback);
}
Result<bool> GgufFile::GetBoolOr(std::string_view key, bool fallback) const {
  return Has(key) ? GetBool(key) : Result<bool>(fallback);
}

namespace {
Result<const Array*> FindArray(const GgufFile& f, std::string_view key) {
  const Value* v = f.Find(key);
  if (!v) return Status::NotFound(KeyError(f.name(), key, "not present"));
  const auto* a = std::get_if<std::shared_ptr<Array>>(v);
  if (!a) return Status::InvalidArgument(KeyError(f.name(), key, TypeMismatch(*v, "array")));
  return a->get();
}
}  // namespace

Result<std::vector<std::string>> GgufFile::GetStringArray(std::string_view key) const {
  RS_ASSIGN_OR_RETURN(const Array* a, FindArray(*this, key));
  if (a->elem_type != ValueType::kString)
    return Status::InvalidArgument(KeyError(name_, key, "expected array of string, got array of " +
                                                            std::string(ValueTypeName(a->elem_type))));
  std::vector<std::string> out;
  out.reserve(a->items.size());
  for (const auto& item : a->items) out.push_back(std::get<std::string>(item));
  return out;
}

Result<std::vector<float>> GgufFile::GetFloatArray(std::string_view key) const {
  RS_ASSIGN_OR_RETURN(const Array* a, FindArray(*this, key));
  std::vector<float> out;
  out.reserve(a->items.size());
  for (const auto& item : a->items) {
    double d = 0;
    if (!AsFloat(item, &d))
      return Status::InvalidArgument(KeyError(name_, key, "expected array of numbers, got array of " +
                                                              std::string(ValueTypeName(a->elem_type))));
    out.push_back(static_cast<float>(d));
  }
  return out;
}

Result<std::vector<int64_t>> GgufFile::GetIntArray(std::string_view key) const {
  RS_ASSIGN_OR_RETURN(const Array* a, FindArray(*this, key));
  std::vector<int64_t> out;
  out.reserve(a->items.size());
  for (const auto& item : a->items) {
    int64_t i = 0;
    if (!AsInt(item, &i))
      return Status::InvalidArgument(KeyError(name_, key, "expected array of integers, got array of " +
                                                              std::string(ValueTypeName(a->elem_type))));
    out.push_back(i);
  }
  return out;
}

}  // namespace radixserve::gguf
