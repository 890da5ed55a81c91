// AdminCall: one call of the /admin/ endpoints, parsed from its HTTP form.
// This is the route table of the control plane, kept with the other HTTP
// routes: paths, methods and body fields are checked here (404, 405, 400),
// and the backend only executes a parsed call. Plain value type.
#pragma once

#include <map>
#include <string>

#include "core/util/status.h"

namespace radixserve::api {

struct AdminCall {
  enum class Kind {
    kListNodes,    // GET  /admin/nodes
    kShowPolicy,   // GET  /admin/policy
    kListPlugins,  // GET  /admin/plugins
    kSwapPolicy,   // POST /admin/policy/swap   {"name", "params"?}
    kSwapCache,    // POST /admin/cache/swap    {"name", "params"?, "mode"?: "drain" | "flush"}
    kFlushCache,   // POST /admin/cache/flush
    kCacheStats,   // GET  /admin/cache/stats
    kLoadPlugin,   // POST /admin/plugin/load   {"path"}
    kGetParams,    // GET  /admin/params/<node>
    kSetParam,     // POST /admin/params/<node> {"name", "value"}
  };
  Kind kind = Kind::kListNodes;
  std::string name;                           // plugin name, plugin path or parameter name
  std::map<std::string, std::string> params;  // plugin parameters (non-string values as JSON text)
  std::string mode;                           // kSwapCache ("" = drain)
  std::string node;                           // kGetParams / kSetParam
  std::string value;                          // kSetParam
};

// NotFound for an unknown path, InvalidArgument for a bad body (the message names the field);
// the HTTP server has already refused methods other than GET and POST.
Result<AdminCall> ParseAdminCall(const std::string& method, const std::string& path, const std::string& body);

}  // namespace radixserve::api
