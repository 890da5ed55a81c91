// Launch files: substitutions, the shipped files, every validation error with its position,
// includes and groups, and the start order of the plan.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "launch/launch_loader.h"
#include "launch/launch_plan.h"
#include "launch/launch_validator.h"
#include "launch/substitution.h"

namespace radixserve::launch {
namespace {

namespace fs = std::filesystem;

class LaunchFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/radixserve-launch-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    std::string path = (fs::path(dir_) / name).string();
    std::ofstream(path) << text;
    return path;
  }
  // Loader and validator errors, as PlanLaunch reports them.
  std::vector<LaunchError> Errors(const std::string& path, const std::vector<std::string>& args = {},
                                  const ValidatorOptions& options = {}) {
    auto provided = ParseCommandLineArgs(args);
    EXPECT_TRUE(provided.ok());
    LaunchLoader loader;
    loader.Load(path, *provided);
    std::vector<LaunchError> errors = loader.errors();
    ValidateLaunch(loader.description(), options, &errors);
    return errors;
  }
  // Expects exactly one error, at line:column, whose message contains `text`.
  void ExpectOneError(const std::string& path, int line, int column, const std::string& text,
                      const std::vector<std::string>& args = {}, const ValidatorOptions& options = {}) {
    auto errors = Errors(path, args, options);
    ASSERT_EQ(errors.size(), 1u) << JoinErrors(errors);
    EXPECT_EQ(errors[0].where.file, path);
    EXPECT_EQ(errors[0].where.line, line) << errors[0].ToString();
    EXPECT_EQ(errors[0].where.column, column) << errors[0].ToString();
    EXPECT_NE(errors[0].message.find(text), std::string::npos) << errors[0].ToString();
  }

  std::string dir_;
};

// ---- substitutions -------------------------------------------------------------------------

TEST(SubstitutionTest, VarEnvAndDefaults) {
  ArgValues args = {{"model", "/m.gguf"}, {"port", "8080"}};
  setenv("RS_LAUNCH_TEST_HOME", "/home/x", 1);
  unsetenv("RS_LAUNCH_TEST_UNSET");
  EXPECT_EQ(*Substitute("$(var model)", args), "/m.gguf");
  EXPECT_EQ(*Substitute("http://h:$(var port)/v1", args), "http://h:8080/v1");
  EXPECT_EQ(*Substitute("$( var  port )", args), "8080");
  EXPECT_EQ(*Substitute("$(env RS_LAUNCH_TEST_HOME)/m", args), "/home/x/m");
  EXPECT_EQ(*Substitute("$(env RS_LAUNCH_TEST_UNSET fallback value)", args), "fallback value");
  EXPECT_EQ(*Substitute("$(env RS_LAUNCH_TEST_HOME unused)", args), "/home/x");
  EXPECT_EQ(*Substitute("no substitution $ ( here", args), "no substitution $ ( here");
  EXPECT_EQ(*Substitute("", args), "");
}

TEST(SubstitutionTest, ValuesAreNotSubstitutedAgain) {
  ArgValues args = {{"a", "$(var b)"}, {"b", "x"}};
  EXPECT_EQ(*Substitute("$(var a)", args), "$(var b)");
}

TEST(SubstitutionTest, Errors) {
  ArgValues args = {{"a", "1"}};
  unsetenv("RS_LAUNCH_TEST_UNSET");
  auto undefined = Substitute("x $(var nope) y", args);
  ASSERT_FALSE(undefined.ok());
  EXPECT_NE(undefined.status().message().find("undefined launch argument 'nope'"), std::string::npos);
  auto unset = Substitute("$(env RS_LAUNCH_TEST_UNSET)", args);
  ASSERT_FALSE(unset.ok());
  EXPECT_NE(unset.status().message().find("'RS_LAUNCH_TEST_UNSET' is not set"), std::string::npos);
  auto unknown = Substitute("$(find-pkg-share x)", args);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("unknown substitution"), std::string::npos);
  auto unclosed = Substitute("$(var a", args);
  ASSERT_FALSE(unclosed.ok());
  EXPECT_NE(unclosed.status().message().find("unclosed"), std::string::npos);
  EXPECT_FALSE(Substitute("$(var)", args).ok());
  EXPECT_FALSE(Substitute("$(var a b)", args).ok());
}

// ---- the shipped files ---------------------------------------------------------------------

