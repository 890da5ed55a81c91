#include "launch/launch_loader.h"

#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

namespace radixserve::launch {
namespace fs = std::filesystem;

namespace {

const char* NodeTypeName(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Null: return "nothing";
    case YAML::NodeType::Scalar: return "a scalar";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Map: return "a map";
    default: return "an undefined value";
  }
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool IsArgName(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) return false;
  return true;
}

std::string KeyList(std::initializer_list<const char*> keys) {
  std::string out;
  for (const char* k : keys) out += std::string(out.empty() ? "" : ", ") + k;
  return out;
}

}  // namespace

Result<ProvidedArgs> ParseCommandLineArgs(const std::vector<std::string>& args) {
  ProvidedArgs out;
  for (const auto& a : args) {
    size_t eq = a.find(":=");
    if (eq == std::string::npos || eq == 0)
      return Status::InvalidArgument("launch argument '" + a + "' must be written name:=value");
    std::string name = a.substr(0, eq);
    if (!IsArgName(name)) return Status::InvalidArgument("launch argument name '" + name + "' is not a valid name");
    if (out.count(name)) return Status::InvalidArgument("launch argument '" + name + "' is given twice");
    out[name] = ProvidedArg{a.substr(eq + 2), SourceLocation{"<command line: " + a + ">", 0, 0}};
  }
  return out;
}

SourceLocation LaunchLoader::At(const YAML::Node& n, const FileContext& file) const {
  YAML::Mark m = n.Mark();
  if (m.is_null()) return SourceLocation{file.path, 0, 0};
  return SourceLocation{file.path, m.line + 1, m.column + 1};
}

void LaunchLoader::Error(const SourceLocation& at, std::string message) {
  errors_.push_back(LaunchError{at, std::move(message)});
}

bool LaunchLoader::Load(const std::string& path, const ProvidedArgs& args) {
  desc_ = LaunchDescription{};
  errors_.clear();
  include_stack_.clear();
  LoadFile(path, args, Scope{}, SourceLocation{"<command line>", 0, 0}, /*top_level=*/true);
  return errors_.empty();
}

void LaunchLoader::LoadFile(const std::string& path, const ProvidedArgs& args, const Scope& outer,
                            const SourceLocation& from, bool top_level) {
  std::error_code ec;
  std::string canonical = fs::weakly_canonical(fs::path(path), ec).string();
  if (ec) canonical = path;
  for (size_t i = 0; i < include_stack_.size(); ++i) {
    if (include_stack_[i].first != canonical) continue;
    std::string chain;
    for (size_t j = i; j < include_stack_.size(); ++j) chain += include_stack_[j].first + " -> ";
    Error(from, "include cycle: " + chain + canonical);
    return;
  }

  std::ifstream in(path, std::ios::binary);
  if (!in) {
    Error(from, top_level ? "cannot open launch file '" + path + "'"
                          : "included file '" + path + "' does not exist or cannot be read");
    return;
  }
  std::stringstream text;
  text << in.rdbuf();

  FileContext file{path, fs::path(path).parent_path().string(), &args, {}, top_level};
  YAML::Node root;
  try {
    root = YAML::Load(text.str());
  } catch (const YAML::Exception& e) {
    Error(SourceLocation{path, e.mark.line + 1, e.mark.column + 1}, "YAML syntax error: " + e.msg);
    return;
  }
  if (!root.IsMap()) {
    Error(SourceLocation{path, 1, 1}, std::string("a launch file is a map with one key 'launch', got ") +
                                          NodeTypeName(root));
    return;
  }
  include_stack_.emplace_back(canonical, from);
  bool found = false, unknown = false;
  for (auto it = root.begin(); it != root.end(); ++it) {
    std::string key = it->first.Scalar();
    if (key != "launch") {
      Error(At(it->first, file), "unknown top-level key '" + key + "' (expected 'launch')");
      unknown = true;
      continue;
    }
    found = true;
    if (!it->second.IsSequence()) {
      Error(At(it->second, file), std::string("'launch' must be a list of actions, got ") + NodeTypeName(it->second));
      continue;
    }
    Scope scope;
    scope.ns = outer.ns;
    LoadActions(it->second, scope, file);
  }
  if (!found && !unknown) Error(SourceLocation{path, 1, 1}, "missing top-level key 'launch'");
  include_stack_.pop_back();

  for (const auto& [name, arg] : args) {
    if (file.declared.count(name)) continue;
    std::string declared;
    for (const auto& d : file.declared) declared += (declared.empty() ? "" : ", ") + d;
    Error(arg.at, "argument '" + name + "' is not declared by " + path +
                      (declared.empty() ? " (it declares none)" : " (it declares: " + declared + ")"));
  }
}

