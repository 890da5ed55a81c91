// JSON Schema front-end: the driver, draft and keyword lookup, references, synthesized schemas
// and the memo of compiled conjunctions. See json_schema.h for what is supported and
// json_schema_compiler.h for the pipeline.
#include "core/grammar/json_schema.h"

#include <algorithm>

#include "core/grammar/json_schema_compiler.h"
#include "core/grammar/json_schema_formats.h"

namespace radixserve::grammar {

namespace internal {

namespace {

std::string PercentDecode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out.push_back(static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16)));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

}  // namespace

SchemaCompiler::SchemaCompiler(const Json& root, const JsonSchemaOptions& options, GrammarBuilder* b,
                               JsonSchemaReport* report)
    : root_(root), options_(options), b_(b), report_(report) {
  if (root.is_object()) {
    auto it = root.find("$schema");
    if (it != root.end() && it->is_string()) {
      const std::string s = it->get<std::string>();
      if (s.find("draft-03") != std::string::npos || s.find("draft-04") != std::string::npos) {
        draft_ = Draft::k4;
      } else if (s.find("draft-06") != std::string::npos) {
        draft_ = Draft::k6;
      } else if (s.find("draft-07") != std::string::npos) {
        draft_ = Draft::k7;
      } else if (s.find("2019-09") != std::string::npos) {
        draft_ = Draft::k2019;
      }
    }
  }
  keep_going_ = [b] { return b->CheckDeadline(); };
  strings_ = std::make_unique<JsonStringEmitter>(b_);
  numbers_ = std::make_unique<NumberEmitter>(b_, NumberOptions{options.integer_point_zero});
  IndexIds(root_, "", 0);
}

Status SchemaCompiler::Fail(StatusCode code, const std::string& path, const std::string& what) const {
  return Status(code, path + ": " + what);
}

std::string SchemaCompiler::Child(const std::string& path, std::string_view key) {
  std::string out = path + "/";
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out.push_back(c);
    }
  }
  return out;
}

bool SchemaCompiler::Active(std::string_view k) const {
  const int d = static_cast<int>(draft_);
  if (k == "const" || k == "contains" || k == "propertyNames") return d >= 6;
  if (k == "if" || k == "then" || k == "else") return d >= 7;
  if (k == "dependencies") return d <= 7;
  if (k == "dependentRequired" || k == "dependentSchemas" || k == "unevaluatedProperties" ||
      k == "unevaluatedItems" || k == "minContains" || k == "maxContains" || k == "$recursiveRef")
    return d >= 2019;
  if (k == "prefixItems" || k == "$dynamicRef") return d >= 2020;
  return true;
}

const Json* SchemaCompiler::Get(const Json& node, std::string_view k) const {
  if (!node.is_object()) return nullptr;
  auto it = node.find(k);
  if (it == node.end() || !Active(k)) return nullptr;
  return &*it;
}

void SchemaCompiler::NotEnforced(const std::string& path, const std::string& what) {
  const std::string line = path + ": " + what;
  if (!reported_.insert(line).second) return;
  if (report_) report_->not_enforced.push_back(line);
}

void SchemaCompiler::Ws(Sequence* seq) {
  if (options_.max_whitespace <= 0) return;
  if (!ws_) {
    ByteSet ws;
    for (char c : {' ', '\t', '\n', '\r'}) ws.Add(static_cast<uint8_t>(c));
    ws_ = b_->Repeat({b_->Bytes(ws)}, 0, options_.max_whitespace, "ws");
  }
  seq->push_back(*ws_);
}

// ---------------------------------------------------------------------------------------------
// References.

void SchemaCompiler::IndexIds(const Json& node, const std::string& path, int depth) {
  if (depth > 200 || !node.is_object()) return;
  for (const char* key : {"$id", "id"}) {
    auto it = node.find(key);
    if (it == node.end() || !it->is_string()) continue;
    std::string id = it->get<std::string>();
    if (!id.empty() && id[0] == '#') {
      anchors_.emplace(id.substr(1), Entry{&node, path});
    } else {
      while (!id.empty() && id.back() == '#') id.pop_back();
      ids_.emplace(id, Entry{&node, path});
    }
  }
  for (const char* key : {"$anchor", "$dynamicAnchor"}) {
    auto it = node.find(key);
    if (it != node.end() && it->is_string()) anchors_.emplace(it->get<std::string>(), Entry{&node, path});
  }
  for (const auto& [k, v] : node.items()) {
    if (k == "properties" || k == "patternProperties" || k == "definitions" || k == "$defs" ||
        k == "dependentSchemas" || k == "dependencies") {
      if (v.is_object())
        for (const auto& [name, sub] : v.items()) IndexIds(sub, Child(Child(path, k), name), depth + 1);
    } else if (k == "items" || k == "prefixItems" || k == "allOf" || k == "anyOf" || k == "oneOf") {
      if (v.is_array()) {
        for (size_t i = 0; i < v.size(); ++i) IndexIds(v[i], Child(Child(path, k), i), depth + 1);
      } else {
        IndexIds(v, Child(path, k), depth + 1);
      }
    } else if (k == "not" || k == "if" || k == "then" || k == "else" || k == "additionalProperties" ||
               k == "additionalItems" || k == "contains" || k == "propertyNames" || k == "unevaluatedProperties" ||
               k == "unevaluatedItems") {
      IndexIds(v, Child(path, k), depth + 1);
    }
  }
}

