// Subcommand registry of the radixserve CLI. Each cmd_*.cc file registers
// one subcommand with a static CommandRegistrar; main() dispatches by name.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace CLI { class App; }

namespace radixserve::tools {

struct Command {
  std::string name;
  std::string help;
  // Adds options to `sub`; returns the function run when the subcommand is chosen (exit code).
  std::function<std::function<int()>(CLI::App& sub)> setup;
};

std::vector<Command>& CommandList();

struct CommandRegistrar {
  explicit CommandRegistrar(Command c) { CommandList().push_back(std::move(c)); }
};

}  // namespace radixserve::tools
