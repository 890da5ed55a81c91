// The built-in default model: the embedded bytes are the real stories260K of the reference data,
// written once into the cache directory, rewritten when the copy there is damaged.
#include "core/builtin_model/builtin_model.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "core/gguf/gguf_reader.h"

namespace radixserve::builtin_model {
namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

class BuiltinModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("radixserve_builtin_model_test_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    setenv("RADIXSERVE_CACHE_DIR", dir_.c_str(), 1);
  }
  void TearDown() override {
    unsetenv("RADIXSERVE_CACHE_DIR");
    std::filesystem::remove_all(dir_);
  }
  std::filesystem::path dir_;
};

TEST_F(BuiltinModelTest, EmbedsTheReferenceStories260K) {
  const std::string reference = ReadAll(std::string(RADIXSERVE_SHARED_DIR) + "/models/stories260K.gguf");
  ASSERT_EQ(reference.size(), 1185376u);
  ASSERT_EQ(Bytes().size(), reference.size());
  EXPECT_TRUE(std::equal(reference.begin(), reference.end(), Bytes().begin(),
                         [](char a, unsigned char b) { return static_cast<unsigned char>(a) == b; }));
}

TEST_F(BuiltinModelTest, IsWrittenOnceIntoTheCacheDirectory) {
  auto p = EnsureDefaultModel();
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(*p, (dir_ / "stories260K.gguf").string());
  auto mtime = std::filesystem::last_write_time(*p);
  auto again = EnsureDefaultModel();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *p);
  EXPECT_EQ(std::filesystem::last_write_time(*p), mtime);
  auto f = gguf::GgufFile::Open(*p);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(*(*f)->GetString("general.architecture"), "llama");
  EXPECT_EQ(*(*f)->GetInt("llama.context_length"), 512);
}

TEST_F(BuiltinModelTest, ADamagedCopyIsRewritten) {
  auto p = EnsureDefaultModel();
  ASSERT_TRUE(p.ok());
  std::filesystem::resize_file(*p, 1000);  // an interrupted copy
  ASSERT_TRUE(EnsureDefaultModel().ok());
  EXPECT_EQ(std::filesystem::file_size(*p), Bytes().size());
  {
    std::fstream f(*p, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(5000);
    f.put('\x7f');  // same size, one byte changed
  }
  ASSERT_TRUE(EnsureDefaultModel().ok());
  const std::string now = ReadAll(*p);
  EXPECT_TRUE(std::equal(now.begin(), now.end(), Bytes().begin(),
                         [](char a, unsigned char b) { return static_cast<unsigned char>(a) == b; }));
}

TEST_F(BuiltinModelTest, AnUnwritableCacheDirectoryIsAnError) {
  setenv("RADIXSERVE_CACHE_DIR", "/proc/radixserve-cannot-create", 1);
  auto p = EnsureDefaultModel();
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("/proc/radixserve-cannot-create"), std::string::npos) << p.status().message();
}

}  // namespace
}  // namespace radixserve::builtin_model
