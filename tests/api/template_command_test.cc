// `radixserve template`: prints exactly what a chat template renders (nothing added), over every
// conversation of shared/templates for a few real templates (tools and tool calls included), and
// exits non-zero with the template's own message when it raises.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace radixserve::api {
namespace {

using nlohmann::ordered_json;

std::string Shared(const std::string& name) { return std::string(RADIXSERVE_SHARED_DIR) + "/templates/" + name; }

ordered_json ReadJson(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ordered_json::parse(ss.str());
}

void WriteFile(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// Runs the command; its stdout and stderr (apart) and exit status.
struct CommandRun {
  std::string out, err;
  int status = -1;
};
CommandRun RunTemplate(const std::string& args) {
  const std::string dir = ::testing::TempDir();
  const std::string cmd = std::string(RADIXSERVE_BINARY_DIR) + "/bin/radixserve template " + args + " > " + dir +
                          "/tpl.out 2> " + dir + "/tpl.err";
  CommandRun r;
  const int raw = std::system(cmd.c_str());
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  std::ifstream out(dir + "/tpl.out", std::ios::binary), err(dir + "/tpl.err");
  std::stringstream o, e;
  o << out.rdbuf();
  e << err.rdbuf();
  r.out = o.str();
  r.err = e.str();
  return r;
}

TEST(TemplateCommand, PrintsExactlyWhatJinja2RendersOrFailsWithTheTemplatesMessage) {
  const ordered_json expected = ReadJson(Shared("expected.json"));
  const ordered_json conversations = ReadJson(Shared("conversations.json"));
  const std::string dir = ::testing::TempDir();
  int rendered = 0, raised = 0;
  for (const char* name : {"Qwen-Qwen2.5-7B-Instruct", "meta-llama-Llama-3.1-8B-Instruct",
                           "mistralai-Mistral-Nemo-Instruct-2407"}) {
    for (const auto& c : conversations["cases"]) {
      const std::string id = c["id"].get<std::string>();
      WriteFile(dir + "/messages.json", c["messages"].dump());
      std::string tools;
      if (c.contains("tools")) {
        WriteFile(dir + "/tools.json", c["tools"].dump());
        tools = " --tools " + dir + "/tools.json";
      }
      for (const bool gen : {true, false}) {
        const std::string key = id + (gen ? "/gen" : "/nogen");
        if (!expected[name].contains(key)) continue;
        const ordered_json& want = expected[name][key];
        const CommandRun r = RunTemplate("--template " + Shared(std::string(name) + ".jinja") + " --messages " + dir +
                                  "/messages.json" + tools + (gen ? "" : " --no-generation-prompt") + " --bos '" +
                                  want["bos_token"].get<std::string>() + "' --eos '" +
                                  want["eos_token"].get<std::string>() + "' --now 2026-01-15T12:00:00");
        if (want.contains("rendered")) {
          ++rendered;
          EXPECT_EQ(r.status, 0) << name << " " << key << ": " << r.err;
          EXPECT_EQ(r.out, want["rendered"].get<std::string>()) << name << " " << key;
        } else {
          ++raised;
          EXPECT_NE(r.status, 0) << name << " " << key;
          EXPECT_TRUE(r.out.empty()) << name << " " << key;
          if (want["error_type"] == "TemplateError") {
            EXPECT_NE(r.err.find(want["error"].get<std::string>()), std::string::npos)
                << name << " " << key << ": " << r.err;
          }
        }
      }
    }
  }
  EXPECT_GT(rendered, 30);
  EXPECT_GT(raised, 2);
}

TEST(TemplateCommand, BadInvocationsSayWhy) {
  CommandRun none = RunTemplate("--messages /nonexistent.json");
  EXPECT_EQ(none.status, 2);
  EXPECT_NE(none.err.find("give --model or --template"), std::string::npos) << none.err;
  CommandRun missing = RunTemplate("--template " + Shared("Qwen-Qwen2.5-7B-Instruct.jinja") + " --messages /nonexistent.json");
  EXPECT_EQ(missing.status, 1);
  EXPECT_NE(missing.err.find("cannot read /nonexistent.json"), std::string::npos) << missing.err;
}

}  // namespace
}  // namespace radixserve::api
