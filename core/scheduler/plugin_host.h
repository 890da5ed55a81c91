// PluginHost: finds, loads and instantiates policy, cache and routing plugins
// (ARCHITECTURE 5). A plugin NAME of kind KIND is the shared library
// libradixserve_KIND_NAME.so (dashes become underscores) in the first plugin
// directory that has it; it must export radixserve_plugin_descriptor with the
// host's ABI version, the right kind and name. Parameters are checked against
// the descriptor's schema before the factory runs. Every refusal is a Status
// with a message that says what was wrong; nothing is swapped on failure.
// Libraries stay loaded while any object they made is alive.
// Thread-safe for concurrent Create* calls (a mutex guards the library table).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/scheduler/plugin_abi.h"
#include "core/scheduler/plugin_library.h"
#include "core/scheduler/scheduler.h"
#include "core/util/status.h"

namespace radixserve::sched {

struct PluginInfo {
  std::string path;
  std::string name;
  std::string description;
  RsPluginKind kind;
  std::vector<RsParamSpec> params;
};

class PluginHost {
 public:
  explicit PluginHost(std::vector<std::string> dirs);
  ~PluginHost();
  // The directory holding libradixserve_scheduler.so (the build's lib dir, or an install's
  // lib dir), then its radixserve/plugins subdirectory.
  static std::vector<std::string> DefaultDirs();

  Result<PolicyPtr> CreatePolicy(const std::string& name, const std::map<std::string, std::string>& params = {});
  Result<CachePtr> CreateCache(const std::string& name, const std::map<std::string, std::string>& params = {});
  // An object of another kind (routing): `destroy` frees it through its plugin, whose library
  // stays loaded until then.
  struct PluginObject {
    void* object = nullptr;
    std::function<void(void*)> destroy;
  };
  Result<PluginObject> CreateObject(RsPluginKind kind, const std::string& name,
                                    const std::map<std::string, std::string>& params = {});
  // Loads one library file and validates its descriptor (any kind).
  Result<PluginInfo> Inspect(const std::string& path);
  // Every loadable plugin in the directories.
  std::vector<PluginInfo> List();
  const std::vector<std::string>& dirs() const { return dirs_; }

 private:
  using Library = PluginLibrary;
  Result<std::shared_ptr<Library>> Load(const std::string& path);
  Result<std::shared_ptr<Library>> Find(RsPluginKind kind, const std::string& name);
  Result<void*> Create(RsPluginKind kind, const std::string& name, const std::map<std::string, std::string>& params,
                       std::shared_ptr<Library>* lib);

  std::vector<std::string> dirs_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<Library>> loaded_;  // by path
};

}  // namespace radixserve::sched
