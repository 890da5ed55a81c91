#include "core/tokenizer/spm_tokenizer.h"

#include <algorithm>
#include <cstdio>

#include "core/tokenizer/bigram_merge.h"
#include "core/tokenizer/unicode.h"

namespace radixserve::tokenizer {
namespace {

constexpr std::string_view kSpaceMark = "\xE2\x96\x81";  // U+2581 "▁"

// Parses "<0xXX>" into its byte value, or -1.
int ParseByteToken(std::string_view text) {
  if (text.size() != 6 || text.substr(0, 3) != "<0x" || text[5] != '>') return -1;
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  const int hi = hex(text[3]), lo = hex(text[4]);
  return (hi < 0 || lo < 0) ? -1 : hi * 16 + lo;
}

using Symbol = MergeSymbol;

struct Bigram {
  float score;
  int32_t left;
  int32_t right;
  uint32_t len;  // byte length of the merged text, to detect stale entries
  int32_t id;
};

struct BigramOrder {  // max-heap: highest score first, then leftmost
  bool operator()(const Bigram& a, const Bigram& b) const {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  }
};

}  // namespace

// Per-Encode buffers, reused across the segments of one call (never shared between calls).
struct SpmScratch {
  std::vector<Symbol> syms;
  std::vector<Bigram> heap;
};

SpmTokenizer::SpmTokenizer(Vocab vocab) : Tokenizer(std::move(vocab)) {
  byte_ids_.fill(-1);
  mergeable_.resize(vocab_.size());
  for (int32_t id = 0; id < vocab_.size(); ++id) {
    const TokenType t = vocab_.type(id);
    mergeable_[id] = (t == TokenType::kNormal || t == TokenType::kUserDefined || t == TokenType::kUndefined);
  }
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof(name), "<0x%02X>", b);
    int32_t id = vocab_.Find(name);
    if (id < 0 && b < 0x80) {
      // Vocabs without byte tokens may still hold the ASCII character itself.
      const char c = static_cast<char>(b);
      id = vocab_.Find(std::string_view(&c, 1));
    }
    byte_ids_[b] = id;
  }
  for (int c = 0; c < 128; ++c) {
    const char ch = static_cast<char>(c);
    const int32_t id = vocab_.Find(std::string_view(&ch, 1));
    ascii_ids_[c] = Mergeable(id) ? id : -1;
  }
  // Every split of a mergeable token into two mergeable tokens, at character boundaries;
  // and whether "▁" only ever starts a token (then words can be merged independently).
  split_at_words_ = true;
  for (int32_t id = 0; id < vocab_.size(); ++id) {
    if (!Mergeable(id)) continue;
    const std::string& text = vocab_.text(id);
    bool seen_other = false;
    for (size_t pos = 0; pos < text.size();) {
      if (text.compare(pos, kSpaceMark.size(), kSpaceMark) == 0) {
        if (seen_other) split_at_words_ = false;
      } else {
        seen_other = true;
      }
      pos += std::min(Utf8SeqLen(static_cast<uint8_t>(text[pos])), text.size() - pos);
      if (pos >= text.size()) break;
      const int32_t left = vocab_.Find(std::string_view(text).substr(0, pos));
      const int32_t right = vocab_.Find(std::string_view(text).substr(pos));
      if (Mergeable(left) && Mergeable(right)) pairs_.InsertIfAbsent(left, right, id, 0);
    }
  }
}

int32_t SpmTokenizer::MergedId(int32_t left_id, int32_t right_id, std::string_view concatenated) const {
  if (left_id >= 0 && right_id >= 0) {
    const PairTable::Entry* e = pairs_.Find(left_id, right_id);
    return e ? e->a : -1;
  }
  // A character outside the vocab may still be part of a longer token.
  const int32_t id = vocab_.Find(concatenated);
  return Mergeable(id) ? id : -1;
}