Result<Entry> SchemaCompiler::Resolve(const std::string& ref, const Json* from, const std::string& path) {
  (void)from;
  const size_t hash = ref.find('#');
  const std::string base = hash == std::string::npos ? ref : ref.substr(0, hash);
  const std::string frag = hash == std::string::npos ? "" : PercentDecode(ref.substr(hash + 1));
  Entry start{&root_, ""};
  if (!base.empty()) {
    auto it = ids_.find(base);
    if (it == ids_.end()) {
      // A relative reference to an $id: match its last path segment.
      for (const auto& [id, e] : ids_) {
        if (id.size() > base.size() && id.compare(id.size() - base.size(), base.size(), base) == 0 &&
            id[id.size() - base.size() - 1] == '/') {
          it = ids_.find(id);
          break;
        }
      }
    }
    if (it == ids_.end())
      return Fail(StatusCode::kUnsupported, Child(path, "$ref"),
                  "remote $ref '" + ref + "' is not supported (only references inside the schema)");
    start = it->second;
  }
  if (frag.empty()) return start;
  if (frag[0] != '/') {
    auto it = anchors_.find(frag);
    if (it == anchors_.end())
      return Fail(StatusCode::kInvalidArgument, Child(path, "$ref"), "$ref '" + ref + "' names no $anchor of the schema");
    return it->second;
  }
  const Json* cur = start.node;
  std::string cur_path = start.path;
  size_t pos = 0;
  while (pos < frag.size()) {
    size_t end = frag.find('/', pos + 1);
    if (end == std::string::npos) end = frag.size();
    std::string token;
    for (size_t i = pos + 1; i < end; ++i) {
      if (frag[i] == '~' && i + 1 < end && (frag[i + 1] == '0' || frag[i + 1] == '1')) {
        token.push_back(frag[i + 1] == '0' ? '~' : '/');
        ++i;
      } else {
        token.push_back(frag[i]);
      }
    }
    const Json* next = nullptr;
    if (cur->is_object()) {
      auto it = cur->find(token);
      if (it != cur->end()) next = &*it;
    } else if (cur->is_array() && !token.empty() && token.find_first_not_of("0123456789") == std::string::npos &&
               token.size() < 10) {
      const size_t index = std::stoul(token);
      if (index < cur->size()) next = &(*cur)[index];
    }
    if (!next)
      return Fail(StatusCode::kInvalidArgument, Child(path, "$ref"), "$ref '" + ref + "' points to nothing in the schema");
    cur = next;
    cur_path = Child(cur_path, token);
    pos = end;
  }
  return Entry{cur, cur_path};
}

Json SchemaCompiler::LocRef(const Json* node, const std::string& path) {
  auto key = std::make_pair(node, path);
  auto it = loc_index_.find(key);
  size_t index;
  if (it == loc_index_.end()) {
    index = locs_.size();
    locs_.push_back(Entry{node, path});
    loc_index_.emplace(key, index);
  } else {
    index = it->second;
  }
  return Json{{"$rs-loc", index}};
}

Entry SchemaCompiler::LocAt(const Json& ref_node) const {
  return locs_[ref_node.at("$rs-loc").get<size_t>()];
}

const Json* SchemaCompiler::Synth(Json j) {
  std::string key = j.dump(-1, ' ', false, Json::error_handler_t::replace);
  auto it = synth_index_.find(key);
  if (it != synth_index_.end()) return it->second;
  arena_.push_back(std::move(j));
  const Json* p = &arena_.back();
  synth_index_.emplace(std::move(key), p);
  std::vector<const Json*> stack{p};
  while (!stack.empty()) {
    const Json* n = stack.back();
    stack.pop_back();
    synth_nodes_.insert(n);
    if (n->is_object() || n->is_array())
      for (const auto& child : *n) stack.push_back(&child);
  }
  return p;
}

