/* The plugin C ABI: every policy, cache, routing or node-component plugin is a shared library that
 * exports
 *   extern "C" const RsPluginDescriptor* radixserve_plugin_descriptor(void);
 * (node components: kind RS_PLUGIN_NODE, `create` takes a const radixserve::nodes::NodeContext*
 * and returns a radixserve::nodes::Node*; nodes/component.h).
 * The host checks abi_version (this descriptor's layout) before touching anything else,
 * then interface_hash: `create` receives the validated parameters (a const
 * radixserve::sched::Params*) and returns a new radixserve::sched::SchedulePolicy*,
 * PrefixCache* or radixserve::router::RoutingPolicy* (by kind), or NULL with a message in err,
 * so those C++ interfaces and the types they pass are part of the ABI too. The build computes
 * one interface hash per kind from the include closure of what crosses that kind's boundary
 * (cmake/plugin_interface.cmake), so a plugin built against other headers is refused, whether
 * or not anyone remembered to bump a number. */
#ifndef RADIXSERVE_CORE_SCHEDULER_PLUGIN_ABI_H_
#define RADIXSERVE_CORE_SCHEDULER_PLUGIN_ABI_H_

#include <stddef.h>
#include <stdint.h>

#include "radixserve/plugin_interface_hash.h" /* generated: RADIXSERVE_PLUGIN_INTERFACE_HASH_<KIND> */

#define RADIXSERVE_PLUGIN_ABI_VERSION 5u
#define RADIXSERVE_PLUGIN_ENTRY "radixserve_plugin_descriptor"

#ifdef __cplusplus
extern "C" {
#endif

/* RS_PLUGIN_ROUTING: `create` returns a radixserve::router::RoutingPolicy* (core/router/routing_policy.h). */
typedef enum { RS_PLUGIN_POLICY = 1, RS_PLUGIN_CACHE = 2, RS_PLUGIN_NODE = 3, RS_PLUGIN_ROUTING = 4 } RsPluginKind;
typedef enum { RS_PARAM_INT = 1, RS_PARAM_DOUBLE = 2, RS_PARAM_BOOL = 3, RS_PARAM_STRING = 4 } RsParamType;

typedef struct {
  const char* name;
  uint32_t type; /* RsParamType */
  const char* default_value;
  double min_value; /* int/double only */
  double max_value;
  const char* help;
} RsParamSpec;

typedef struct {
  uint32_t abi_version;
  uint32_t kind; /* RsPluginKind */
  uint64_t interface_hash; /* RADIXSERVE_PLUGIN_INTERFACE_HASH_OF(kind) of the headers it was built with */
  const char* name;
  const char* description;
  const RsParamSpec* params;
  uint32_t num_params;
  void* (*create)(const void* params, char* err, size_t err_len);
  void (*destroy)(void* object);
} RsPluginDescriptor;

typedef const RsPluginDescriptor* (*RsPluginEntryFn)(void);

#ifdef __cplusplus
}
#endif

#define RADIXSERVE_PLUGIN_EXPORT extern "C" __attribute__((visibility("default")))

/* The interface hash a plugin of `kind` carries and the host expects (a constant expression). */
#define RADIXSERVE_PLUGIN_INTERFACE_HASH_OF(kind)                              \
  ((kind) == RS_PLUGIN_POLICY    ? RADIXSERVE_PLUGIN_INTERFACE_HASH_POLICY  \
   : (kind) == RS_PLUGIN_CACHE   ? RADIXSERVE_PLUGIN_INTERFACE_HASH_CACHE   \
   : (kind) == RS_PLUGIN_ROUTING ? RADIXSERVE_PLUGIN_INTERFACE_HASH_ROUTING \
   : (kind) == RS_PLUGIN_NODE    ? RADIXSERVE_PLUGIN_INTERFACE_HASH_NODE    \
                                 : 0ull)

#endif /* RADIXSERVE_CORE_SCHEDULER_PLUGIN_ABI_H_ */
