#include "core/tokenizer/spm_tokenizer.h"

#include <algorithm>
#include <cstdio>
#include <queue>

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

struct Symbol {
  uint32_t begin;  // byte offset in the escaped text
  uint32_t len;    // 0 once merged into its left neighbour
  int32_t prev;
  int32_t next;
  int32_t id;      // vocab id of the symbol's text, or -1
};

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
  if (s.empty()) return;

  std::vector<Symbol> syms;
  syms.reserve(s.size());
  for (size_t pos = 0; pos < s.size();) {
    const size_t n = std::min(Utf8SeqLen(static_cast<uint8_t>(s[pos])), s.size() - pos);
    const int32_t idx = static_cast<int32_t>(syms.size());
    int32_t id = vocab_.Find(std::string_view(s.data() + pos, n));
    if (!Mergeable(id)) id = -1;
    syms.push_back({static_cast<uint32_t>(pos), static_cast<uint32_t>(n), idx - 1, idx + 1, id});
    pos += n;
  }
  syms.back().next = -1;

  std::vector<Bigram> storage;
  storage.reserve(syms.size());
  std::priority_queue<Bigram, std::vector<Bigram>, BigramOrder> queue(BigramOrder{}, std::move(storage));
  auto try_add = [&](int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    const uint32_t len = syms[left].len + syms[right].len;
    const int32_t id = vocab_.Find(std::string_view(s.data() + syms[left].begin, len));
    if (!Mergeable(id)) return;
    queue.push({vocab_.score(id), left, right, len, id});
  };
  for (int32_t i = 1; i < static_cast<int32_t>(syms.size()); ++i) try_add(i - 1, i);

  while (!queue.empty()) {
    const Bigram b = queue.top();
    queue.pop();
    Symbol& left = syms[b.left];
    Symbol& right = syms[b.right];
    // Stale: one side was merged elsewhere since this pair was queued.
    if (left.len == 0 || right.len == 0 || left.len + right.len != b.len) continue;
    left.len = b.len;
    left.id = b.id;
    right.len = 0;
    left.next = right.next;
    if (right.next >= 0) syms[right.next].prev = b.left;
    try_add(left.prev, b.left);
    try_add(b.left, left.next);
  }

  for (int32_t i = 0; i != -1; i = syms[i].next) {
    const Symbol& sym = syms[i];
    if (sym.id >= 0) {
      out->push_back(sym.id);
    } else {
      AppendBytes(std::string_view(s.data() + sym.begin, sym.len), out);
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