TEST(ShippedFilesTest, EdgeRunsFourProcessesInStartOrder) {
  auto plan = PlanLaunch(RADIXSERVE_LAUNCH_DIR "/edge.yaml",
                         {"model:=/models/m.gguf", "port:=8080", "policy:=fcfs", "cache:=chunk", "threads:=4"});
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  ASSERT_EQ(plan->processes.size(), 4u);
  EXPECT_EQ(plan->processes[0].name, "detokenizer");
  EXPECT_EQ(plan->processes[1].name, "worker");
  EXPECT_EQ(plan->processes[2].name, "scheduler");
  EXPECT_EQ(plan->processes[3].name, "api");
  const ProcessPlan* worker = plan->Find("worker");
  ASSERT_NE(worker, nullptr);
  EXPECT_EQ(worker->argv, (std::vector<std::string>{"radixserve", "node", "worker", "--name", "worker", "--namespace",
                                                    "default", "--process-name", "radixserve_worker", "-p",
                                                    "model:=/models/m.gguf", "-p", "device:=cpu", "-p", "cuda_graphs:=false", "-p",
                                                    "threads:=4", "-p",
                                                    "context:=0", "-p", "kv_type:=auto"}));
  const ProcessPlan* sched = plan->Find("scheduler");
  EXPECT_EQ(sched->nodes[0].Param("policy"), "fcfs");
  EXPECT_EQ(sched->nodes[0].Param("cache"), "chunk");
  EXPECT_EQ(plan->Find("api")->nodes[0].Param("port"), "8080");
  EXPECT_EQ(plan->args.at("threads"), "4");
  EXPECT_EQ(plan->args.at("device"), "cpu");
  EXPECT_EQ(plan->args.at("cuda_graphs"), "false");
  EXPECT_EQ(plan->args.at("kv_type"), "auto");
  EXPECT_EQ(plan->args.size(), 10u);
}

TEST(ShippedFilesTest, EdgeDefaults) {
  auto plan = PlanLaunch(RADIXSERVE_LAUNCH_DIR "/edge.yaml", {});
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(plan->args.at("port"), "30000");
  EXPECT_EQ(plan->Find("api")->nodes[0].Param("port"), "30000");
  EXPECT_EQ(plan->Find("api")->nodes[0].Param("model", "unset"), "");
  EXPECT_EQ(plan->Find("api")->nodes[0].Param("drain_timeout_s"), "30");
  // The served context is chosen by model::ServedContext unless the operator sets it.
  for (const char* node : {"worker", "scheduler", "api"}) EXPECT_EQ(plan->Find(node)->nodes[0].Param("context"), "0");
}

TEST(ShippedFilesTest, CompactRunsOneContainer) {
  LaunchOptions options;
  options.plan.binary = "/opt/rs/bin/radixserve";
  options.plan.component_dirs = {"/opt/rs/lib"};
  auto plan = PlanLaunch(RADIXSERVE_LAUNCH_DIR "/compact.yaml", {"model:=m.gguf", "threads:=3"}, options);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  ASSERT_EQ(plan->processes.size(), 1u);
  const ProcessPlan& p = plan->processes[0];
  EXPECT_EQ(p.kind, ProcessPlan::Kind::kContainer);
  EXPECT_EQ(p.rank, 2);  // holds the api node
  EXPECT_EQ(p.argv, (std::vector<std::string>{
                        "/opt/rs/bin/radixserve", "container", "-n", "detokenizer:detokenizer", "-n", "worker:worker",
                        "-n", "scheduler:scheduler", "-n", "api:api", "--namespace", "default", "--process-name",
                        "radixserve_radixserve", "-p", "detokenizer.model:=m.gguf", "-p", "worker.model:=m.gguf", "-p",
                        "worker.device:=cpu", "-p", "worker.cuda_graphs:=false", "-p", "worker.threads:=3", "-p", "worker.context:=0", "-p", "worker.kv_type:=auto", "-p", "scheduler.model:=m.gguf", "-p",
                        "scheduler.policy:=lpm", "-p", "scheduler.cache:=radix", "-p", "scheduler.context:=0", "-p",
                        "api.model:=m.gguf", "-p", "api.port:=30000", "-p", "api.drain_timeout_s:=30", "-p",
                        "api.context:=0",
                        "--component-dir", "/opt/rs/lib"}));
}

