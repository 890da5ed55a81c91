// LaunchDescription: what a launch file (with its includes) asks for, after
// arguments and substitutions are resolved, with the source location of
// every value so that validation errors can point at the file, line and
// column that caused them. Plain data; thread-compatible.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace radixserve::launch {

// Where a value came from: 1-based line and column, or line 0 for the command line.
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;
  // "file:line:column", or just "file" when there is no line.
  std::string ToString() const;
};

// One problem found in a launch file; ToString() is "file:line:column: message".
struct LaunchError {
  SourceLocation where;
  std::string message;
  std::string ToString() const;
};

struct ParamEntry {
  std::string key;
  std::string value;  // text as the node's -p key:=value receives it
  SourceLocation at;  // the value
};

struct RemapEntry {
  std::string from, to;
  SourceLocation at;
};

struct NodeDescription {
  std::string component;  // built-in name, or an absolute path to a component .so
  std::string name;
  std::vector<ParamEntry> params;
  SourceLocation at;            // the node entry
  SourceLocation component_at;
  SourceLocation name_at;
};

// One process: a single node (`radixserve node`) or a container of nodes (`radixserve container`).
struct ProcessDescription {
  enum class Kind { kNode, kContainer };
  Kind kind = Kind::kNode;
  std::string name;             // the node's name, or the container's
  std::string ns = "default";   // topic namespace (groups prefix theirs, joined with '.')
  std::vector<NodeDescription> nodes;  // exactly one for kNode
  std::vector<RemapEntry> remaps;
  bool respawn = false;
  double respawn_delay = 0.0;   // seconds
  bool required = false;
  SourceLocation at;
  SourceLocation name_at;
  SourceLocation ns_at;
};

struct LaunchDescription {
  std::vector<ProcessDescription> processes;  // in file order (includes expanded in place)
  std::map<std::string, std::string> args;    // the top-level file's resolved arguments
};

// Joins errors one per line.
std::string JoinErrors(const std::vector<LaunchError>& errors);

}  // namespace radixserve::launch
