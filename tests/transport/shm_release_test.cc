// ReleaseZeroPages: the all-zero pages of a shared-memory file go back to the system and read as
// zeros again; pages holding data stay, unchanged.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "transport/roudi_process.h"

namespace radixserve::transport {
namespace {

constexpr size_t kPage = 4096;

// Blocks of 512 bytes tmpfs has allocated to the file.
int64_t AllocatedPages(int fd) {
  struct stat st {};
  EXPECT_EQ(::fstat(fd, &st), 0);
  return static_cast<int64_t>(st.st_blocks) * 512 / kPage;
}

TEST(ReleaseZeroPages, ReleasesZeroPagesAndKeepsTheOthers) {
  const std::string path = "/dev/shm/radixserve-release-test-" + std::to_string(::getpid());
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(fd, 0);
  // 1,100 pages (more than one 512-page read block, not a multiple of it), all written (resident),
  // data on pages 0, 511, 512 (either side of a block edge) and 1,099 (the last); one byte at the
  // end of page 700.
  const size_t pages = 1100;
  std::vector<char> content(pages * kPage, 0);
  for (size_t p : {size_t{0}, size_t{511}, size_t{512}, size_t{1099}}) std::memset(&content[p * kPage], 'a' + p % 26, kPage);
  content[701 * kPage - 1] = 'z';
  ASSERT_EQ(::pwrite(fd, content.data(), content.size(), 0), static_cast<ssize_t>(content.size()));
  ASSERT_EQ(AllocatedPages(fd), static_cast<int64_t>(pages));

  Result<uint64_t> released = ReleaseZeroPages(path);
  ASSERT_TRUE(released.ok()) << released.status().ToString();
  EXPECT_EQ(*released, (pages - 5) * kPage);
  EXPECT_EQ(AllocatedPages(fd), 5);
  std::vector<char> after(content.size());
  ASSERT_EQ(::pread(fd, after.data(), after.size(), 0), static_cast<ssize_t>(after.size()));
  EXPECT_EQ(after, content);
  // Nothing left to release the second time.
  released = ReleaseZeroPages(path);
  ASSERT_TRUE(released.ok());
  EXPECT_EQ(AllocatedPages(fd), 5);
  ::close(fd);
  ::unlink(path.c_str());
}

TEST(ReleaseZeroPages, AMissingFileIsAnErrorNamingIt) {
  Result<uint64_t> released = ReleaseZeroPages("/dev/shm/radixserve-no-such-segment");
  ASSERT_FALSE(released.ok());
  EXPECT_NE(released.status().message().find("/dev/shm/radixserve-no-such-segment"), std::string::npos);
}

}  // namespace
}  // namespace radixserve::transport
