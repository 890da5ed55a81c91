#include "nodes/component.h"

#include "core/scheduler/plugin_library.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
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
  RS_ASSIGN_OR_RETURN(std::shared_ptr<sched::PluginLibrary> lib, sched::PluginLibrary::Open(path));
  const RsPluginDescriptor& d = lib->descriptor();
  if (d.kind != RS_PLUGIN_NODE)
    return Status::InvalidArgument(path + " is a " + sched::PluginKindName(d.kind) + " plugin, not a node component");
  // Kept loaded deliberately: nodes live until the process exits.
  static std::mutex mu;
  static std::vector<std::shared_ptr<sched::PluginLibrary>>* loaded = new std::vector<std::shared_ptr<sched::PluginLibrary>>();
  std::lock_guard<std::mutex> l(mu);
  loaded->push_back(std::move(lib));
  return &d;
}

std::unique_ptr<Node> CreateNode(const RsPluginDescriptor& desc, const NodeContext& ctx) {
  char err[256] = {0};
  return std::unique_ptr<Node>(static_cast<Node*>(desc.create(&ctx, err, sizeof(err))));
}

}  // namespace radixserve::nodes
