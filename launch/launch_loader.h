// LaunchLoader: reads a YAML launch file (and the files it includes) into a
// LaunchDescription, resolving arguments and substitutions, and collecting
// every format error with its file, line and column. The format:
//
//   launch:
//     - arg: {name: model, default: "", description: "GGUF model path"}
//     - node: {component: worker, name: worker, namespace: ns, parameters: {k: v},
//              remap: [{from: a, to: b}], respawn: true, respawn_delay: 1.0, required: false}
//     - container: {name: engine, namespace: ns, nodes: [{component, name, parameters}, ...],
//                   remap: [...], respawn: ..., respawn_delay: ..., required: ...}
//     - group: {namespace: edge, children: [ ...actions... ]}
//     - include: {file: other.yaml, args: {port: "8080"}}
//
// Rules (see launch/README.md for the long form):
//  - An arg is visible to the actions after it in its own list and in nested groups; one declared
//    inside a group is not visible outside it. Its value is, in order: the value given on the
//    command line (top-level file) or by the include (included file), else its default; with
//    neither it is an error. Giving a value for an argument the file does not declare is an error.
//  - An included file sees only the args its include passes (and its own defaults), never the
//    includer's: pass what it needs explicitly, e.g. args: {model: "$(var model)"}.
//  - Every scalar value (not keys) goes through Substitute() (launch/substitution.h).
//  - Group namespaces nest, joined with '.'; a node's or container's own namespace is appended.
//    Without any namespace a process uses "default". Included files inherit the include's
//    enclosing namespace.
//  - A node inside a container takes the container's namespace, remaps and respawn settings.
//  - A component that contains '/' or ends in ".so" is a library path, relative to the file.
//  - Relative include paths are relative to the including file.
// Thread-compatible; one loader per load.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/util/status.h"
#include "launch/launch_description.h"
#include "launch/substitution.h"

namespace YAML {
class Node;
}

namespace radixserve::launch {

// Argument values given to a file, by the command line or by an include.
struct ProvidedArg {
  std::string value;
  SourceLocation at;
};
using ProvidedArgs = std::map<std::string, ProvidedArg>;

// Parses command-line "name:=value" arguments (the ROS 2 spelling).
Result<ProvidedArgs> ParseCommandLineArgs(const std::vector<std::string>& args);

class LaunchLoader {
 public:
  // Loads `path`. Returns true when no error was found; errors() lists them otherwise.
  bool Load(const std::string& path, const ProvidedArgs& args);
  const LaunchDescription& description() const { return desc_; }
  const std::vector<LaunchError>& errors() const { return errors_; }

 private:
  struct Scope {
    ArgValues vars;
    std::string ns;  // enclosing group namespaces, joined with '.'; empty for none
  };
  struct FileContext {
    std::string path;  // as shown in errors
    std::string dir;
    const ProvidedArgs* provided;
    std::set<std::string> declared;
    bool top_level;
  };

  void LoadFile(const std::string& path, const ProvidedArgs& args, const Scope& outer, const SourceLocation& from,
                bool top_level);
  void LoadActions(const YAML::Node& list, Scope scope, FileContext& file);
  void LoadArg(const YAML::Node& body, Scope& scope, FileContext& file);
  void LoadNode(const YAML::Node& body, const Scope& scope, FileContext& file);
  void LoadContainer(const YAML::Node& body, const Scope& scope, FileContext& file);
  void LoadGroup(const YAML::Node& body, const Scope& scope, FileContext& file);
  void LoadInclude(const YAML::Node& body, const Scope& scope, FileContext& file);
  bool LoadInnerNode(const YAML::Node& item, const Scope& scope, FileContext& file, NodeDescription* out);
  // Shared keys of node and container: namespace, remap, respawn, respawn_delay, required.
  bool LoadProcessKey(const std::string& key, const YAML::Node& value, const Scope& scope, FileContext& file,
                      ProcessDescription* p);
  void LoadParameters(const YAML::Node& value, const Scope& scope, FileContext& file, std::vector<ParamEntry>* out);

  // Scalar helpers: false (with an error recorded) when the value is not a scalar or fails.
  bool Text(const YAML::Node& n, const std::string& what, const Scope& scope, FileContext& file, std::string* out);
  bool Bool(const YAML::Node& n, const std::string& what, const Scope& scope, FileContext& file, bool* out);
  bool Seconds(const YAML::Node& n, const std::string& what, const Scope& scope, FileContext& file, double* out);
  bool IsMap(const YAML::Node& n, const std::string& what, FileContext& file);
  std::string ResolveComponent(const std::string& component, const FileContext& file) const;
  static std::string JoinNamespace(const std::string& outer, const std::string& inner);

  SourceLocation At(const YAML::Node& n, const FileContext& file) const;
  void Error(const SourceLocation& at, std::string message);

  LaunchDescription desc_;
  std::vector<LaunchError> errors_;
  std::vector<std::pair<std::string, SourceLocation>> include_stack_;  // canonical path, where included
};

// LaunchLoader::Load as a Result; the error's message holds every error, one per line.
Result<LaunchDescription> LoadLaunchFile(const std::string& path, const ProvidedArgs& args);

}  // namespace radixserve::launch