void LaunchLoader::LoadActions(const YAML::Node& list, Scope scope, FileContext& file) {
  for (const YAML::Node& item : list) {
    if (!item.IsMap() || item.size() != 1) {
      Error(At(item, file), std::string("each action is a map with one key (arg, node, container, group or "
                                        "include), got ") +
                                (item.IsMap() ? std::to_string(item.size()) + " keys" : NodeTypeName(item)));
      continue;
    }
    auto it = item.begin();
    std::string kind = it->first.Scalar();
    YAML::Node body = it->second;
    if (kind == "arg") {
      LoadArg(body, scope, file);
    } else if (kind == "node") {
      LoadNode(body, scope, file);
    } else if (kind == "container") {
      LoadContainer(body, scope, file);
    } else if (kind == "group") {
      LoadGroup(body, scope, file);
    } else if (kind == "include") {
      LoadInclude(body, scope, file);
    } else {
      Error(At(it->first, file), "unknown action '" + kind + "' (expected arg, node, container, group or include)");
    }
  }
}

bool LaunchLoader::IsMap(const YAML::Node& n, const std::string& what, FileContext& file) {
  if (n.IsMap()) return true;
  Error(At(n, file), what + " must be a map, got " + NodeTypeName(n));
  return false;
}

bool LaunchLoader::Text(const YAML::Node& n, const std::string& what, const Scope& scope, FileContext& file,
                        std::string* out) {
  if (n.IsNull()) {
    *out = "";
    return true;
  }
  if (!n.IsScalar()) {
    Error(At(n, file), what + ": expected a scalar, got " + NodeTypeName(n));
    return false;
  }
  auto v = Substitute(n.Scalar(), scope.vars);
  if (!v.ok()) {
    Error(At(n, file), what + ": " + v.status().message());
    return false;
  }
  *out = std::move(*v);
  return true;
}

bool LaunchLoader::Bool(const YAML::Node& n, const std::string& what, const Scope& scope, FileContext& file,
                        bool* out) {
  std::string text;
  if (!Text(n, what, scope, file, &text)) return false;
  std::string l = Lower(text);
  if (l == "true" || l == "false") {
    *out = l == "true";
    return true;
  }
  Error(At(n, file), what + ": expected true or false, got '" + text + "'");
  return false;
}

bool LaunchLoader::Seconds(const YAML::Node& n, const std::string& what, const Scope& scope, FileContext& file,
                           double* out) {
  std::string text;
  if (!Text(n, what, scope, file, &text)) return false;
  char* end = nullptr;
  errno = 0;
  double v = text.empty() ? NAN : std::strtod(text.c_str(), &end);
  if (text.empty() || errno != 0 || *end != '\0' || !std::isfinite(v) || v < 0) {
    Error(At(n, file), what + ": expected a number of seconds >= 0, got '" + text + "'");
    return false;
  }
  *out = v;
  return true;
}

void LaunchLoader::LoadArg(const YAML::Node& body, Scope& scope, FileContext& file) {
  if (!IsMap(body, "arg", file)) return;
  std::string name, def;
  bool has_name = false, has_default = false;
  SourceLocation name_at = At(body, file);
  for (auto it = body.begin(); it != body.end(); ++it) {
    std::string key = it->first.Scalar();
    if (key == "name") {
      if (!it->second.IsScalar()) {
        Error(At(it->second, file), std::string("arg name: expected a scalar, got ") + NodeTypeName(it->second));
        return;
      }
      name = it->second.Scalar();  // names are never substituted
      name_at = At(it->second, file);
      has_name = true;
    } else if (key == "default") {
      if (!Text(it->second, "arg default", scope, file, &def)) return;
      has_default = true;
    } else if (key == "description") {
      if (!it->second.IsScalar() && !it->second.IsNull())
        Error(At(it->second, file), std::string("arg description: expected a scalar, got ") +
                                        NodeTypeName(it->second));
    } else {
      Error(At(it->first, file), "unknown key '" + key + "' in arg (expected " +
                                     KeyList({"name", "default", "description"}) + ")");
    }
  }
  if (!has_name) {
    Error(At(body, file), "arg: missing required key 'name'");
    return;
  }
  if (!IsArgName(name)) {
    Error(name_at, "arg name '" + name + "' may only hold letters, digits, '_' and '-'");
    return;
  }
  if (file.declared.count(name)) Error(name_at, "argument '" + name + "' is declared twice in " + file.path);
  file.declared.insert(name);
  auto given = file.provided->find(name);
  std::string value;
  if (given != file.provided->end()) {
    value = given->second.value;
  } else if (has_default) {
    value = def;
  } else {
    Error(name_at, "argument '" + name + "' has no default and no value was given (pass " + name + ":=VALUE" +
                       (file.top_level ? " on the command line)" : " in the include's args)"));
  }
  scope.vars[name] = value;  // set even on error so later $(var) do not cascade
  if (file.top_level) desc_.args[name] = value;
}

