#include "nodes/component.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>

namespace radixserve::nodes {

std::vector<std::string> DefaultComponentDirs() {
  std::vector<std::string> dirs;
  if (const char* p = std::getenv("RADIXSERVE_COMPONENT_PATH"); p && *p) {
    std::stringstream ss(p);
    for (std::string d; std::getline(ss, d, ':');)
      if (!d.empty()) dirs.push_back(d);
  }
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    dirs.push_back((exe.parent_path().parent_path() / "lib").string());
    dirs.push_back(exe.parent_path().string());
  }
  return dirs;
}

Result<const RsPluginDescriptor*> LoadComponent(const std::string& name_or_path,
                                                const std::vector<std::string>& search_dirs) {
  std::string path;
  if (name_or_path.size() > 3 && name_or_path.ends_with(".so")) {
    path = name_or_path;
  } else {
    for (const auto& d : search_dirs) {
      std::string candidate = d + "/libradixserve_node_" + name_or_path + ".so";
      if (std::filesystem::exists(candidate)) {
        path = candidate;
        break;
      }
    }
    if (path.empty()) {
      std::string where;
      for (const auto& d : search_dirs) where += (where.empty() ? "" : ", ") + d;
      return Status::NotFound("node component '" + name_or_path + "' not found (searched: " + where + ")");
    }
  }
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) return Status::NotFound("cannot load node component " + path + ": " + ::dlerror());
  auto entry = reinterpret_cast<RsPluginEntryFn>(::dlsym(handle, RADIXSERVE_PLUGIN_ENTRY));
  if (!entry) {
    ::dlclose(handle);
    return Status::InvalidArgument(path + " is not a radixserve plugin (no " RADIXSERVE_PLUGIN_ENTRY " symbol)");
  }
  const RsPluginDescriptor* d = entry();
  Status refused;
  if (d == nullptr || d->abi_version != RADIXSERVE_PLUGIN_ABI_VERSION) {
    refused = Status::Unsupported(path + ": plugin ABI version " + std::to_string(d ? d->abi_version : 0) +
                                  ", this build needs " + std::to_string(RADIXSERVE_PLUGIN_ABI_VERSION));
  } else if (d->interface_hash != RADIXSERVE_PLUGIN_INTERFACE_HASH) {
    char got[24], want[24];
    std::snprintf(got, sizeof(got), "%016llx", static_cast<unsigned long long>(d->interface_hash));
    std::snprintf(want, sizeof(want), "%016llx", static_cast<unsigned long long>(RADIXSERVE_PLUGIN_INTERFACE_HASH));
    refused = Status::Unsupported(path + " was built against other headers (interface " + got + ", this build's is " +
                                  want + "): rebuild it against this version");
  } else if (d->kind != RS_PLUGIN_NODE || d->create == nullptr || d->destroy == nullptr || d->name == nullptr) {
    refused = Status::InvalidArgument(path + " is a plugin but not a node component");
  }
  if (!refused.ok()) {
    ::dlclose(handle);
    return refused;
  }
  return d;  // the handle is deliberately kept open: nodes live until the process exits
}

std::unique_ptr<Node> CreateNode(const RsPluginDescriptor& desc, const NodeContext& ctx) {
  char err[256] = {0};
  return std::unique_ptr<Node>(static_cast<Node*>(desc.create(&ctx, err, sizeof(err))));
}

}  // namespace radixserve::nodes