TEST(ShippedFilesTest, UnknownPluginInArgsIsReportedAtTheParameter) {
  // The error points at the scheduler's policy parameter, wherever the file has it.
  std::ifstream in(RADIXSERVE_LAUNCH_DIR "/edge.yaml");
  std::string line;
  int policy_line = 0;
  for (int n = 1; std::getline(in, line); ++n)
    if (line.find("policy: \"$(var policy)\"") != std::string::npos) policy_line = n;
  ASSERT_GT(policy_line, 0);
  auto plan = PlanLaunch(RADIXSERVE_LAUNCH_DIR "/edge.yaml", {"policy:=fastest"});
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("edge.yaml:" + std::to_string(policy_line) + ":"), std::string::npos)
      << plan.status().message();
  EXPECT_NE(plan.status().message().find("unknown policy plugin 'fastest'"), std::string::npos);
}

// ---- validation errors, each with its position ----------------------------------------------

TEST_F(LaunchFileTest, UnknownKey) {
  auto f = Write("a.yaml",
                 "launch:\n"
                 "  - node:\n"
                 "      component: worker\n"
                 "      name: w\n"
                 "      respwan: true\n");
  ExpectOneError(f, 5, 7, "unknown key 'respwan' in node");
}

TEST_F(LaunchFileTest, WrongTypes) {
  auto f = Write("a.yaml",
                 "launch:\n"
                 "  - node:\n"
                 "      component: worker\n"
                 "      name: w\n"
                 "      respawn: \"maybe\"\n");
  ExpectOneError(f, 5, 16, "respawn: expected true or false, got 'maybe'");
  auto g = Write("b.yaml",
                 "launch:\n"
                 "  - node: {component: worker, name: w, respawn_delay: soon}\n");
  ExpectOneError(g, 2, 55, "respawn_delay: expected a number of seconds >= 0, got 'soon'");
  auto h = Write("c.yaml",
                 "launch:\n"
                 "  - node: {component: worker, name: w, parameters: {threads: [1, 2]}}\n");
  ExpectOneError(h, 2, 62, "parameter 'threads': expected a scalar value, got a list");
  auto i = Write("d.yaml",
                 "launch:\n"
                 "  - node: {component: worker, name: [w]}\n");
  ExpectOneError(i, 2, 37, "name: expected a scalar, got a list");
}

TEST_F(LaunchFileTest, MissingRequiredValues) {
  auto f = Write("a.yaml",
                 "launch:\n"
                 "  - node:\n"
                 "      name: w\n");
  ExpectOneError(f, 3, 7, "node: missing required key 'component'");
  auto g = Write("b.yaml",
                 "launch:\n"
                 "  - node: {component: worker}\n");
  ExpectOneError(g, 2, 11, "node: missing required key 'name'");
  auto h = Write("c.yaml",
                 "launch:\n"
                 "  - container:\n"
                 "      name: c\n"
                 "      nodes:\n"
                 "        - {name: x}\n");
  ExpectOneError(h, 5, 11, "container node: missing required key 'component'");
}

TEST_F(LaunchFileTest, UnknownComponent) {
  auto f = Write("a.yaml",
                 "launch:\n"
                 "  - node: {component: wrker, name: w}\n");
  ExpectOneError(f, 2, 23, "unknown component 'wrker'");
  auto g = Write("b.yaml",
                 "launch:\n"
                 "  - node: {component: plugins/libmine.so, name: w}\n");
  ExpectOneError(g, 2, 23, "component library '" + dir_ + "/plugins/libmine.so' does not exist");
}

TEST_F(LaunchFileTest, ComponentLibraryPathIsRelativeToTheFile) {
  Write("libmine.so", "not really a library, but it exists");
  auto f = Write("a.yaml",
                 "launch:\n"
                 "  - node: {component: ./libmine.so, name: mine}\n");
  auto plan = PlanLaunch(f, {});
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(plan->processes[0].argv[2], dir_ + "/libmine.so");
}

TEST_F(LaunchFileTest, UnknownPluginsCheckedAgainstTheGivenList) {
  auto f = Write("a.yaml",
                 "launch:\n"
                 "  - node:\n"
                 "      component: scheduler\n"
                 "      name: s\n"
                 "      parameters: {policy: lpm, cache: hiradix}\n");
  ExpectOneError(f, 5, 40, "unknown cache plugin 'hiradix' (known: radix, chunk)");
  ValidatorOptions more;
  more.caches = {"radix", "chunk", "hiradix"};
  EXPECT_TRUE(Errors(f, {}, more).empty());
  ValidatorOptions fewer;
  fewer.policies = {"fcfs"};
  fewer.caches = more.caches;
  ExpectOneError(f, 5, 28, "unknown policy plugin 'lpm' (known: fcfs)", {}, fewer);
}