std::string LaunchLoader::JoinNamespace(const std::string& outer, const std::string& inner) {
  if (outer.empty()) return inner;
  if (inner.empty()) return outer;
  return outer + "." + inner;
}

std::string LaunchLoader::ResolveComponent(const std::string& component, const FileContext& file) const {
  bool is_path = component.find('/') != std::string::npos ||
                 (component.size() > 3 && component.compare(component.size() - 3, 3, ".so") == 0);
  if (!is_path) return component;
  fs::path p(component);
  if (p.is_relative()) p = fs::absolute(fs::path(file.dir) / p);
  return p.lexically_normal().string();
}

bool LaunchLoader::LoadProcessKey(const std::string& key, const YAML::Node& value, const Scope& scope,
                                  FileContext& file, ProcessDescription* p) {
  if (key == "namespace") {
    std::string ns;
    if (Text(value, "namespace", scope, file, &ns)) p->ns = ns;
    p->ns_at = At(value, file);
  } else if (key == "remap") {
    if (!value.IsSequence()) {
      Error(At(value, file), std::string("remap must be a list of {from, to}, got ") + NodeTypeName(value));
      return true;
    }
    for (const YAML::Node& r : value) {
      if (!IsMap(r, "remap entry", file)) continue;
      RemapEntry e;
      e.at = At(r, file);
      bool has_from = false, has_to = false;
      for (auto it = r.begin(); it != r.end(); ++it) {
        std::string k = it->first.Scalar();
        if (k == "from") {
          has_from = Text(it->second, "remap from", scope, file, &e.from);
        } else if (k == "to") {
          has_to = Text(it->second, "remap to", scope, file, &e.to);
        } else {
          Error(At(it->first, file), "unknown key '" + k + "' in remap (expected from, to)");
        }
      }
      if (!r["from"]) Error(e.at, "remap: missing required key 'from'");
      if (!r["to"]) Error(e.at, "remap: missing required key 'to'");
      if (has_from && has_to) p->remaps.push_back(std::move(e));
    }
  } else if (key == "respawn") {
    Bool(value, "respawn", scope, file, &p->respawn);
  } else if (key == "respawn_delay") {
    Seconds(value, "respawn_delay", scope, file, &p->respawn_delay);
  } else if (key == "required") {
    Bool(value, "required", scope, file, &p->required);
  } else {
    return false;
  }
  return true;
}

void LaunchLoader::LoadParameters(const YAML::Node& value, const Scope& scope, FileContext& file,
                                  std::vector<ParamEntry>* out) {
  if (value.IsNull()) return;
  if (!IsMap(value, "parameters", file)) return;
  for (auto it = value.begin(); it != value.end(); ++it) {
    std::string key = it->first.Scalar();
    bool ok_key = !key.empty();
    for (char c : key) ok_key = ok_key && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
    if (!ok_key) {
      Error(At(it->first, file), "parameter name '" + key + "' may only hold letters, digits and '_'");
      continue;
    }
    for (const auto& p : *out)
      if (p.key == key) Error(At(it->first, file), "parameter '" + key + "' is set twice");
    ParamEntry e;
    e.key = key;
    e.at = At(it->second, file);
    if (!it->second.IsScalar() && !it->second.IsNull()) {
      Error(e.at, "parameter '" + key + "': expected a scalar value, got " + NodeTypeName(it->second));
      continue;
    }
    if (Text(it->second, "parameter '" + key + "'", scope, file, &e.value)) out->push_back(std::move(e));
  }
}

