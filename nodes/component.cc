#include "nodes/component.h"

#include <dlfcn.h>
#include <unistd.h>

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

Result<const RsNodeComponent*> LoadComponent(const std::string& name_or_path,
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
  auto entry = reinterpret_cast<const RsNodeComponent* (*)()>(::dlsym(handle, RADIXSERVE_NODE_ENTRY));
  if (!entry) {
    ::dlclose(handle);
    return Status::InvalidArgument(path + " is not a radixserve node component (no " RADIXSERVE_NODE_ENTRY " symbol)");
  }
  const RsNodeComponent* c = entry();
  if (!c || c->abi_version != RADIXSERVE_NODE_ABI_VERSION) {
    uint32_t got = c ? c->abi_version : 0;
    ::dlclose(handle);
    return Status::Unsupported(path + ": node ABI version " + std::to_string(got) + ", this build needs " +
                               std::to_string(RADIXSERVE_NODE_ABI_VERSION));
  }
  return c;  // the handle is deliberately kept open: nodes live until the process exits
}

}  // namespace radixserve::nodes