void SpmTokenizer::AppendBytes(std::string_view bytes, std::vector<int32_t>* out) const {
  for (unsigned char b : bytes) {
    const int32_t id = byte_ids_[b] >= 0 ? byte_ids_[b] : unk_id_;
    if (id >= 0) out->push_back(id);
  }
}

void SpmTokenizer::EncodeText(std::string_view text, bool fragment_start, std::vector<int32_t>* out) const {
  std::string s;
  s.reserve(text.size() + text.size() / 2 + kSpaceMark.size());
  if (add_space_prefix_ && fragment_start) s += kSpaceMark;
  for (char c : text) {
    if (c == ' ') {
      s += kSpaceMark;
    } else {
      s.push_back(c);
    }
  }
  SpmScratch scratch;
  if (!split_at_words_) {
    EncodeSegment(s, &scratch, out);
    return;
  }
  // Cut before every "▁" that follows another character.
  size_t start = 0;
  bool prev_is_mark = false;
  for (size_t pos = 0; pos < s.size();) {
    const bool is_mark = s.compare(pos, kSpaceMark.size(), kSpaceMark) == 0;
    if (is_mark && !prev_is_mark && pos > start) {
      EncodeSegment(std::string_view(s).substr(start, pos - start), &scratch, out);
      start = pos;
    }
    prev_is_mark = is_mark;
    pos += is_mark ? kSpaceMark.size() : 1;
  }
  if (start < s.size()) EncodeSegment(std::string_view(s).substr(start), &scratch, out);
}

void SpmTokenizer::EncodeSegment(std::string_view s, SpmScratch* scratch, std::vector<int32_t>* out) const {
  auto& syms = scratch->syms;
  auto& heap = scratch->heap;
  syms.clear();
  heap.clear();
  for (size_t pos = 0; pos < s.size();) {
    const auto b0 = static_cast<uint8_t>(s[pos]);
    const size_t n = std::min(Utf8SeqLen(b0), s.size() - pos);
    const int32_t idx = static_cast<int32_t>(syms.size());
    int32_t id;
    if (b0 < 0x80) {
      id = ascii_ids_[b0];
    } else {
      id = vocab_.Find(s.substr(pos, n));
      if (!Mergeable(id)) id = -1;
    }
    syms.push_back({static_cast<uint32_t>(pos), static_cast<uint32_t>(n), idx - 1, idx + 1, id});
    pos += n;
  }
  if (syms.empty()) return;
  syms.back().next = -1;

  auto try_add = [&](int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    const Symbol& l = syms[left];
    const Symbol& r = syms[right];
    const uint32_t len = l.len + r.len;
    const int32_t id = MergedId(l.id, r.id, s.substr(l.begin, len));
    if (id < 0) return;
    heap.push_back({vocab_.score(id), left, right, len, id});
    std::push_heap(heap.begin(), heap.end(), BigramOrder{});
  };
  for (int32_t i = 1; i < static_cast<int32_t>(syms.size()); ++i) try_add(i - 1, i);

  ApplyMerges<Bigram, BigramOrder>(syms, heap, try_add);

  for (int32_t i = 0; i != -1; i = syms[i].next) {
    const Symbol& sym = syms[i];
    if (sym.id >= 0) {
      out->push_back(sym.id);
    } else {
      AppendBytes(s.substr(sym.begin, sym.len), out);
    }
  }
}

std::string SpmTokenizer::NormalPiece(int32_t id) const {
  const std::string& text = vocab_.text(id);
  const TokenType t = vocab_.type(id);
  if (t == TokenType::kByte) {
    const int b = ParseByteToken(text);
    if (b >= 0) return std::string(1, static_cast<char>(b));
    return text;
  }
  if (t == TokenType::kUserDefined) return text;  // added tokens are literal text
  std::string piece;
  piece.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    if (text.compare(pos, kSpaceMark.size(), kSpaceMark) == 0) {
      piece.push_back(' ');
      pos += kSpaceMark.size();
    } else {
      piece.push_back(text[pos++]);
    }
  }
  return piece;
}

}  // namespace radixserve::tokenizer
