// libradixserve_robust_ipc.so, preloaded (LD_PRELOAD) into iox-roudi by RouDiProcess::Start and
// into every radixserve process by ReexecWithRobustIpc (robust_ipc.h): makes iceoryx's
// process-shared mutexes robust and recovers one whose owner died.
//
// Why: iceoryx 2.0 guards each port's chunk distributor with a process-shared pthread mutex that
// is not robust. A node killed with SIGKILL while it publishes holds that lock forever; when
// RouDi then removes the dead node's ports (on its successor's registration, or when its
// keep-alive lapses) it blocks on the lock in its only IPC thread, stops reading registrations,
// and every later process times out registering (IPC_INTERFACE__REG_ROUDI_NOT_AVAILABLE, after a
// flood of EAGAIN from the full RouDi socket). RouDi creates every port, so every such mutex is
// initialised there; with PTHREAD_MUTEX_ROBUST the next locker gets EOWNERDEAD instead of blocking,
// marks the mutex consistent and goes on. The same holds for a subscriber queue's lock that a
// killed publisher held: its successor (or RouDi) takes it over instead of blocking or aborting.
//
// Only symbols of the C library are wrapped, through dlsym(RTLD_NEXT): no iceoryx internals.
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>

namespace {

using InitFn = int (*)(pthread_mutex_t*, const pthread_mutexattr_t*);
using LockFn = int (*)(pthread_mutex_t*);

// The C library's function `name`, looked up once. No function-local static: its guard may lock
// a mutex itself, which would come back here.
template <typename Fn>
Fn Next(std::atomic<Fn>& slot, const char* name) {
  Fn f = slot.load(std::memory_order_acquire);
  if (f == nullptr) {
    f = reinterpret_cast<Fn>(::dlsym(RTLD_NEXT, name));
    slot.store(f, std::memory_order_release);
  }
  return f;
}

std::atomic<InitFn> g_init{nullptr};
std::atomic<LockFn> g_lock{nullptr};
std::atomic<LockFn> g_trylock{nullptr};

std::atomic<long> g_recovered{0};

// The owner died holding `m`: we own it now; make it usable again.
int Recover(pthread_mutex_t* m) {
  ::pthread_mutex_consistent(m);
  const long n = g_recovered.fetch_add(1) + 1;
  char line[160];
  int len = std::snprintf(line, sizeof line,
                          "radixserve: recovered a shared-memory lock whose owner died (%ld so far)\n", n);
  if (len > 0) (void)!::write(STDERR_FILENO, line, static_cast<size_t>(len));
  return 0;
}

}  // namespace

extern "C" {

int pthread_mutex_init(pthread_mutex_t* m, const pthread_mutexattr_t* attr) {
  const InitFn next = Next(g_init, "pthread_mutex_init");
  int pshared = PTHREAD_PROCESS_PRIVATE;
  if (attr == nullptr || ::pthread_mutexattr_getpshared(attr, &pshared) != 0 || pshared != PTHREAD_PROCESS_SHARED)
    return next(m, attr);
  pthread_mutexattr_t robust = *attr;  // a plain value in glibc; the caller's stays unchanged
  ::pthread_mutexattr_setrobust(&robust, PTHREAD_MUTEX_ROBUST);
  return next(m, &robust);
}

int pthread_mutex_lock(pthread_mutex_t* m) {
  const LockFn next = Next(g_lock, "pthread_mutex_lock");
  const int r = next(m);
  return r == EOWNERDEAD ? Recover(m) : r;
}

int pthread_mutex_trylock(pthread_mutex_t* m) {
  const LockFn next = Next(g_trylock, "pthread_mutex_trylock");
  const int r = next(m);
  return r == EOWNERDEAD ? Recover(m) : r;
}

}  // extern "C"
