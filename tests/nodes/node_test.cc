// Node lifecycle transitions and typed parameter validation.
#include <gtest/gtest.h>

#include "nodes/component.h"
#include "nodes/node.h"

namespace radixserve::nodes {
namespace {

class CountingNode : public Node {
 public:
  explicit CountingNode(NodeContext ctx) : Node(std::move(ctx)) {
    params().DeclareInt("threads", 2, 1, 64, "compute threads");
    params().DeclareDouble("ratio", 0.7, 0.0, 1.0, "a fraction");
    params().DeclareBool("overlap", true, "overlap mode");
    params().DeclareString("policy", "lpm", "policy", {"lpm", "fcfs"});
    params().DeclareString("model", "", "model path", {}, /*read_only=*/true);
  }
  const char* component() const override { return "counting"; }
  int configured = 0, activated = 0, deactivated = 0, cleaned = 0;
  bool fail_configure = false;
  std::vector<std::string> changed;

 protected:
  Status OnConfigure() override {
    if (fail_configure) return Status::NotFound("model file missing");
    ++configured;
    return Status::Ok();
  }
  Status OnActivate() override { ++activated; return Status::Ok(); }
  Status OnDeactivate() override { ++deactivated; return Status::Ok(); }
  Status OnCleanup() override { ++cleaned; return Status::Ok(); }
  Status OnParameterChanged(const std::string& n) override {
    if (n == "policy" && params().GetString(n) == "lpm") return Status::InvalidArgument("lpm cannot load now");
    changed.push_back(n);
    return Status::Ok();
  }
};

TEST(Node, FollowsTheLifecycle) {
  CountingNode n({"w", "ns", {}});
  EXPECT_EQ(n.state(), NodeState::kUnconfigured);
  EXPECT_FALSE(n.Activate().ok());  // must configure first
  ASSERT_TRUE(n.Configure().ok());
  EXPECT_EQ(n.state(), NodeState::kInactive);
  EXPECT_FALSE(n.Ready());
  ASSERT_TRUE(n.Activate().ok());
  EXPECT_TRUE(n.Ready());
  EXPECT_FALSE(n.Configure().ok());
  n.Shutdown();
  EXPECT_EQ(n.state(), NodeState::kFinalized);
  EXPECT_EQ(n.deactivated, 1);
  EXPECT_EQ(n.cleaned, 1);
}

TEST(Node, FailedConfigureLeavesTheNodeUnconfiguredWithAClearMessage) {
  CountingNode n({"worker", "ns", {}});
  n.fail_configure = true;
  Status s = n.Configure();
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "worker: configure failed: model file missing");
  EXPECT_EQ(n.state(), NodeState::kUnconfigured);
}

TEST(Parameters, ValidateTypesRangesAndChoices) {
  CountingNode n({"w", "ns", {}});
  EXPECT_TRUE(n.SetParameter("threads", "8").ok());
  EXPECT_EQ(n.params().GetInt("threads"), 8);
  EXPECT_NE(n.SetParameter("threads", "0").message().find("outside [1, 64]"), std::string::npos);
  EXPECT_NE(n.SetParameter("threads", "two").message().find("expected an integer, got 'two'"), std::string::npos);
  EXPECT_NE(n.SetParameter("ratio", "nan").message().find("finite number"), std::string::npos);
  EXPECT_NE(n.SetParameter("overlap", "yes").message().find("expected true or false"), std::string::npos);
  EXPECT_NE(n.SetParameter("policy", "magic").message().find("not one of: lpm, fcfs"), std::string::npos);
  Status unknown = n.SetParameter("treads", "2");
  EXPECT_NE(unknown.message().find("unknown parameter 'treads'"), std::string::npos);
  EXPECT_EQ(n.params().GetInt("threads"), 8);  // failed sets change nothing
  EXPECT_TRUE(n.SetParameter("overlap", "false").ok());
  EXPECT_FALSE(n.params().GetBool("overlap"));
  EXPECT_EQ(n.params().Snapshot().at("ratio"), "0.69999999999999996");
}

TEST(Parameters, ReadOnlyOnesAreLockedOnceConfigured) {
  CountingNode n({"w", "ns", {}});
  EXPECT_TRUE(n.SetParameter("model", "/a.gguf").ok());
  ASSERT_TRUE(n.Configure().ok());
  EXPECT_EQ(n.SetParameter("model", "/b.gguf").code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(n.params().GetString("model"), "/a.gguf");
  EXPECT_TRUE(n.SetParameter("policy", "fcfs").ok());
  EXPECT_EQ(n.changed, std::vector<std::string>{"policy"});
  // A change the node cannot apply is refused and leaves the old value.
  EXPECT_EQ(n.SetParameter("policy", "lpm").message(), "lpm cannot load now");
  EXPECT_EQ(n.params().GetString("policy"), "fcfs");
}

TEST(Parameters, ParseAssignment) {
  auto a = ParseAssignment("model:=/x.gguf");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->first, "model");
  EXPECT_EQ(a->second, "/x.gguf");
  EXPECT_TRUE(ParseAssignment("k:=").ok());
  EXPECT_FALSE(ParseAssignment("k=v").ok());
  EXPECT_FALSE(ParseAssignment(":=v").ok());
}

TEST(Component, MissingComponentIsNotFound) {
  auto c = LoadComponent("nonexistent", {"/tmp"});
  EXPECT_EQ(c.status().code(), StatusCode::kNotFound);
  EXPECT_NE(c.status().message().find("searched: /tmp"), std::string::npos);
  auto lib = LoadComponent("/lib/x86_64-linux-gnu/libm.so.6x.so", {});
  EXPECT_EQ(lib.status().code(), StatusCode::kNotFound);
}

// Node components are plugins of the one mechanism: the same descriptor, checked the same way; a
// policy plugin is a plugin but not a component.
TEST(Component, ComponentsAndOtherPluginsShareOneDescriptor) {
  const std::string lib = std::string(RADIXSERVE_BINARY_DIR) + "/lib/";
  auto worker = LoadComponent("worker", {lib});
  ASSERT_TRUE(worker.ok()) << worker.status().ToString();
  EXPECT_EQ((*worker)->kind, uint32_t(RS_PLUGIN_NODE));
  EXPECT_EQ((*worker)->interface_hash, RADIXSERVE_PLUGIN_INTERFACE_HASH_NODE);
  EXPECT_STREQ((*worker)->name, "worker");
  auto policy = LoadComponent(lib + "libradixserve_policy_fcfs.so", {});
  ASSERT_FALSE(policy.ok());
  EXPECT_EQ(policy.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(policy.status().message().find("not a node component"), std::string::npos) << policy.status().message();
}

}  // namespace
}  // namespace radixserve::nodes
