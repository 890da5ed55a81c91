// libradixserve_lazy_shm.so, preloaded (LD_PRELOAD) into iox-roudi only, by RouDiProcess::Start:
// shared memory that becomes resident as it is used, not when RouDi creates it.
//
// Why: iceoryx 2.0 zeroes every shared-memory segment it creates with one memset (its management
// segment, 63 MiB whatever the pipeline, and the pools), which makes all of it resident, although
// a new /dev/shm file reads as zeros already and at start-up 40 of the management segment's 16,000
// pages hold anything. Here a memset to zero of whole pages of a /dev/shm file mapping punches
// those pages out of the file instead (fallocate FALLOC_FL_PUNCH_HOLE): every reader sees zeros,
// exactly as after the memset, and a page is allocated again when it is first written. iceoryx
// zeroes so that a /dev/shm too small for the segment fails at start-up rather than with SIGBUS
// on a later first touch: where /dev/shm has not room for the whole range, the memset runs.
//
// Only the C library's memset is wrapped, through dlsym(RTLD_NEXT): no iceoryx internals. Built
// with -fno-builtin so that the compiler turns no loop here into a memset call.
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace {

using MemsetFn = void* (*)(void*, int, size_t);

constexpr size_t kMinBytes = size_t{1} << 20;  // smaller memsets go straight through
constexpr uintptr_t kPage = 4096;

// Before dlsym has answered (it may call memset itself): byte by byte.
void* SetBytes(void* s, int c, size_t n) {
  auto* p = static_cast<volatile unsigned char*>(s);
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<unsigned char>(c);
  return s;
}

std::atomic<MemsetFn> g_next{nullptr};
std::atomic<bool> g_resolving{false};

MemsetFn Next() {
  MemsetFn f = g_next.load(std::memory_order_acquire);
  if (f != nullptr) return f;
  if (g_resolving.exchange(true)) return &SetBytes;
  f = reinterpret_cast<MemsetFn>(::dlsym(RTLD_NEXT, "memset"));
  if (f == nullptr) return &SetBytes;
  g_next.store(f, std::memory_order_release);
  return f;
}

bool StartsWith(const char* s, const char* prefix) {
  for (; *prefix != '\0'; ++s, ++prefix)
    if (*s != *prefix) return false;
  return true;
}

uint64_t ParseHex(const char*& p) {
  uint64_t v = 0;
  for (;; ++p) {
    const char c = *p;
    if (c >= '0' && c <= '9') v = v * 16 + static_cast<uint64_t>(c - '0');
    else if (c >= 'a' && c <= 'f') v = v * 16 + static_cast<uint64_t>(c - 'a' + 10);
    else return v;
  }
}

// A shared mapping of a /dev/shm file that holds [addr, addr + n): its file and the file offset of
// addr. Reads /proc/self/maps with plain system calls (no stdio, no allocation).
struct ShmRange {
  char path[256];
  uint64_t offset;
};

// One line of /proc/self/maps: "start-end perms offset dev inode   path".
bool MatchLine(const char* line, uintptr_t addr, size_t n, ShmRange* out) {
  const char* p = line;
  const uint64_t start = ParseHex(p);
  if (*p++ != '-') return false;
  const uint64_t end = ParseHex(p);
  if (addr < start || addr + n > end || *p++ != ' ') return false;
  if (p[3] != 's') return false;  // MAP_SHARED
  p += 5;
  const uint64_t offset = ParseHex(p);
  while (*p == ' ') ++p;
  while (*p != ' ' && *p != '\0') ++p;  // dev
  while (*p == ' ') ++p;
  while (*p != ' ' && *p != '\0') ++p;  // inode
  while (*p == ' ') ++p;
  if (!StartsWith(p, "/dev/shm/")) return false;
  size_t i = 0;
  for (; p[i] != '\0' && i + 1 < sizeof(out->path); ++i) out->path[i] = p[i];
  if (p[i] != '\0') return false;  // a path too long for the buffer
  out->path[i] = '\0';
  out->offset = offset + (addr - start);
  return true;
}

bool FindShmRange(uintptr_t addr, size_t n, ShmRange* out) {
  const int fd = ::open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char chunk[4096], line[512];
  size_t len = 0;
  bool found = false, overlong = false;
  for (ssize_t got; !found && (got = ::read(fd, chunk, sizeof chunk)) > 0;) {
    for (ssize_t i = 0; i < got && !found; ++i) {
      if (chunk[i] != '\n') {
        if (len + 1 < sizeof line) line[len++] = chunk[i];
        else overlong = true;
        continue;
      }
      line[len] = '\0';
      found = !overlong && MatchLine(line, addr, n, out);
      len = 0;
      overlong = false;
    }
  }
  ::close(fd);
  return found;
}

// Bytes punched so far: all of them may come back, so /dev/shm must keep room for every range.
std::atomic<uint64_t> g_punched{0};

// Zeroes `bytes` (whole pages) of the file mapping r by punching them out of the file; false when
// /dev/shm lacks room for them and the ranges punched before to come back, or the file refuses.
bool PunchZeroPages(const ShmRange& r, uint64_t bytes) {
  struct statvfs fs;
  if (::statvfs(r.path, &fs) != 0 ||
      static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize < g_punched.load(std::memory_order_relaxed) + bytes)
    return false;
  const int fd = ::open(r.path, O_RDWR | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(r.offset),
                              static_cast<off_t>(bytes)) == 0;
  ::close(fd);
  if (ok) g_punched.fetch_add(bytes, std::memory_order_relaxed);
  return ok;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) void* memset(void* s, int c, size_t n) {
  const MemsetFn next = Next();
  if (c != 0 || n < kMinBytes) return next(s, c, n);
  const auto begin = reinterpret_cast<uintptr_t>(s), end = begin + n;
  const uintptr_t a = (begin + kPage - 1) / kPage * kPage, b = end / kPage * kPage;
  ShmRange r;
  if (b <= a || !FindShmRange(a, b - a, &r) || !PunchZeroPages(r, b - a)) return next(s, c, n);
  next(s, 0, a - begin);
  next(reinterpret_cast<void*>(b), 0, end - b);
  return s;
}
