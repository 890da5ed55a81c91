// libradixserve_lazy_shm.so (transport/lazy_shm_preload.cc): a memset to zero of a /dev/shm file
// mapping leaves the file's whole pages unallocated and every byte as the memset would.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>

namespace {

std::string OutputOf(const std::string& command) {
  std::string out;
  FILE* f = ::popen(command.c_str(), "r");
  if (f == nullptr) return out;
  char buf[256];
  while (std::fgets(buf, sizeof buf, f)) out += buf;
  ::pclose(f);
  return out;
}

TEST(LazyShm, ZeroingAShmMappingLeavesItsWholePagesUnallocated) {
  const std::string dir = RADIXSERVE_BINARY_DIR;
  const std::string path = "/dev/shm/radixserve-lazy-shm-test-" + std::to_string(::getpid());
  const std::string probe = dir + "/bin/lazy_shm_probe " + path;
  long long before = 0, after = 0;
  int ok = 0;
  // Without the library: the memset writes every page.
  ASSERT_EQ(std::sscanf(OutputOf(probe).c_str(), "%lld %lld %d", &before, &after, &ok), 3);
  EXPECT_GE(before, 4 << 20);
  EXPECT_EQ(after, before);
  EXPECT_EQ(ok, 1);
  // With it: the two partial pages at the ends stay, and every byte reads as the memset left it.
  ASSERT_EQ(std::sscanf(OutputOf("LD_PRELOAD=" + dir + "/lib/libradixserve_lazy_shm.so " + probe).c_str(), "%lld %lld %d",
                        &before, &after, &ok),
            3);
  EXPECT_GE(before, 4 << 20);
  EXPECT_LE(after, 2 * 4096);
  EXPECT_EQ(ok, 1);
}

}  // namespace
