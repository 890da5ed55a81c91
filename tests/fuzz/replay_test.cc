// Replays a fuzz target's kept inputs through its entry function (LLVMFuzzerTestOneInput,
// linked in from fuzz/<target>_fuzz.cc): the regressions (inputs that once crashed) and the
// seed corpus. A property failure aborts the program, so ctest reports it as failed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

namespace fs = std::filesystem;

// Feeds every regular file under dir (sorted, so that a failure names a stable input); returns how many.
int ReplayDirectory(const std::string& dir) {
  if (!fs::is_directory(dir)) return 0;
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& path : files) {
    std::ifstream in(path, std::ios::binary);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    SCOPED_TRACE(path.string());
    std::fprintf(stderr, "replay %s (%zu bytes)\n", path.c_str(), bytes.size());
    // An exact-size copy: as libFuzzer does, so that a read past the end is past the allocation.
    std::unique_ptr<uint8_t[]> copy(new uint8_t[bytes.empty() ? 1 : bytes.size()]);
    std::copy(bytes.begin(), bytes.end(), copy.get());
    EXPECT_EQ(LLVMFuzzerTestOneInput(copy.get(), bytes.size()), 0);
  }
  return static_cast<int>(files.size());
}

#if FUZZ_HAS_REGRESSIONS
TEST(FuzzReplay, Regressions) {
  EXPECT_GT(ReplayDirectory(FUZZ_REGRESSION_DIR), 0) << "no regression inputs in " << FUZZ_REGRESSION_DIR;
}
#else
TEST(FuzzReplay, NoRegressionsFolder) {
  // An unlisted folder would never be replayed: list the target in fuzz/targets.cmake.
  EXPECT_FALSE(fs::exists(FUZZ_REGRESSION_DIR))
      << FUZZ_REGRESSION_DIR << " exists: add the target to RADIXSERVE_FUZZ_REGRESSION_TARGETS";
}
#endif

TEST(FuzzReplay, SeedCorpus) {
  // Every target keeps a seed corpus; an empty one means the replay would test nothing.
  EXPECT_GT(ReplayDirectory(FUZZ_CORPUS_DIR), 0) << "no seed inputs in " << FUZZ_CORPUS_DIR;
}

}  // namespace