TEST_F(LaunchFileTest, DuplicateNodeNamesAfterNamespaces) {
  auto f = Write("a.yaml",
                 "launch:\n"
                 "  - node: {component: worker, name: worker}\n"
                 "  - group:\n"
                 "      namespace: edge\n"
                 "      children:\n"
                 "        - node: {component: worker, name: worker}\n"
                 "  - container:\n"
                 "      name: engine\n"
                 "      nodes: [{component: worker, name: worker}]\n");
  ExpectOneError(f, 9, 41, "duplicate node name 'worker' in namespace 'default' (first defined at " + f + ":2:37)");
}

TEST_F(LaunchFileTest, BadNamesNamespacesAndRemaps) {
  auto f = Write("a.yaml",
                 "launch:\n"
                 "  - node: {component: worker, name: w.1}\n"
                 "  - node: {component: worker, name: w2, namespace: \"a b\", remap: [{from: x, to: \"y z\"}]}\n");
  auto errors = Errors(f);
  ASSERT_EQ(errors.size(), 3u) << JoinErrors(errors);
  EXPECT_EQ(errors[0].where.line, 2);
  EXPECT_NE(errors[0].message.find("node name 'w.1'"), std::string::npos);
  EXPECT_EQ(errors[1].where.line, 3);
  EXPECT_NE(errors[1].message.find("namespace 'a b'"), std::string::npos);
  EXPECT_EQ(errors[2].where.line, 3);
  EXPECT_NE(errors[2].message.find("remap:"), std::string::npos);
}

TEST_F(LaunchFileTest, ContainerOnlyKeysOnInnerNodes) {
  auto f = Write("a.yaml",
                 "launch:\n"
                 "  - container:\n"
                 "      name: c\n"
                 "      nodes:\n"
                 "        - {component: worker, name: w, respawn: true}\n");
  ExpectOneError(f, 5, 40, "'respawn' belongs to the container, not to a node inside it");
}

TEST_F(LaunchFileTest, UndefinedVar) {
  auto f = Write("a.yaml",
                 "launch:\n"
                 "  - arg: {name: model, default: m.gguf}\n"
                 "  - node:\n"
                 "      component: worker\n"
                 "      name: w\n"
                 "      parameters: {model: \"$(var modle)\"}\n");
  ExpectOneError(f, 6, 27, "undefined launch argument 'modle'");
}

TEST_F(LaunchFileTest, VarUsedBeforeItsDeclarationIsUndefined) {
  auto f = Write("a.yaml",
                 "launch:\n"
                 "  - node: {component: worker, name: \"$(var n)\"}\n"
                 "  - arg: {name: n, default: w}\n");
  ExpectOneError(f, 2, 37, "undefined launch argument 'n'");
}

TEST_F(LaunchFileTest, ArgWithoutDefaultNeedsAValue) {
  auto f = Write("a.yaml",
                 "launch:\n"
                 "  - arg: {name: model}\n"
                 "  - node: {component: worker, name: w, parameters: {model: \"$(var model)\"}}\n");
  ExpectOneError(f, 2, 17, "argument 'model' has no default and no value was given");
  EXPECT_TRUE(Errors(f, {"model:=x.gguf"}).empty());
}

TEST_F(LaunchFileTest, UndeclaredCommandLineArg) {
  auto f = Write("a.yaml",
                 "launch:\n"
                 "  - arg: {name: port, default: \"1\"}\n");
  auto errors = Errors(f, {"prot:=2"});
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].where.line, 0);
  EXPECT_NE(errors[0].message.find("argument 'prot' is not declared by " + f + " (it declares: port)"),
            std::string::npos);
  EXPECT_FALSE(ParseCommandLineArgs({"port=2"}).ok());
  EXPECT_FALSE(ParseCommandLineArgs({"port:=1", "port:=2"}).ok());
}

TEST_F(LaunchFileTest, YamlSyntaxErrorHasAPosition) {
  auto f = Write("a.yaml",
                 "launch:\n"
                 "  - node: {component: worker, name: w\n");
  auto errors = Errors(f);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_GE(errors[0].where.line, 2);
  EXPECT_NE(errors[0].message.find("YAML syntax error"), std::string::npos);
}

