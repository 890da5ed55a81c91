// The CUDA devices the backend runs on, and device memory owned by RAII buffers.
// Plain C++ (no CUDA headers), so host code compiled by any C++ compiler can use it.
// Errors are Status values that name the CUDA call and the runtime's words.
// Thread-safety: the functions are thread-safe; a DeviceBuffer belongs to one owner at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/util/status.h"

struct CUstream_st;  // the CUDA runtime's stream type, as cuda_runtime_api.h declares it

namespace radixserve::cuda {

using Stream = CUstream_st*;  // nullptr: the default stream

struct DeviceInfo {
  std::string name;
  int major = 0, minor = 0;  // compute capability
  int sm_count = 0;
  size_t total_bytes = 0;
};

// Usable CUDA devices; 0 (not an error) when there is no driver or no GPU.
int DeviceCount();
// Why DeviceCount() is 0, in the runtime's words ("" when it is not).
std::string NoDeviceReason();
Result<DeviceInfo> GetDeviceInfo(int device);
Status SetDevice(int device);
Status Synchronize(Stream stream);

enum class MemoryKind {
  kDevice,      // on the current device
  kPinnedHost,  // page-locked host memory: copies from it run asynchronously and at full bus speed
};

// Bytes of one kind, freed when the buffer goes.
template <MemoryKind kKind>
class Buffer {
 public:
  Buffer() = default;
  static Result<Buffer> Allocate(size_t bytes);
  ~Buffer() { Free(); }
  Buffer(Buffer&& other) noexcept;
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* data() const { return ptr_; }
  size_t bytes() const { return bytes_; }
  template <typename T>
  T* as() const { return static_cast<T*>(ptr_); }

 private:
  void Free() noexcept;

  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

using DeviceBuffer = Buffer<MemoryKind::kDevice>;
using PinnedBuffer = Buffer<MemoryKind::kPinnedHost>;
extern template class Buffer<MemoryKind::kDevice>;  // defined in device.cu
extern template class Buffer<MemoryKind::kPinnedHost>;

// A stream of its own (not the legacy default stream, which serialises with every other).
class OwnedStream {
 public:
  OwnedStream() = default;
  static Result<OwnedStream> Create();
  ~OwnedStream();
  OwnedStream(OwnedStream&& other) noexcept;
  OwnedStream& operator=(OwnedStream&& other) noexcept;
  OwnedStream(const OwnedStream&) = delete;
  OwnedStream& operator=(const OwnedStream&) = delete;
  Stream get() const { return stream_; }

 private:
  Stream stream_ = nullptr;
};

// Makes `b` (a DeviceBuffer or PinnedBuffer) at least `bytes` long, doubling, so that scratch
// reused across steps settles at its peak and a warm step allocates nothing. Contents are lost.
template <MemoryKind kKind>
Status GrowBuffer(Buffer<kKind>& b, size_t bytes) {
  if (b.bytes() >= bytes) return Status::Ok();
  RS_ASSIGN_OR_RETURN(b, Buffer<kKind>::Allocate(bytes > 2 * b.bytes() ? bytes : 2 * b.bytes()));
  return Status::Ok();
}

// Copies ordered on `stream`; host memory should be pinned for them to overlap (not required).
Status CopyToDevice(void* dst, const void* src, size_t bytes, Stream stream);
Status CopyToHost(void* dst, const void* src, size_t bytes, Stream stream);
Status CopyOnDevice(void* dst, const void* src, size_t bytes, Stream stream);

}  // namespace radixserve::cuda
