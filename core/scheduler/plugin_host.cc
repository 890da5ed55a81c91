#include "core/scheduler/plugin_host.h"

#include <dlfcn.h>

#include <cstdio>

#include <algorithm>
#include <filesystem>

#include "core/scheduler/params.h"

namespace radixserve::sched {

namespace {

std::string FileName(RsPluginKind kind, std::string name) {
  std::replace(name.begin(), name.end(), '-', '_');
  return std::string("libradixserve_") + PluginKindName(kind) + "_" + name + ".so";
}

}  // namespace

PluginHost::PluginHost(std::vector<std::string> dirs) : dirs_(std::move(dirs)) {}
PluginHost::~PluginHost() = default;

std::vector<std::string> PluginHost::DefaultDirs() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&PluginHost::DefaultDirs), &info) == 0 || info.dli_fname == nullptr) return {};
  std::filesystem::path lib = std::filesystem::path(info.dli_fname).parent_path();
  return {lib.string(), (lib / "radixserve" / "plugins").string()};
}

Result<std::shared_ptr<PluginHost::Library>> PluginHost::Load(const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = loaded_.find(path);
  if (it != loaded_.end()) return it->second;
  RS_ASSIGN_OR_RETURN(auto lib, PluginLibrary::Open(path));
  if (lib->descriptor().kind == RS_PLUGIN_NODE)
    return Status::InvalidArgument("plugin " + path + " is a node component, not a policy, cache or routing plugin");
  loaded_[path] = lib;
  return lib;
}

Result<std::shared_ptr<PluginHost::Library>> PluginHost::Find(RsPluginKind kind, const std::string& name) {
  const std::string file = FileName(kind, name);
  for (const auto& dir : dirs_) {
    std::filesystem::path p = std::filesystem::path(dir) / file;
    std::error_code ec;
    if (!std::filesystem::exists(p, ec)) continue;
    RS_ASSIGN_OR_RETURN(auto lib, Load(p.string()));
    if (lib->descriptor().kind != static_cast<uint32_t>(kind))
      return Status::InvalidArgument("plugin " + p.string() + " is a " + PluginKindName(lib->descriptor().kind) + " plugin, not a " +
                                     PluginKindName(kind) + " plugin");
    if (name != lib->descriptor().name)
      return Status::InvalidArgument("plugin " + p.string() + " calls itself '" + lib->descriptor().name + "', not '" + name +
                                     "'");
    return lib;
  }
  std::string where;
  for (const auto& d : dirs_) where += (where.empty() ? "" : ", ") + d;
  return Status::NotFound(std::string("no ") + PluginKindName(kind) + " plugin '" + name + "' (" + file + ") in [" + where +
                          "]");
}

Result<void*> PluginHost::Create(RsPluginKind kind, const std::string& name,
                                 const std::map<std::string, std::string>& given, std::shared_ptr<Library>* lib) {
  RS_ASSIGN_OR_RETURN(*lib, Find(kind, name));
  const RsPluginDescriptor* d = &(*lib)->descriptor();
  Params params;
  Status s = ResolveParams(std::span<const RsParamSpec>(d->params, d->num_params), given, &params);
  if (!s.ok()) return Status(s.code(), std::string(PluginKindName(kind)) + " plugin '" + name + "': " + s.message());
  char err[512] = {0};
  void* object = d->create(&params, err, sizeof(err));
  if (object == nullptr)
    return Status::InvalidArgument(std::string(PluginKindName(kind)) + " plugin '" + name + "' refused its configuration: " +
                                   (err[0] ? err : "no reason given"));
  return object;
}

Result<PolicyPtr> PluginHost::CreatePolicy(const std::string& name, const std::map<std::string, std::string>& params) {
  std::shared_ptr<Library> lib;
  RS_ASSIGN_OR_RETURN(void* object, Create(RS_PLUGIN_POLICY, name, params, &lib));
  auto destroy = lib->descriptor().destroy;
  return PolicyPtr(static_cast<SchedulePolicy*>(object), [lib, destroy](SchedulePolicy* p) { destroy(p); });
}

Result<CachePtr> PluginHost::CreateCache(const std::string& name, const std::map<std::string, std::string>& params) {
  std::shared_ptr<Library> lib;
  RS_ASSIGN_OR_RETURN(void* object, Create(RS_PLUGIN_CACHE, name, params, &lib));
  auto destroy = lib->descriptor().destroy;
  return CachePtr(static_cast<PrefixCache*>(object), [lib, destroy](PrefixCache* c) { destroy(c); });
}

Result<PluginHost::PluginObject> PluginHost::CreateObject(RsPluginKind kind, const std::string& name,
                                                          const std::map<std::string, std::string>& params) {
  std::shared_ptr<Library> lib;
  RS_ASSIGN_OR_RETURN(void* object, Create(kind, name, params, &lib));
  auto destroy = lib->descriptor().destroy;
  return PluginObject{object, [lib, destroy](void* o) { destroy(o); }};
}

Result<PluginInfo> PluginHost::Inspect(const std::string& path) {
  // Only libraries inside the configured plugin directories may be loaded: a control call must not
  // be able to run code from anywhere on the machine.
  std::error_code ec;
  const std::filesystem::path real = std::filesystem::weakly_canonical(path, ec);
  bool inside = false;
  for (const auto& d : dirs_) {
    const std::filesystem::path dir = std::filesystem::weakly_canonical(d, ec);
    auto rel = real.lexically_relative(dir);
    if (!rel.empty() && *rel.begin() != "..") inside = true;
  }
  if (!inside) {
    std::string where;
    for (const auto& d : dirs_) where += (where.empty() ? "" : ", ") + d;
    return Status::InvalidArgument("plugin path " + path + " is outside the plugin directories [" + where + "]");
  }
  RS_ASSIGN_OR_RETURN(auto lib, Load(path));
  PluginInfo info;
  info.path = path;
  info.name = lib->descriptor().name;
  info.description = lib->descriptor().description ? lib->descriptor().description : "";
  info.kind = static_cast<RsPluginKind>(lib->descriptor().kind);
  info.params.assign(lib->descriptor().params, lib->descriptor().params + lib->descriptor().num_params);
  return info;
}

std::vector<PluginInfo> PluginHost::List() {
  std::vector<PluginInfo> out;
  for (const auto& dir : dirs_) {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
      const std::string f = e.path().filename().string();
      if ((f.rfind("libradixserve_policy_", 0) != 0 && f.rfind("libradixserve_cache_", 0) != 0 &&
           f.rfind("libradixserve_routing_", 0) != 0) ||
          e.path().extension() != ".so")
        continue;
      auto info = Inspect(e.path().string());
      if (info.ok()) out.push_back(std::move(info).value());
    }
  }
  return out;
}

}  // namespace radixserve::sched
