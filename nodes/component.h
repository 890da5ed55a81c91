// Node components: each node type is a shared library exporting
//   extern "C" const RsNodeComponent* radixserve_node_component(void);
// A container process loads one or several components and creates their
// nodes. The C++ Node interface is part of this ABI: bump the version when it
// changes. The loader is thread-compatible.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/util/status.h"
#include "nodes/node.h"

#define RADIXSERVE_NODE_ABI_VERSION 1u
#define RADIXSERVE_NODE_ENTRY "radixserve_node_component"

extern "C" {
struct RsNodeComponent {
  uint32_t abi_version;
  const char* name;         // "worker", "scheduler", "detokenizer", "api"
  const char* description;
  // Returns a new node (owned by the caller) or nullptr.
  radixserve::nodes::Node* (*create)(const radixserve::nodes::NodeContext* ctx);
};
}

#define RADIXSERVE_EXPORT_NODE_COMPONENT(var)                                                 \
  extern "C" __attribute__((visibility("default"))) const RsNodeComponent* radixserve_node_component() { \
    return &(var);                                                                             \
  }

namespace radixserve::nodes {

// Finds "libradixserve_node_<name>.so" in `search_dirs` (or takes a path ending in .so), checks its
// ABI and returns its descriptor. The library stays loaded for the life of the process.
Result<const RsNodeComponent*> LoadComponent(const std::string& name_or_path,
                                             const std::vector<std::string>& search_dirs);
// Directories searched by default: $RADIXSERVE_COMPONENT_PATH (colon-separated), then the lib
// directory next to the running executable (../lib), then the executable's own directory.
std::vector<std::string> DefaultComponentDirs();

}  // namespace radixserve::nodes
