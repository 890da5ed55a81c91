// Node components: each node type is a plugin (core/scheduler/plugin_abi.h), a
// shared library whose descriptor has kind RS_PLUGIN_NODE: the same entry
// point, layout version and interface hash as policy and cache plugins. Its
// `create` takes a const NodeContext* and returns a new Node. A container
// process loads one or several components and creates their nodes. The
// loader is thread-compatible.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/scheduler/plugin_abi.h"
#include "core/util/status.h"
#include "nodes/node.h"

// Defines a component's exported descriptor for the Node subclass CLASS (constructed from a NodeContext).
#define RADIXSERVE_DEFINE_NODE_COMPONENT(NAME, DESCRIPTION, CLASS)                                         \
  namespace {                                                                                            \
  void* RsCreateNode(const void* ctx, char*, size_t) {                                                   \
    ::radixserve::nodes::Node* node = new CLASS(*static_cast<const ::radixserve::nodes::NodeContext*>(ctx)); \
    return node;                                                                                         \
  }                                                                                                      \
  void RsDestroyNode(void* node) { delete static_cast<::radixserve::nodes::Node*>(node); }                \
  const RsPluginDescriptor kRsNodeDescriptor = {RADIXSERVE_PLUGIN_ABI_VERSION, RS_PLUGIN_NODE,            \
                                                RADIXSERVE_PLUGIN_INTERFACE_HASH_NODE, NAME, DESCRIPTION,      \
                                                nullptr, 0, &RsCreateNode, &RsDestroyNode};              \
  }                                                                                                      \
  RADIXSERVE_PLUGIN_EXPORT const RsPluginDescriptor* radixserve_plugin_descriptor(void) { return &kRsNodeDescriptor; }

namespace radixserve::nodes {

// Finds "libradixserve_node_<name>.so" in `search_dirs` (or takes a path ending in .so), checks its
// descriptor (layout version, interface hash, kind) and returns it. The library stays loaded for
// the life of the process.
Result<const RsPluginDescriptor*> LoadComponent(const std::string& name_or_path,
                                                const std::vector<std::string>& search_dirs);
// A new node of the component: desc->create, owned by the caller.
std::unique_ptr<Node> CreateNode(const RsPluginDescriptor& desc, const NodeContext& ctx);
// Directories searched by default: $RADIXSERVE_COMPONENT_PATH (colon-separated), then the lib
// directory next to the running executable (../lib), then the executable's own directory.
std::vector<std::string> DefaultComponentDirs();

}  // namespace radixserve::nodes
