// Runs under LD_PRELOAD=libradixserve_lazy_shm.so (lazy_shm_test starts it): zeroes a /dev/shm
// file mapping with memset, as iceoryx does, and reports what the file then holds. Not built with
// the sanitizers: their runtime would define memset in this executable, ahead of the preload.
//   lazy_shm_probe PATH  -> prints "<allocated bytes before> <after> <content ok 0/1>"
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  constexpr size_t kSize = (4u << 20) + 100;  // not a whole number of pages
  const int fd = ::open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0600);
  if (fd < 0 || ::ftruncate(fd, kSize) != 0) return 3;
  auto* p = static_cast<unsigned char*>(::mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
  if (p == MAP_FAILED) return 4;
  // Called through a volatile pointer: the compiler may not inline it.
  void* (*volatile set)(void*, int, size_t) = &memset;
  set(p, 'x', kSize);  // every page written, so resident
  struct stat st {};
  ::fstat(fd, &st);
  const long long before = static_cast<long long>(st.st_blocks) * 512;
  // Zero all but 100 bytes at each end: the partial pages at the ends are written, the whole pages
  // between them punched.
  set(p + 100, 0, kSize - 200);
  ::fstat(fd, &st);
  const long long after = static_cast<long long>(st.st_blocks) * 512;
  bool ok = true;
  for (size_t i = 0; i < kSize; ++i) ok &= p[i] == ((i < 100 || i >= kSize - 100) ? 'x' : 0);
  std::printf("%lld %lld %d\n", before, after, ok ? 1 : 0);
  ::munmap(p, kSize);
  ::close(fd);
  ::unlink(argv[1]);
  return 0;
}
