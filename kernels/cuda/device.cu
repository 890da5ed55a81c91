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

Result<DeviceBuffer> DeviceBuffer::Allocate(size_t bytes) {
  DeviceBuffer b;
  if (bytes == 0) return std::move(b);
  const cudaError_t err = cudaMalloc(&b.ptr_, bytes);
  if (err != cudaSuccess) {
    cudaGetLastError();
    b.ptr_ = nullptr;
    return Status::ResourceExhausted("cudaMalloc of " + std::to_string(bytes) + " bytes: " + cudaGetErrorString(err));
  }
  b.bytes_ = bytes;
  return std::move(b);
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_) cudaFree(ptr_);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : ptr_(std::exchange(other.ptr_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (ptr_) cudaFree(ptr_);
    ptr_ = std::exchange(other.ptr_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

Result<PinnedBuffer> PinnedBuffer::Allocate(size_t bytes) {
  PinnedBuffer b;
  if (bytes == 0) return std::move(b);
  const cudaError_t err = cudaMallocHost(&b.ptr_, bytes);
  if (err != cudaSuccess) {
    cudaGetLastError();
    b.ptr_ = nullptr;
    return Status::ResourceExhausted("cudaMallocHost of " + std::to_string(bytes) + " bytes: " +
                                     cudaGetErrorString(err));
  }
  b.bytes_ = bytes;
  return std::move(b);
}

PinnedBuffer::~PinnedBuffer() {
  if (ptr_) cudaFreeHost(ptr_);
}

PinnedBuffer::PinnedBuffer(PinnedBuffer&& other) noexcept
    : ptr_(std::exchange(other.ptr_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

PinnedBuffer& PinnedBuffer::operator=(PinnedBuffer&& other) noexcept {
  if (this != &other) {
    if (ptr_) cudaFreeHost(ptr_);
    ptr_ = std::exchange(other.ptr_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

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

}  // namespace radixserve::cuda
