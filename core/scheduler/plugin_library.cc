#include "core/scheduler/plugin_library.h"

#include <dlfcn.h>

#include <cstdio>
#include <filesystem>

namespace radixserve::sched {

const char* PluginKindName(uint32_t kind) {
  switch (kind) {
    case RS_PLUGIN_POLICY: return "policy";
    case RS_PLUGIN_CACHE: return "cache";
    case RS_PLUGIN_NODE: return "node";
    case RS_PLUGIN_ROUTING: return "routing";
  }
  return "unknown";
}

namespace {

std::string Hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

PluginLibrary::~PluginLibrary() {
  if (handle_) dlclose(handle_);
}

Result<std::shared_ptr<PluginLibrary>> PluginLibrary::Open(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return Status::NotFound("cannot load plugin " + path + ": no such file");
  std::shared_ptr<PluginLibrary> lib(new PluginLibrary());
  lib->path_ = path;
  lib->handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib->handle_ == nullptr) {
    const char* e = dlerror();
    return Status::IOError("cannot load plugin " + path + ": " + (e ? e : "dlopen failed"));
  }
  dlerror();
  auto entry = reinterpret_cast<RsPluginEntryFn>(dlsym(lib->handle_, RADIXSERVE_PLUGIN_ENTRY));
  if (entry == nullptr)
    return Status::NotFound(path + " is not a radixserve plugin: it does not export " RADIXSERVE_PLUGIN_ENTRY "()");
  const RsPluginDescriptor* d = entry();
  if (d == nullptr) return Status::Corrupt("plugin " + path + ": " RADIXSERVE_PLUGIN_ENTRY "() returned NULL");
  if (d->abi_version != RADIXSERVE_PLUGIN_ABI_VERSION)
    return Status::FailedPrecondition("plugin " + path + " was built for plugin ABI version " +
                                      std::to_string(d->abi_version) + "; this host speaks version " +
                                      std::to_string(RADIXSERVE_PLUGIN_ABI_VERSION) + ": rebuild the plugin");
  if (d->kind != RS_PLUGIN_POLICY && d->kind != RS_PLUGIN_CACHE && d->kind != RS_PLUGIN_ROUTING &&
      d->kind != RS_PLUGIN_NODE)
    return Status::Unsupported("plugin " + path + " has unknown kind " + std::to_string(d->kind));
  const uint64_t want = RADIXSERVE_PLUGIN_INTERFACE_HASH_OF(d->kind);
  if (d->interface_hash != want)
    return Status::FailedPrecondition("plugin " + path + " was built against other " + PluginKindName(d->kind) +
                                      " interface headers (interface " + Hex(d->interface_hash) +
                                      ", this host's is " + Hex(want) + "): rebuild it against this version");
  if (d->name == nullptr || d->create == nullptr || d->destroy == nullptr ||
      (d->num_params > 0 && d->params == nullptr))
    return Status::Corrupt("plugin " + path + " has an incomplete descriptor");
  lib->desc_ = d;
  return lib;
}

}  // namespace radixserve::sched