Status SchemaCompiler::CheckReserved(const Json& node, const std::string& path) const {
  if (!node.is_object() || synth_nodes_.count(&node)) return Status::Ok();
  for (const auto& [k, v] : node.items())
    if (k.rfind("$rs-", 0) == 0)
      return Fail(StatusCode::kInvalidArgument, Child(path, k), "keys starting with '$rs-' are reserved");
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------
// Compilation with memo.

Result<std::optional<Symbol>> SchemaCompiler::CompileEntries(const std::vector<Entry>& entries) {
  Atoms atoms;
  for (const Entry& e : entries) RS_RETURN_IF_ERROR(Expand(e, &atoms, 0));
  return CompileAtoms(atoms, entries.empty() ? "" : entries[0].path);
}

Result<std::optional<Symbol>> SchemaCompiler::CompileAtoms(const Atoms& atoms, const std::string& name_path) {
  if (atoms.unsat) {
    NoteUnsat(atoms.unsat_reason);
    return std::optional<Symbol>();
  }
  if (atoms.bags.empty() && atoms.groups.empty() && atoms.opaque.empty()) return std::optional<Symbol>(AnyValue());
  std::vector<uintptr_t> bag_keys, group_keys;
  for (const Bag& bag : atoms.bags) bag_keys.push_back(reinterpret_cast<uintptr_t>(bag.node));
  for (const Group& g : atoms.groups) group_keys.push_back(reinterpret_cast<uintptr_t>(g.key));
  std::sort(bag_keys.begin(), bag_keys.end());
  bag_keys.erase(std::unique(bag_keys.begin(), bag_keys.end()), bag_keys.end());
  std::sort(group_keys.begin(), group_keys.end());
  group_keys.erase(std::unique(group_keys.begin(), group_keys.end()), group_keys.end());
  std::vector<std::string> opaque_keys;
  for (const Entry& e : atoms.opaque)
    opaque_keys.push_back(std::to_string(reinterpret_cast<uintptr_t>(e.node)) + (e.neg ? "n" : "p"));
  std::sort(opaque_keys.begin(), opaque_keys.end());
  std::string key;
  for (uintptr_t k : bag_keys) key.append("b").append(std::to_string(k));
  for (uintptr_t k : group_keys) key.append("g").append(std::to_string(k));
  for (const auto& k : opaque_keys) key.append("o").append(k);
  auto it = memo_.find(key);
  if (it != memo_.end()) {
    if (it->second.in_progress) it->second.referenced_in_progress = true;
    if (!it->second.symbol) NoteUnsat(it->second.unsat_reason);
    return it->second.symbol;
  }
  if (++compiles_ > 100000)
    return Fail(StatusCode::kResourceExhausted, name_path, "the schema expands to more than 100000 distinct subschemas");
  if (!b_->CheckDeadline()) return Status(b_->status().code(), ": " + b_->status().message());
  const uint32_t rule = b_->NewRule("v");
  memo_[key] = Memo{Symbol::Rule(rule), "", true, false};
  // Deduplicate bags and groups (the same subschema reached twice).
  Atoms unique;
  unique.opaque = atoms.opaque;
  unique.opaque_error = atoms.opaque_error;
  unique.next_seq = atoms.next_seq;
  std::set<const void*> seen;
  for (const Bag& bag : atoms.bags)
    if (seen.insert(bag.node).second) unique.bags.push_back(bag);
  for (const Group& g : atoms.groups)
    if (seen.insert(g.key).second) unique.groups.push_back(g);
  std::stable_sort(unique.bags.begin(), unique.bags.end(), [](const Bag& x, const Bag& y) { return x.order < y.order; });
  auto body = CompileBody(unique, name_path);
  Memo& m = memo_[key];
  m.in_progress = false;
  if (!body.ok()) return body.status();
  if (body->empty()) {
    if (m.referenced_in_progress)
      return Fail(StatusCode::kInvalidArgument, name_path,
                  "the schema is unsatisfiable: it refers to itself with no way to end (" + last_unsat_ + ")");
    m.symbol = std::nullopt;
    m.unsat_reason = last_unsat_;
    return std::optional<Symbol>();
  }
  if (body->size() == 1 && (*body)[0].size() == 1 && !m.referenced_in_progress) {
    // Alias instead of a rule of one symbol (the declared rule stays unreachable).
    m.symbol = (*body)[0][0];
    return m.symbol;
  }
  for (Sequence& seq : *body) b_->AddAlternative(rule, std::move(seq));
  return m.symbol;
}

namespace {

// Whether every reachable rule can derive a string: a recursion without a way out would leave the
// matcher in a state with nothing allowed.
bool AllProductive(const Grammar& g) {
  const auto& rules = g.rules();
  // Worklist: an alternative is productive once every rule it calls is; count what it waits on.
  std::vector<uint32_t> pending;                         // per alternative
  std::vector<uint32_t> owner;                           // alternative -> rule
  std::vector<std::vector<uint32_t>> waiting(rules.size());  // rule -> alternatives calling it
  std::vector<char> productive(rules.size(), 0);
  std::vector<uint32_t> queue;
  for (size_t r = 0; r < rules.size(); ++r) {
    for (const Sequence& seq : rules[r].alternatives) {
      const uint32_t alt = static_cast<uint32_t>(pending.size());
      uint32_t calls = 0;
      for (const Symbol& sym : seq)
        if (sym.kind == Symbol::kRule) waiting[sym.index].push_back(alt), ++calls;
      pending.push_back(calls);
      owner.push_back(static_cast<uint32_t>(r));
      if (calls == 0 && !productive[r]) productive[r] = 1, queue.push_back(static_cast<uint32_t>(r));
    }
  }
  while (!queue.empty()) {
    const uint32_t r = queue.back();
    queue.pop_back();
    for (uint32_t alt : waiting[r]) {
      if (--pending[alt] == 0 && !productive[owner[alt]]) {
        productive[owner[alt]] = 1;
        queue.push_back(owner[alt]);
      }
    }
  }
  for (char p : productive)
    if (!p) return false;
  return true;
}

}  // namespace

Result<Grammar> SchemaCompiler::CompileRoot() {
  auto sym = CompileEntries({Entry{&root_, ""}});
  if (!sym.ok()) return sym.status();
  if (!*sym) {
    const std::string why = last_unsat_.empty() ? ": no value satisfies the schema" : last_unsat_;
    return Status::InvalidArgument(why + " (the schema accepts no value)");
  }
  const uint32_t top = b_->NewRule("root");
  Sequence seq;
  Ws(&seq);
  seq.push_back(**sym);
  Ws(&seq);
  b_->AddAlternative(top, std::move(seq));
  auto g = b_->Finish(top);
  if (!g.ok()) {
    const std::string& m = g.status().message();
    if (!m.empty() && (m[0] == '/' || m.rfind(": ", 0) == 0)) return g.status();
    return Status(g.status().code(), ": " + m);
  }
  if (!AllProductive(*g))
    return Status::InvalidArgument(": the schema is unsatisfiable in part: a recursive reference can never end");
  return g;
}

Result<Grammar> SchemaCompiler::CompileAnyObject() {
  AnyValue();
  const uint32_t top = b_->NewRule("root");
  Sequence seq;
  Ws(&seq);
  seq.push_back(*any_object_);
  Ws(&seq);
  b_->AddAlternative(top, std::move(seq));
  return b_->Finish(top);
}

}  // namespace internal

