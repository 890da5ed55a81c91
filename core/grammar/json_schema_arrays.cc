// JSON Schema front-end: arrays. Positions of prefixItems are a chain of rules (each may end
// the array once minItems is met), the rest a bounded repetition; `contains` counts the items
// before and after the first item that satisfies it.
#include <algorithm>

#include "core/grammar/json_schema_compiler.h"

namespace radixserve::grammar::internal {

Result<std::optional<Symbol>> SchemaCompiler::EmitArray(const ArrayIr& a, const std::string& path) {
  GrammarBuilder& b = *b_;
  int64_t min = a.min_items, max = a.max_items;
  if (max >= 0 && min > max) {
    NoteUnsat(a.items_path + ": minItems " + std::to_string(min) + " is above maxItems " + std::to_string(max));
    return std::optional<Symbol>();
  }
  size_t prefix_len = 0;
  for (const ArrBag& ab : a.bags) prefix_len = std::max(prefix_len, ab.prefix.size());
  std::vector<Symbol> positions;
  for (size_t j = 0; j < prefix_len && (max < 0 || static_cast<int64_t>(j) < max); ++j) {
    std::vector<Entry> entries;
    for (const ArrBag& ab : a.bags) {
      if (j < ab.prefix.size()) entries.push_back(ab.prefix[j]);
      else if (ab.rest) entries.push_back(*ab.rest);
    }
    RS_ASSIGN_OR_RETURN(std::optional<Symbol> s, CompileEntries(entries));
    if (!s) {
      max = static_cast<int64_t>(j);  // no array reaches this position
      break;
    }
    positions.push_back(*s);
  }
  const int64_t fixed = static_cast<int64_t>(positions.size());
  std::optional<Symbol> rest;
  if (fixed == static_cast<int64_t>(prefix_len) && (max < 0 || max > fixed)) {
    std::vector<Entry> entries;
    for (const ArrBag& ab : a.bags)
      if (ab.rest) entries.push_back(*ab.rest);
    RS_ASSIGN_OR_RETURN(rest, CompileEntries(entries));
    if (!rest) max = fixed;
  } else if (max < 0 || max > fixed) {
    max = fixed;
  }
  if (max >= 0 && min > max) {
    NoteUnsatBecause(path + ": the items allowed cannot make minItems " + std::to_string(min));
    return std::optional<Symbol>();
  }
  // Elements are followed by their whitespace; separators are "," and whitespace.
  Sequence sep{b.Byte(',')};
  Ws(&sep);
  auto element = [&](Symbol s, bool first) {
    Sequence e = first ? Sequence{} : sep;
    e.push_back(s);
    Ws(&e);
    return e;
  };
  if (!a.contains.empty()) {
    // Some item satisfies `contains`: items before it, that item, items after it, counted.
    if (a.contains.size() > 1 || prefix_len > 0)
      return Fail(StatusCode::kUnsupported, a.contains.back().path,
                  "'contains' together with prefixItems or another 'contains' is not supported");
    std::vector<Entry> entries{a.contains[0]};
    for (const ArrBag& ab : a.bags)
      if (ab.rest) entries.push_back(*ab.rest);
    RS_ASSIGN_OR_RETURN(std::optional<Symbol> hit, CompileEntries(entries));
    if (!hit || !rest || max == 0) {
      NoteUnsat(a.contains[0].path + ": no item can satisfy 'contains'");
      return std::optional<Symbol>();
    }
    const int64_t top = max >= 0 ? max : std::max<int64_t>(min, 1);
    if (static_cast<uint64_t>(top) > b.limits().max_repeat)
      return Fail(StatusCode::kResourceExhausted, a.items_path, "item count bound over the cap together with 'contains'");
    // after[c]: the items after the hit, c items so far; before[c]: still looking.
    std::vector<std::optional<Symbol>> after(static_cast<size_t>(top) + 1), before(static_cast<size_t>(top) + 1);
    for (int64_t c = top; c >= 1; --c) {
      std::vector<Sequence> alts;
      if (c >= min) alts.push_back({});
      const int64_t nc = std::min(c + 1, top);
      if (max < 0 || c < max) {
        Sequence more = element(*rest, false);
        if (nc == c) {
          const uint32_t self = b.NewRule("after");
          more.push_back(Symbol::Rule(self));
          alts.push_back(std::move(more));
          for (auto& s : alts) b.AddAlternative(self, std::move(s));
          after[c] = Symbol::Rule(self);
          continue;
        }
        if (after[nc]) more.push_back(*after[nc]), alts.push_back(std::move(more));
      }
      if (!alts.empty()) after[c] = b.Choice(std::move(alts), "after");
    }
    for (int64_t c = (max >= 0 ? max - 1 : top); c >= 0; --c) {
      const int64_t nc = std::min(c + 1, top);
      std::vector<Sequence> alts;
      if (after[nc]) {
        Sequence take = element(*hit, c == 0);
        take.push_back(*after[nc]);
        alts.push_back(std::move(take));
      }
      if (nc == c) {
        const uint32_t self = b.NewRule("before");
        Sequence more = element(*rest, c == 0);
        more.push_back(Symbol::Rule(self));
        alts.push_back(std::move(more));
        for (auto& s : alts) b.AddAlternative(self, std::move(s));
        before[c] = Symbol::Rule(self);
        continue;
      }
      if (before[nc] && (max < 0 || nc < max)) {
        Sequence more = element(*rest, c == 0);
        more.push_back(*before[nc]);
        alts.push_back(std::move(more));
      }
      if (!alts.empty()) before[c] = b.Choice(std::move(alts), "before");
    }
    if (!before[0]) {
      NoteUnsat(a.contains[0].path + ": no array satisfies 'contains' with the item counts");
      return std::optional<Symbol>();
    }
    Sequence open{b.Byte('[')};
    Ws(&open);
    open.push_back(*before[0]);
    open.push_back(b.Byte(']'));
    return std::optional<Symbol>(b.Choice({open}, "array"));
  }
  // tail: the elements after the fixed positions.
  std::optional<Symbol> tail;
  const int64_t rmin = std::max<int64_t>(0, min - fixed);
  const int64_t rmax = max < 0 ? -1 : max - fixed;
  if (rest && rmax != 0) {
    if (fixed > 0) {
      tail = Repeat(element(*rest, false), rmin, rmax, "items");
    } else {
      // The first element has no separator.
      Sequence first = element(*rest, true);
      const Symbol more = Repeat(element(*rest, false), std::max<int64_t>(0, rmin - 1), rmax < 0 ? -1 : rmax - 1, "items");
      first.push_back(more);
      tail = rmin == 0 ? b.Optional(first, "items") : b.Choice({first}, "items");
    }
  }
  // Positions from the last to the first: T_j = (end, if j >= min) | element_j T_{j+1}.
  enum class Cont { kImpossible, kEmpty, kSymbol };
  Cont cont = tail ? Cont::kSymbol : (rmin == 0 ? Cont::kEmpty : Cont::kImpossible);
  std::optional<Symbol> next = tail;
  for (int64_t j = fixed - 1; j >= 0; --j) {
    std::vector<Sequence> alts;
    if (j >= min) alts.push_back({});
    if (cont != Cont::kImpossible) {
      Sequence take = element(positions[static_cast<size_t>(j)], j == 0);
      if (cont == Cont::kSymbol) take.push_back(*next);
      alts.push_back(std::move(take));
    }
    if (alts.empty()) {
      cont = Cont::kImpossible;
      continue;
    }
    next = b.Choice(std::move(alts), "items");
    cont = Cont::kSymbol;
  }
  if (cont == Cont::kImpossible) {
    NoteUnsatBecause(path + ": the items allowed cannot make minItems " + std::to_string(min));
    return std::optional<Symbol>();
  }
  Sequence open{b.Byte('[')};
  Ws(&open);
  if (cont == Cont::kSymbol) open.push_back(*next);
  open.push_back(b.Byte(']'));
  return std::optional<Symbol>(b.Choice({open}, "array"));
}

}  // namespace radixserve::grammar::internal
