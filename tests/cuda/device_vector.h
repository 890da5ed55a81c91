// Test helper: a std::vector's contents on the CUDA device, and back.
#pragma once

#include <gtest/gtest.h>

#include <vector>

#include "kernels/cuda/device.h"

namespace radixserve::cuda::testing {

template <typename T>
class DeviceVector {
 public:
  explicit DeviceVector(const std::vector<T>& host) : size_(host.size()) {
    auto b = DeviceBuffer::Allocate(host.size() * sizeof(T));
    EXPECT_TRUE(b.ok()) << b.status().ToString();
    if (!b.ok()) return;
    buf_ = std::move(b).value();
    Status s = CopyToDevice(buf_.data(), host.data(), host.size() * sizeof(T), nullptr);
    EXPECT_TRUE(s.ok()) << s.ToString();
  }
  explicit DeviceVector(size_t n) : DeviceVector(std::vector<T>(n)) {}

  T* get() const { return buf_.as<T>(); }
  std::vector<T> ToHost() const {
    std::vector<T> host(size_);
    Status s = CopyToHost(host.data(), buf_.data(), size_ * sizeof(T), nullptr);
    EXPECT_TRUE(s.ok()) << s.ToString();
    s = Synchronize(nullptr);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return host;
  }

 private:
  size_t size_ = 0;
  DeviceBuffer buf_;
};

}  // namespace radixserve::cuda::testing
