// Fixed-layout, relocatable messages with trailing arrays.
//
// Every hot-path message is a trivially copyable struct that starts with a
// MessageHeader and refers to its variable-length parts through ArrayRefs:
// (offset from the start of the message, element count). Nothing holds a
// pointer, so a message can live in a shared-memory chunk mapped at any
// address in any process. A reader validates the header and every ArrayRef
// against the bytes it actually received before touching an array.
// All functions here are noexcept and thread-compatible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>

#include "core/util/status.h"

namespace radixserve::transport {

inline constexpr uint32_t kMessageMagic = 0x47534D52;  // "RMSG"

enum class MessageKind : uint16_t {
  kInvalid = 0,
  kTokenizedRequest = 1,
  kAbortRequest = 2,
  kForwardBatch = 3,
  kForwardResult = 4,
  kBatchTokenIdOut = 5,
  kBatchStrOut = 6,
  kControl = 7,  // a serialized Protobuf control message follows the header
  kNodeStatus = 8,
  kCacheEvents = 9,
  kActivations = 10,
  kTest = 100,
};
const char* MessageKindName(MessageKind kind) noexcept;

struct MessageHeader {
  uint32_t magic;
  uint16_t kind;            // MessageKind
  uint16_t layout_version;  // bumped whenever the struct of that kind changes
  uint32_t fixed_size;      // sizeof the message struct, header included
  uint32_t total_size;      // fixed part plus every trailing array
};
static_assert(sizeof(MessageHeader) == 16);

// A trailing array: `count` elements starting `offset` bytes after the message start.
struct ArrayRef {
  uint32_t offset;
  uint32_t count;
};

// Every message struct declares: static constexpr MessageKind kKind; static constexpr uint16_t kLayoutVersion;
template <typename M>
concept Message = std::is_trivially_copyable_v<M> && std::is_standard_layout_v<M> && requires {
  { M::kKind } -> std::convertible_to<MessageKind>;
  { M::kLayoutVersion } -> std::convertible_to<uint16_t>;
};

inline constexpr size_t kArrayAlignment = 8;
constexpr size_t AlignUp(size_t n) { return (n + kArrayAlignment - 1) / kArrayAlignment * kArrayAlignment; }

// Size of a message of type M whose arrays have these byte sizes (each padded to 8).
template <Message M>
constexpr size_t MessageSize(std::initializer_list<size_t> array_bytes) {
  size_t n = AlignUp(sizeof(M));
  for (size_t b : array_bytes) n += AlignUp(b);
  return n;
}

// Checks the header of `bytes` (received size `size`) against what M expects.
template <Message M>
Status ValidateHeader(const void* bytes, size_t size) noexcept {
  if (size < sizeof(M))
    return Status::Corrupt(std::string("message of ") + std::to_string(size) + " bytes is shorter than " +
                           MessageKindName(M::kKind) + " (" + std::to_string(sizeof(M)) + " bytes)");
  MessageHeader h;
  std::memcpy(&h, bytes, sizeof(h));
  if (h.magic != kMessageMagic) return Status::Corrupt("bad message magic " + std::to_string(h.magic));
  if (h.kind != static_cast<uint16_t>(M::kKind))
    return Status::Corrupt(std::string("expected a ") + MessageKindName(M::kKind) + " message, got kind " +
                           std::to_string(h.kind));
  if (h.layout_version != M::kLayoutVersion)
    return Status::Corrupt(std::string(MessageKindName(M::kKind)) + " layout version " +
                           std::to_string(h.layout_version) + ", this build speaks " +
                           std::to_string(M::kLayoutVersion));
  if (h.fixed_size != sizeof(M))
    return Status::Corrupt(std::string(MessageKindName(M::kKind)) + " fixed size " + std::to_string(h.fixed_size) +
                           ", expected " + std::to_string(sizeof(M)));
  if (h.total_size < sizeof(M) || h.total_size > size)
    return Status::Corrupt(std::string(MessageKindName(M::kKind)) + " claims " + std::to_string(h.total_size) +
                           " bytes but " + std::to_string(size) + " were received");
  return Status::Ok();
}

// Checks one trailing array of a message whose header was validated.
template <typename E>
Status ValidateArray(const void* msg, const ArrayRef& ref, uint32_t max_count, const char* field) noexcept {
  static_assert(std::is_trivially_copyable_v<E>);
  MessageHeader h;
  std::memcpy(&h, msg, sizeof(h));
  if (ref.count > max_count)
    return Status::Corrupt(std::string(field) + ": " + std::to_string(ref.count) + " elements, limit " +
                           std::to_string(max_count));
  if (ref.count == 0) return Status::Ok();
  uint64_t end = uint64_t(ref.offset) + uint64_t(ref.count) * sizeof(E);
  if (ref.offset < h.fixed_size || end > h.total_size || ref.offset % alignof(E) != 0)
    return Status::Corrupt(std::string(field) + ": array [" + std::to_string(ref.offset) + ", " +
                           std::to_string(end) + ") lies outside the message body [" + std::to_string(h.fixed_size) +
                           ", " + std::to_string(h.total_size) + ")");
  return Status::Ok();
}

// The elements of a validated array.
template <typename E, typename M>
std::span<const E> ArrayOf(const M* msg, const ArrayRef& ref) noexcept {
  if (ref.count == 0) return {};
  return {reinterpret_cast<const E*>(reinterpret_cast<const uint8_t*>(msg) + ref.offset), ref.count};
}

// Writes a message of type M into a buffer of `capacity` bytes (a loaned chunk):
// the fixed part first, then arrays appended in order. Never allocates.
template <Message M>
class MessageWriter {
 public:
  MessageWriter(void* buffer, size_t capacity) noexcept
      : base_(static_cast<uint8_t*>(buffer)), capacity_(capacity), used_(AlignUp(sizeof(M))) {
    std::memset(base_, 0, sizeof(M));
    MessageHeader h{kMessageMagic, static_cast<uint16_t>(M::kKind), M::kLayoutVersion, sizeof(M),
                    static_cast<uint32_t>(used_)};
    std::memcpy(base_, &h, sizeof(h));
  }
  M* msg() noexcept { return reinterpret_cast<M*>(base_); }

  // Appends `count` elements, returns a span to fill, and sets `ref`; empty span when out of room.
  template <typename E>
  std::span<E> Append(ArrayRef& ref, size_t count) noexcept {
    size_t bytes = count * sizeof(E);
    if (used_ + AlignUp(bytes) > capacity_ || count > UINT32_MAX) {
      overflow_ = true;
      ref = {0, 0};
      return {};
    }
    ref = {static_cast<uint32_t>(used_), static_cast<uint32_t>(count)};
    E* p = reinterpret_cast<E*>(base_ + used_);
    used_ += AlignUp(bytes);
    reinterpret_cast<MessageHeader*>(base_)->total_size = static_cast<uint32_t>(used_);
    return {p, count};
  }
  template <typename E>
  bool Copy(ArrayRef& ref, std::span<const E> src) noexcept {
    auto dst = Append<E>(ref, src.size());
    if (dst.size() != src.size()) return false;
    if (!src.empty()) std::memcpy(dst.data(), src.data(), src.size_bytes());
    return true;
  }
  bool overflow() const noexcept { return overflow_; }
  size_t size() const noexcept { return used_; }

 private:
  uint8_t* base_;
  size_t capacity_;
  size_t used_;
  bool overflow_ = false;
};

}  // namespace radixserve::transport
