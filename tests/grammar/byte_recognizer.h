// Test code only: an Earley recognizer that says whether a byte string is in a Grammar's
// language, using nothing but the Grammar's public accessors. It is deliberately independent of
// the product's matcher so that front-end tests do not depend on it (and can cross-check it).
// Quadratic-to-cubic in the input; meant for short strings.
//
// Thread-safety: a Recognizes() call uses only its own locals.
#pragma once

#include <cstdint>
#include <set>
#include <string_view>
#include <tuple>
#include <vector>

#include "core/grammar/grammar.h"

namespace radixserve::grammar::testing {

class ByteRecognizer {
 public:
  explicit ByteRecognizer(const Grammar& g) : g_(g), nullable_(g.rules().size(), false) {
    // Nullable rules, by fixpoint; used to advance over nullable predictions (Aycock-Horspool),
    // which keeps the recognizer correct for rules that complete at the position they start.
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t r = 0; r < g_.rules().size(); ++r) {
        if (nullable_[r]) continue;
        for (const Sequence& seq : g_.rules()[r].alternatives) {
          bool all = true;
          for (const Symbol& s : seq) all = all && s.kind == Symbol::kRule && nullable_[s.index];
          if (all) {
            nullable_[r] = true;
            changed = true;
            break;
          }
        }
      }
    }
  }

  // True when the whole of `input` derives from the grammar's root.
  bool Recognizes(std::string_view input) const {
    const size_t n = input.size();
    std::vector<std::vector<Item>> sets(n + 1);
    std::vector<std::set<Item>> seen(n + 1);
    const auto add = [&](size_t i, Item it) {
      if (seen[i].insert(it).second) sets[i].push_back(it);
    };
    const uint32_t root = g_.root();
    for (uint32_t a = 0; a < g_.rules()[root].alternatives.size(); ++a) add(0, {root, a, 0, 0});
    for (size_t i = 0; i <= n; ++i) {
      for (size_t k = 0; k < sets[i].size(); ++k) {
        const Item it = sets[i][k];
        const Sequence& seq = g_.rules()[it.rule].alternatives[it.alt];
        if (it.dot < seq.size()) {
          const Symbol& s = seq[it.dot];
          if (s.kind == Symbol::kBytes) {
            if (i < n && g_.byte_sets()[s.index].Has(static_cast<uint8_t>(input[i]))) {
              add(i + 1, {it.rule, it.alt, it.dot + 1, it.origin});
            }
          } else {
            for (uint32_t a = 0; a < g_.rules()[s.index].alternatives.size(); ++a) {
              add(i, {s.index, a, 0, static_cast<uint32_t>(i)});
            }
            if (nullable_[s.index]) add(i, {it.rule, it.alt, it.dot + 1, it.origin});
          }
        } else {
          // Complete: advance every item of the origin set waiting for this rule.
          const auto& origin = sets[it.origin];
          for (size_t j = 0; j < origin.size(); ++j) {
            const Item& w = origin[j];
            const Sequence& wseq = g_.rules()[w.rule].alternatives[w.alt];
            if (w.dot < wseq.size() && wseq[w.dot].kind == Symbol::kRule && wseq[w.dot].index == it.rule) {
              add(i, {w.rule, w.alt, w.dot + 1, w.origin});
            }
          }
        }
      }
      if (i < n && sets[i + 1].empty()) return false;  // no item can read input[i]
    }
    for (const Item& it : sets[n]) {
      if (it.rule == root && it.origin == 0 && it.dot == g_.rules()[root].alternatives[it.alt].size()) return true;
    }
    return false;
  }

 private:
  struct Item {
    uint32_t rule, alt, dot, origin;
    bool operator<(const Item& o) const {
      return std::tie(rule, alt, dot, origin) < std::tie(o.rule, o.alt, o.dot, o.origin);
    }
  };

  const Grammar& g_;
  std::vector<bool> nullable_;
};

}  // namespace radixserve::grammar::testing
