// radixserve: the command line. Subcommands live in cmd_*.cc.
#include <CLI/CLI.hpp>
#include <glog/logging.h>

#include <cstdio>
#include <memory>

#include "tools/command.h"
#include "transport/robust_ipc.h"

namespace radixserve::tools {
std::vector<Command>& CommandList() {
  static std::vector<Command> list;
  return list;
}
}  // namespace radixserve::tools

int main(int argc, char** argv) {
  // Before anything else runs: every process of the pipeline recovers shared-memory locks whose
  // owner was killed (robust_ipc.h); this execs once with the library preloaded.
  radixserve::transport::ReexecWithRobustIpc(argv);
  google::InitGoogleLogging(argv[0]);
  FLAGS_logtostderr = true;
  CLI::App app{"radixserve: an LLM serving engine with a radix prefix cache"};
  app.require_subcommand(1);
  std::function<int()> run;
  for (auto& cmd : radixserve::tools::CommandList()) {
    CLI::App* sub = app.add_subcommand(cmd.name, cmd.help);
    auto fn = std::make_shared<std::function<int()>>(cmd.setup(*sub));
    sub->callback([fn, &run] { run = *fn; });
  }
  CLI11_PARSE(app, argc, argv);
  return run ? run() : 0;
}