TEST_F(LaunchFileTest, NotALaunchFile) {
  ExpectOneError(Write("a.yaml", "nodes: []\n"), 1, 1, "unknown top-level key 'nodes'");
  ExpectOneError(Write("b.yaml", "launch:\n  - spawn: {}\n"), 2, 5, "unknown action 'spawn'");
}

TEST_F(LaunchFileTest, ManyErrorsAreReportedTogether) {
  auto f = Write("a.yaml",
                 "launch:\n"
                 "  - node: {component: wrker, name: a}\n"
                 "  - node: {component: worker, name: b, required: perhaps}\n"
                 "  - node: {component: scheduler, name: c, parameters: {policy: nope}}\n");
  auto plan = PlanLaunch(f, {});
  ASSERT_FALSE(plan.ok());
  const std::string& m = plan.status().message();
  EXPECT_NE(m.find(f + ":2:23: unknown component 'wrker'"), std::string::npos) << m;
  EXPECT_NE(m.find(f + ":3:50: required: expected true or false"), std::string::npos) << m;
  EXPECT_NE(m.find(f + ":4:64: unknown policy plugin 'nope'"), std::string::npos) << m;
}

// ---- include and group -----------------------------------------------------------------------

TEST_F(LaunchFileTest, IncludeWithArgsAndGroupNamespace) {
  Write("worker.yaml",
        "launch:\n"
        "  - arg: {name: model}\n"
        "  - arg: {name: threads, default: \"1\"}\n"
        "  - node: {component: worker, name: worker, parameters: {model: \"$(var model)\", threads: "
        "\"$(var threads)\"}}\n");
  auto top = Write("top.yaml",
                   "launch:\n"
                   "  - arg: {name: model, default: top.gguf}\n"
                   "  - include: {file: worker.yaml, args: {model: \"$(var model)\"}}\n"
                   "  - group:\n"
                   "      namespace: edge\n"
                   "      children:\n"
                   "        - arg: {name: inner, default: \"8\"}\n"
                   "        - include: {file: worker.yaml, args: {model: b.gguf, threads: \"$(var inner)\"}}\n");
  auto plan = PlanLaunch(top, {"model:=cli.gguf"});
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  ASSERT_EQ(plan->processes.size(), 2u);
  EXPECT_EQ(plan->processes[0].name, "worker");
  EXPECT_EQ(plan->processes[0].nodes[0].Param("model"), "cli.gguf");
  EXPECT_EQ(plan->processes[0].nodes[0].Param("threads"), "1");
  EXPECT_EQ(plan->processes[1].name, "edge/worker");
  EXPECT_EQ(plan->processes[1].ns, "edge");
  EXPECT_EQ(plan->processes[1].process_name, "radixserve_edge_worker");
  EXPECT_EQ(plan->processes[1].nodes[0].Param("model"), "b.gguf");
  EXPECT_EQ(plan->processes[1].nodes[0].Param("threads"), "8");
  // The top-level file's args (a group's too), not the included file's.
  EXPECT_EQ(plan->args, (std::map<std::string, std::string>{{"inner", "8"}, {"model", "cli.gguf"}}));
}

TEST_F(LaunchFileTest, GroupArgsStayInTheGroup) {
  auto f = Write("a.yaml",
                 "launch:\n"
                 "  - group:\n"
                 "      children:\n"
                 "        - arg: {name: x, default: w}\n"
                 "  - node: {component: worker, name: \"$(var x)\"}\n");
  ExpectOneError(f, 5, 37, "undefined launch argument 'x'");
}

TEST_F(LaunchFileTest, IncludedFileDoesNotSeeTheIncludersArgs) {
  Write("inner.yaml", "launch:\n  - node: {component: worker, name: \"$(var model)\"}\n");
  auto top = Write("top.yaml",
                   "launch:\n"
                   "  - arg: {name: model, default: m}\n"
                   "  - include: {file: inner.yaml}\n");
  auto errors = Errors(top);
  ASSERT_EQ(errors.size(), 1u) << JoinErrors(errors);
  EXPECT_EQ(errors[0].where.file, dir_ + "/inner.yaml");
  EXPECT_EQ(errors[0].where.line, 2);
  EXPECT_NE(errors[0].message.find("undefined launch argument 'model'"), std::string::npos);
}

