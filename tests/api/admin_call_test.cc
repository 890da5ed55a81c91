// The /admin/ route table: each endpoint parses to its call with its fields; an unknown path is
// 404 (NotFound), a bad body 400 (InvalidArgument) naming the field.
#include <gtest/gtest.h>

#include "core/api/admin_call.h"

namespace radixserve::api {
namespace {

using Kind = AdminCall::Kind;

TEST(AdminCall, EveryEndpointParsesToItsCall) {
  struct Case {
    const char* method;
    const char* path;
    const char* body;
    Kind kind;
  };
  for (const Case& c : {Case{"GET", "/admin/nodes", "", Kind::kListNodes},
                        Case{"GET", "/admin/policy", "", Kind::kShowPolicy},
                        Case{"GET", "/admin/plugins", "", Kind::kListPlugins},
                        Case{"GET", "/admin/cache/stats", "", Kind::kCacheStats},
                        Case{"POST", "/admin/cache/flush", "", Kind::kFlushCache},
                        Case{"POST", "/admin/policy/swap", R"({"name":"fcfs"})", Kind::kSwapPolicy},
                        Case{"POST", "/admin/cache/swap", R"({"name":"chunk"})", Kind::kSwapCache},
                        Case{"POST", "/admin/plugin/load", R"({"path":"/x/libp.so"})", Kind::kLoadPlugin},
                        Case{"GET", "/admin/params/scheduler", "", Kind::kGetParams},
                        Case{"POST", "/admin/params/api", R"({"name":"a","value":"1"})", Kind::kSetParam}}) {
    auto call = ParseAdminCall(c.method, c.path, c.body);
    ASSERT_TRUE(call.ok()) << c.method << " " << c.path << ": " << call.status().ToString();
    EXPECT_EQ(call->kind, c.kind) << c.method << " " << c.path;
  }
}

TEST(AdminCall, FieldsAreCarried) {
  auto swap = ParseAdminCall("POST", "/admin/cache/swap",
                             R"({"name":"radix","params":{"eviction_policy":"lfu","n":3},"mode":"flush"})");
  ASSERT_TRUE(swap.ok());
  EXPECT_EQ(swap->name, "radix");
  EXPECT_EQ(swap->mode, "flush");
  EXPECT_EQ(swap->params.at("eviction_policy"), "lfu");
  EXPECT_EQ(swap->params.at("n"), "3") << "non-string values travel as JSON text";
  auto set = ParseAdminCall("POST", "/admin/params/scheduler", R"({"name":"policy","value":"fcfs"})");
  ASSERT_TRUE(set.ok());
  EXPECT_EQ(set->node, "scheduler");
  EXPECT_EQ(set->name, "policy");
  EXPECT_EQ(set->value, "fcfs");
  auto load = ParseAdminCall("POST", "/admin/plugin/load", R"({"path":"/p/libradixserve_policy_x.so"})");
  ASSERT_TRUE(load.ok());
  EXPECT_EQ(load->name, "/p/libradixserve_policy_x.so");
}

TEST(AdminCall, UnknownRoutesAreNotFoundAndBadBodiesNameTheField) {
  for (auto [method, path] : {std::pair{"GET", "/admin/nothing"}, std::pair{"POST", "/admin/nodes"},
                              std::pair{"GET", "/admin/policy/swap"}, std::pair{"GET", "/admin/params/"}}) {
    auto call = ParseAdminCall(method, path, "");
    ASSERT_FALSE(call.ok()) << method << " " << path;
    EXPECT_EQ(call.status().code(), StatusCode::kNotFound) << method << " " << path;
  }
  struct Bad {
    const char* path;
    const char* body;
    const char* says;
  };
  for (const Bad& b : {Bad{"/admin/policy/swap", "[1]", "JSON object"}, Bad{"/admin/policy/swap", "{", "JSON object"},
                       Bad{"/admin/policy/swap", "{}", "'name'"}, Bad{"/admin/cache/swap", R"({"name":3})", "'name'"},
                       Bad{"/admin/cache/swap", R"({"name":"radix","params":[1]})", "'params'"},
                       Bad{"/admin/cache/swap", R"({"name":"radix","mode":1})", "'mode'"},
                       Bad{"/admin/plugin/load", "{}", "'path'"},
                       Bad{"/admin/params/api", R"({"name":"a"})", "'value'"}}) {
    auto call = ParseAdminCall("POST", b.path, b.body);
    ASSERT_FALSE(call.ok()) << b.path << " " << b.body;
    EXPECT_EQ(call.status().code(), StatusCode::kInvalidArgument) << b.path << " " << b.body;
    EXPECT_NE(call.status().message().find(b.says), std::string::npos) << call.status().message();
  }
}

}  // namespace
}  // namespace radixserve::api
