// PluginLibrary: one plugin shared library, opened and its descriptor checked
// (core/scheduler/plugin_abi.h): it exports the entry point, speaks this
// build's ABI version, carries this build's interface hash for its kind, and
// its descriptor is complete. The one loader of every plugin kind: PluginHost
// (policies, caches, routing) and nodes/component (node components) add only
// the kind they accept. The library stays loaded while the object lives.
// Immutable after Open; safe to share between threads.
#pragma once

#include <memory>
#include <string>

#include "core/scheduler/plugin_abi.h"
#include "core/util/status.h"

namespace radixserve::sched {

// "policy", "cache", "node", "routing": the word in plugin file names and messages.
const char* PluginKindName(uint32_t kind);

class PluginLibrary {
 public:
  // NotFound: no such file, or no entry point; IOError: the loader refused it; FailedPrecondition:
  // another ABI version or interface; Corrupt: a NULL or incomplete descriptor; Unsupported: an
  // unknown kind.
  static Result<std::shared_ptr<PluginLibrary>> Open(const std::string& path);
  ~PluginLibrary();
  PluginLibrary(const PluginLibrary&) = delete;
  PluginLibrary& operator=(const PluginLibrary&) = delete;

  const RsPluginDescriptor& descriptor() const { return *desc_; }
  const std::string& path() const { return path_; }

 private:
  PluginLibrary() = default;
  void* handle_ = nullptr;
  const RsPluginDescriptor* desc_ = nullptr;
  std::string path_;
};

}  // namespace radixserve::sched
