#include "kernels/cuda/device.h"

#include <utility>

#include "kernels/cuda/cuda_check.h"

namespace radixserve::cuda {

int DeviceCount() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" error
    return 0;
  }
  return n;
}

std::string NoDeviceReason() {
  int n = 0;
  const cudaError_t err = cudaGetDeviceCount(&n);
  cudaGetLastError();
  if (err != cudaSuccess) return std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err);
  return n == 0 ? "the CUDA runtime reports no device" : "";
}

Result<DeviceInfo> GetDeviceInfo(int device) {
  cudaDeviceProp p{};
  RS_RETURN_IF_ERROR(CudaStatus(cudaGetDeviceProperties(&p, device), "cudaGetDeviceProperties"));
  DeviceInfo info;
  info.name = p.name;
  info.major = p.major;
  info.minor = p.minor;
  info.sm_count = p.multiProcessorCount;
  info.total_bytes = p.totalGlobalMem;
  return info;
}

Status SetDevice(int device) { return CudaStatus(cudaSetDevice(device), "cudaSetDevice"); }

Status Synchronize(Stream stream) { return CudaStatus(cudaStreamSynchronize(stream), "cudaStreamSynchronize"); }

namespace {

cudaError_t AllocateRaw(MemoryKind kind, void** ptr, size_t bytes) {
  return kind == MemoryKind::kDevice ? cudaMalloc(ptr, bytes) : cudaMallocHost(ptr, bytes);
}

const char* AllocatorName(MemoryKind kind) { return kind == MemoryKind::kDevice ? "cudaMalloc" : "cudaMallocHost"; }

}  // namespace

template <MemoryKind kKind>
Result<Buffer<kKind>> Buffer<kKind>::Allocate(size_t bytes) {
  Buffer b;
  if (bytes == 0) return std::move(b);
  const cudaError_t err = AllocateRaw(kKind, &b.ptr_, bytes);
  if (err != cudaSuccess) {
    cudaGetLastError();
    b.ptr_ = nullptr;
    return Status::ResourceExhausted(std::string(AllocatorName(kKind)) + " of " + std::to_string(bytes) +
                                     " bytes: " + cudaGetErrorString(err));
  }
  b.bytes_ = bytes;
  return std::move(b);
}

template <MemoryKind kKind>
void Buffer<kKind>::Free() noexcept {
  if (ptr_ == nullptr) return;
  if (kKind == MemoryKind::kDevice) {
    cudaFree(ptr_);
  } else {
    cudaFreeHost(ptr_);
  }
}

template <MemoryKind kKind>
Buffer<kKind>::Buffer(Buffer&& other) noexcept
    : ptr_(std::exchange(other.ptr_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

template <MemoryKind kKind>
Buffer<kKind>& Buffer<kKind>::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    Free();
    ptr_ = std::exchange(other.ptr_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

template class Buffer<MemoryKind::kDevice>;
template class Buffer<MemoryKind::kPinnedHost>;

Result<OwnedStream> OwnedStream::Create() {
  OwnedStream s;
  cudaStream_t raw = nullptr;
  RS_RETURN_IF_ERROR(CudaStatus(cudaStreamCreateWithFlags(&raw, cudaStreamNonBlocking), "cudaStreamCreate"));
  s.stream_ = raw;
  return std::move(s);
}

OwnedStream::~OwnedStream() {
  if (stream_) cudaStreamDestroy(stream_);
}

OwnedStream::OwnedStream(OwnedStream&& other) noexcept : stream_(std::exchange(other.stream_, nullptr)) {}

OwnedStream& OwnedStream::operator=(OwnedStream&& other) noexcept {
  if (this != &other) {
    if (stream_) cudaStreamDestroy(stream_);
    stream_ = std::exchange(other.stream_, nullptr);
  }
  return *this;
}

Status CopyToDevice(void* dst, const void* src, size_t bytes, Stream stream) {
  return CudaStatus(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync (to device)");
}

Status CopyToHost(void* dst, const void* src, size_t bytes, Stream stream) {
  return CudaStatus(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync (to host)");
}

Status CopyOnDevice(void* dst, const void* src, size_t bytes, Stream stream) {
  return CudaStatus(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream),
                    "cudaMemcpyAsync (on the device)");
}

}  // namespace radixserve::cuda