Result<Grammar> CompileJsonSchema(const nlohmann::ordered_json& schema, const JsonSchemaOptions& options,
                                  const GrammarLimits& limits, JsonSchemaReport* report) {
  if (!schema.is_object() && !schema.is_boolean())
    return Status::InvalidArgument(": a schema must be a JSON object or a boolean");
  GrammarBuilder b(limits);
  internal::SchemaCompiler c(schema, options, &b, report);
  return c.CompileRoot();
}

Result<Grammar> CompileJsonSchemaText(std::string_view text, const JsonSchemaOptions& options,
                                      const GrammarLimits& limits, JsonSchemaReport* report) {
  if (text.size() > limits.max_source_bytes)
    return Status::ResourceExhausted(": the schema is " + std::to_string(text.size()) + " bytes, over the cap of " +
                                     std::to_string(limits.max_source_bytes));
  nlohmann::ordered_json schema = nlohmann::ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (schema.is_discarded()) return Status::InvalidArgument(": the schema is not valid JSON");
  return CompileJsonSchema(schema, options, limits, report);
}

Result<Grammar> CompileJsonObject(const GrammarLimits& limits, const JsonSchemaOptions& options) {
  GrammarBuilder b(limits);
  const nlohmann::ordered_json empty = nlohmann::ordered_json::object();
  internal::SchemaCompiler c(empty, options, &b, nullptr);
  return c.CompileAnyObject();
}

}  // namespace radixserve::grammar