void LaunchLoader::LoadNode(const YAML::Node& body, const Scope& scope, FileContext& file) {
  if (!IsMap(body, "node", file)) return;
  ProcessDescription p;
  p.kind = ProcessDescription::Kind::kNode;
  p.at = At(body, file);
  NodeDescription n;
  n.at = p.at;
  bool has_component = false, has_name = false;
  std::string own_ns;
  for (auto it = body.begin(); it != body.end(); ++it) {
    std::string key = it->first.Scalar();
    YAML::Node v = it->second;
    if (key == "component") {
      has_component = Text(v, "component", scope, file, &n.component);
      n.component_at = At(v, file);
      if (has_component && n.component.empty()) {
        Error(n.component_at, "component must not be empty");
        has_component = false;
      }
      if (has_component) n.component = ResolveComponent(n.component, file);
    } else if (key == "name") {
      has_name = Text(v, "name", scope, file, &n.name);
      n.name_at = p.name_at = At(v, file);
      if (has_name && n.name.empty()) {
        Error(n.name_at, "name must not be empty");
        has_name = false;
      }
    } else if (key == "parameters") {
      LoadParameters(v, scope, file, &n.params);
    } else if (key == "namespace") {
      p.ns_at = At(v, file);
      Text(v, "namespace", scope, file, &own_ns);
    } else if (!LoadProcessKey(key, v, scope, file, &p)) {
      Error(At(it->first, file), "unknown key '" + key + "' in node (expected " +
                                     KeyList({"component", "name", "namespace", "parameters", "remap", "respawn",
                                              "respawn_delay", "required"}) +
                                     ")");
    }
  }
  if (!body["component"]) Error(p.at, "node: missing required key 'component'");
  if (!body["name"]) Error(p.at, "node: missing required key 'name'");
  if (!has_component || !has_name) return;
  p.name = n.name;
  p.ns = JoinNamespace(scope.ns, own_ns);
  if (p.ns.empty()) p.ns = "default";
  if (p.ns_at.line == 0) p.ns_at = p.at;
  p.nodes.push_back(std::move(n));
  desc_.processes.push_back(std::move(p));
}

bool LaunchLoader::LoadInnerNode(const YAML::Node& item, const Scope& scope, FileContext& file,
                                 NodeDescription* n) {
  if (!IsMap(item, "container node", file)) return false;
  n->at = At(item, file);
  bool has_component = false, has_name = false;
  for (auto it = item.begin(); it != item.end(); ++it) {
    std::string key = it->first.Scalar();
    YAML::Node v = it->second;
    if (key == "component") {
      has_component = Text(v, "component", scope, file, &n->component);
      n->component_at = At(v, file);
      if (has_component && n->component.empty()) {
        Error(n->component_at, "component must not be empty");
        has_component = false;
      }
      if (has_component) n->component = ResolveComponent(n->component, file);
    } else if (key == "name") {
      has_name = Text(v, "name", scope, file, &n->name);
      n->name_at = At(v, file);
      if (has_name && n->name.empty()) {
        Error(n->name_at, "name must not be empty");
        has_name = false;
      }
    } else if (key == "parameters") {
      LoadParameters(v, scope, file, &n->params);
    } else if (key == "namespace" || key == "remap" || key == "respawn" || key == "respawn_delay" ||
               key == "required") {
      Error(At(it->first, file), "'" + key + "' belongs to the container, not to a node inside it");
    } else {
      Error(At(it->first, file), "unknown key '" + key + "' in container node (expected component, name, "
                                     "parameters)");
    }
  }
  if (!item["component"]) Error(n->at, "container node: missing required key 'component'");
  if (!item["name"]) Error(n->at, "container node: missing required key 'name'");
  return has_component && has_name;
}

