// Starts the pipeline and runs a Node.js client script against it (openai_client_test.mjs, the
// structured-output and tool-call scripts): tests/pipeline/CMakeLists.txt sets, per test, the
// script, the folder of pinned clients (scripts/install-npm-clients.sh), the package the script
// needs, the line its last check prints and the chat template the api is launched with.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "tests/pipeline/pipeline_fixture.h"

#ifndef CLIENT_REQUIRED_PACKAGE
#define CLIENT_REQUIRED_PACKAGE "openai"
#endif

namespace radixserve::pipeline_test {
namespace {

// CLIENT_CHAT_TEMPLATE: the path of a template file the api renders chats with.
PipelineOptions Options() {
  PipelineOptions o;
#ifdef CLIENT_CHAT_TEMPLATE
  o.api_params = {"chat_template:=" CLIENT_CHAT_TEMPLATE};
#endif
  return o;
}
PipelineEnvironment* const g_env = RegisterPipeline(Options());

TEST(OpenAiClient, NodeScriptPasses) {
  ASSERT_TRUE(std::filesystem::exists(std::string(PIPELINE_NPM_DIR) + "/node_modules/" CLIENT_REQUIRED_PACKAGE
                                      "/package.json"))
      << "the " CLIENT_REQUIRED_PACKAGE " npm package is not installed in " << PIPELINE_NPM_DIR
      << " (scripts/install-deps.sh installs the pinned clients there: install-npm-clients.sh)";
  // NPM_DIR for every script; OPENAI_NPM_DIR is the name the openai scripts read.
  std::string cmd = std::string("NPM_DIR='") + PIPELINE_NPM_DIR + "' OPENAI_NPM_DIR='" + PIPELINE_NPM_DIR + "' '" +
                    NODE_EXECUTABLE + "' '" + OPENAI_CLIENT_SCRIPT + "' '" + g_env->pipeline().base_url() + "' 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof(buf), p)) > 0;) out.append(buf, n);
  int st = ::pclose(p);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << cmd << "\n" << out;
  EXPECT_NE(out.find(CLIENT_EXPECT_LINE), std::string::npos) << out;
  std::printf("%s", out.c_str());
}

}  // namespace
}  // namespace radixserve::pipeline_test
