// Starts the pipeline and runs openai_client_test.mjs (the official `openai` npm client,
// installed by the pipeline_npm_install ctest fixture) against it.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "tests/pipeline/pipeline_fixture.h"

namespace radixserve::pipeline_test {
namespace {

PipelineEnvironment* const g_env = RegisterPipeline({});

TEST(OpenAiClient, NodeScriptPasses) {
  ASSERT_TRUE(std::filesystem::exists(std::string(PIPELINE_NPM_DIR) + "/node_modules/openai/package.json"))
      << "the openai npm package is not installed in " << PIPELINE_NPM_DIR
      << " (ctest runs the pipeline_npm_install fixture first)";
  std::string cmd = std::string("OPENAI_NPM_DIR='") + PIPELINE_NPM_DIR + "' '" + NODE_EXECUTABLE + "' '" +
                    OPENAI_CLIENT_SCRIPT + "' '" + g_env->pipeline().base_url() + "' 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof(buf), p)) > 0;) out.append(buf, n);
  int st = ::pclose(p);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << cmd << "\n" << out;
  EXPECT_NE(out.find("ok   twoChoices"), std::string::npos) << out;
  std::printf("%s", out.c_str());
}

}  // namespace
}  // namespace radixserve::pipeline_test