void LaunchLoader::LoadContainer(const YAML::Node& body, const Scope& scope, FileContext& file) {
  if (!IsMap(body, "container", file)) return;
  ProcessDescription p;
  p.kind = ProcessDescription::Kind::kContainer;
  p.at = At(body, file);
  bool has_name = false, nodes_ok = true;
  std::string own_ns;
  for (auto it = body.begin(); it != body.end(); ++it) {
    std::string key = it->first.Scalar();
    YAML::Node v = it->second;
    if (key == "name") {
      has_name = Text(v, "name", scope, file, &p.name);
      p.name_at = At(v, file);
      if (has_name && p.name.empty()) {
        Error(p.name_at, "name must not be empty");
        has_name = false;
      }
    } else if (key == "nodes") {
      if (!v.IsSequence() || v.size() == 0) {
        Error(At(v, file), std::string("container nodes must be a non-empty list, got ") +
                               (v.IsSequence() ? "an empty list" : NodeTypeName(v)));
        nodes_ok = false;
        continue;
      }
      for (const YAML::Node& item : v) {
        NodeDescription n;
        if (LoadInnerNode(item, scope, file, &n))
          p.nodes.push_back(std::move(n));
        else
          nodes_ok = false;
      }
    } else if (key == "namespace") {
      p.ns_at = At(v, file);
      Text(v, "namespace", scope, file, &own_ns);
    } else if (!LoadProcessKey(key, v, scope, file, &p)) {
      Error(At(it->first, file), "unknown key '" + key + "' in container (expected " +
                                     KeyList({"name", "namespace", "nodes", "remap", "respawn", "respawn_delay",
                                              "required"}) +
                                     ")");
    }
  }
  if (!body["name"]) Error(p.at, "container: missing required key 'name'");
  if (!body["nodes"]) Error(p.at, "container: missing required key 'nodes'");
  if (!has_name || !nodes_ok || p.nodes.empty()) return;
  p.ns = JoinNamespace(scope.ns, own_ns);
  if (p.ns.empty()) p.ns = "default";
  if (p.ns_at.line == 0) p.ns_at = p.at;
  desc_.processes.push_back(std::move(p));
}

void LaunchLoader::LoadGroup(const YAML::Node& body, const Scope& scope, FileContext& file) {
  if (!IsMap(body, "group", file)) return;
  Scope inner = scope;  // args declared inside stay inside
  std::optional<YAML::Node> children;
  for (auto it = body.begin(); it != body.end(); ++it) {
    std::string key = it->first.Scalar();
    if (key == "namespace") {
      std::string ns;
      if (Text(it->second, "group namespace", scope, file, &ns)) inner.ns = JoinNamespace(scope.ns, ns);
    } else if (key == "children") {
      if (!it->second.IsSequence()) {
        Error(At(it->second, file), std::string("group children must be a list of actions, got ") +
                                        NodeTypeName(it->second));
        continue;
      }
      children.emplace(it->second);
    } else {
      Error(At(it->first, file), "unknown key '" + key + "' in group (expected namespace, children)");
    }
  }
  if (!body["children"]) {
    Error(At(body, file), "group: missing required key 'children'");
    return;
  }
  if (children) LoadActions(*children, inner, file);
}

void LaunchLoader::LoadInclude(const YAML::Node& body, const Scope& scope, FileContext& file) {
  if (!IsMap(body, "include", file)) return;
  std::string target;
  bool has_file = false;
  SourceLocation file_at = At(body, file);
  ProvidedArgs args;
  for (auto it = body.begin(); it != body.end(); ++it) {
    std::string key = it->first.Scalar();
    if (key == "file") {
      has_file = Text(it->second, "include file", scope, file, &target);
      file_at = At(it->second, file);
      if (has_file && target.empty()) {
        Error(file_at, "include file must not be empty");
        has_file = false;
      }
    } else if (key == "args") {
      if (it->second.IsNull()) continue;
      if (!IsMap(it->second, "include args", file)) continue;
      for (auto a = it->second.begin(); a != it->second.end(); ++a) {
        std::string value;
        if (!Text(a->second, "include arg '" + a->first.Scalar() + "'", scope, file, &value)) continue;
        args[a->first.Scalar()] = ProvidedArg{value, At(a->second, file)};
      }
    } else {
      Error(At(it->first, file), "unknown key '" + key + "' in include (expected file, args)");
    }
  }
  if (!body["file"]) Error(At(body, file), "include: missing required key 'file'");
  if (!has_file) return;
  fs::path p(target);
  if (p.is_relative()) p = fs::path(file.dir) / p;
  Scope outer;
  outer.ns = scope.ns;
  LoadFile(p.lexically_normal().string(), args, outer, file_at, /*top_level=*/false);
}

Result<LaunchDescription> LoadLaunchFile(const std::string& path, const ProvidedArgs& args) {
  LaunchLoader loader;
  if (!loader.Load(path, args)) return Status::InvalidArgument(JoinErrors(loader.errors()));
  return loader.description();
}

}  // namespace radixserve::launch
