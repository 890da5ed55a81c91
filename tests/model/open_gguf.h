// Test helper: a GGUF file opened for a model test, shared as LlamaModel::Load takes it; null
// (with a gtest failure naming the file and why) when it cannot be opened.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "core/gguf/gguf_reader.h"

namespace radixserve::model {

inline std::shared_ptr<const gguf::GgufFile> OpenGguf(const std::string& path) {
  auto f = gguf::GgufFile::Open(path);
  EXPECT_TRUE(f.ok()) << path << ": " << f.status().ToString();
  return f.ok() ? std::shared_ptr<const gguf::GgufFile>(std::move(f).value()) : nullptr;
}

}  // namespace radixserve::model