TEST_F(LaunchFileTest, IncludeArgNotDeclaredByTheIncludedFile) {
  Write("inner.yaml", "launch:\n  - arg: {name: port, default: \"1\"}\n");
  auto top = Write("top.yaml",
                   "launch:\n"
                   "  - include: {file: inner.yaml, args: {prot: \"2\"}}\n");
  ExpectOneError(top, 2, 46, "argument 'prot' is not declared by " + dir_ + "/inner.yaml");
}

TEST_F(LaunchFileTest, IncludeCycle) {
  Write("a.yaml", "launch:\n  - include: {file: b.yaml}\n");
  Write("b.yaml",
        "launch:\n"
        "  - node: {component: worker, name: w}\n"
        "  - include: {file: a.yaml}\n");
  auto errors = Errors(dir_ + "/a.yaml");
  ASSERT_EQ(errors.size(), 1u) << JoinErrors(errors);
  EXPECT_EQ(errors[0].where.file, dir_ + "/b.yaml");
  EXPECT_EQ(errors[0].where.line, 3);
  EXPECT_EQ(errors[0].where.column, 21);
  EXPECT_NE(errors[0].message.find("include cycle: " + dir_ + "/a.yaml -> " + dir_ + "/b.yaml -> " + dir_ +
                                   "/a.yaml"),
            std::string::npos)
      << errors[0].message;
}

TEST_F(LaunchFileTest, MissingIncludeFile) {
  auto f = Write("a.yaml", "launch:\n  - include: {file: sub/none.yaml}\n");
  ExpectOneError(f, 2, 21, "included file '" + dir_ + "/sub/none.yaml' does not exist");
}

TEST_F(LaunchFileTest, MissingTopLevelFile) {
  auto plan = PlanLaunch(dir_ + "/nope.yaml", {});
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("cannot open launch file"), std::string::npos);
}

// ---- plan ordering -----------------------------------------------------------------------------

TEST_F(LaunchFileTest, StartOrderFollowsTheRankRuleNotTheFile) {
  auto f = Write("a.yaml",
                 "launch:\n"
                 "  - node: {component: api, name: api}\n"
                 "  - node: {component: scheduler, name: scheduler, respawn: true, respawn_delay: 0.5}\n"
                 "  - container:\n"
                 "      name: engine\n"
                 "      nodes:\n"
                 "        - {component: scheduler, name: s2}\n"
                 "        - {component: worker, name: w2}\n"
                 "  - node: {component: worker, name: worker}\n"
                 "  - node: {component: detokenizer, name: detokenizer}\n");
  auto plan = PlanLaunch(f, {});
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  std::vector<std::string> order;
  for (const auto& p : plan->processes) order.push_back(p.name);
  EXPECT_EQ(order, (std::vector<std::string>{"worker", "detokenizer", "scheduler", "engine", "api"}));
  const ProcessPlan* engine = plan->Find("engine");
  EXPECT_EQ(engine->nodes[0].name, "w2");
  EXPECT_EQ(engine->nodes[1].name, "s2");
  EXPECT_EQ(engine->rank, 1);
  const ProcessPlan* s = plan->Find("scheduler");
  EXPECT_TRUE(s->respawn);
  EXPECT_DOUBLE_EQ(s->respawn_delay, 0.5);
  EXPECT_FALSE(s->required);
  EXPECT_EQ(StartRank("detokenizer"), 0);
  EXPECT_EQ(StartRank("worker"), 0);
  EXPECT_EQ(StartRank("scheduler"), 1);
  EXPECT_EQ(StartRank("api"), 2);
}

TEST_F(LaunchFileTest, RemapsAndNamespacesReachTheArgv) {
  auto f = Write("a.yaml",
                 "launch:\n"
                 "  - group:\n"
                 "      namespace: edge\n"
                 "      children:\n"
                 "        - node:\n"
                 "            component: worker\n"
                 "            name: w\n"
                 "            namespace: gpu0\n"
                 "            remap: [{from: forward_batch, to: fb}]\n");
  auto plan = PlanLaunch(f, {});
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(plan->processes[0].argv,
            (std::vector<std::string>{"radixserve", "node", "worker", "--name", "w", "--namespace", "edge.gpu0",
                                      "--process-name", "radixserve_edge.gpu0_w", "-r", "forward_batch:=fb"}));
}

}  // namespace
}  // namespace radixserve::launch
