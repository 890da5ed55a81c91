#include "core/tokenizer/bpe_tokenizer.h"

#include <algorithm>

#include "core/tokenizer/bigram_merge.h"
#include "core/tokenizer/byte_level.h"
#include "core/tokenizer/unicode.h"

namespace radixserve::tokenizer {

namespace {

using Symbol = MergeSymbol;

struct BpeBigram {
  int32_t rank;
  int32_t left;
  int32_t right;
  uint32_t len;  // byte length of the merged symbol, to detect stale entries
  int32_t id;    // the merged symbol's id
};

struct BigramAfter {  // heap order: lowest rank first, then leftmost
  bool operator()(const BpeBigram& a, const BpeBigram& b) const {
    return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
  }
};

}  // namespace

// Per-Encode buffers, reused across the words of one call (never shared between calls).
struct BpeScratch {
  std::vector<Symbol> syms;
  std::vector<BpeBigram> heap;
  std::string spelled;
};

BpeTokenizer::BpeTokenizer(Vocab vocab, PreTokenizerKind pre, bool ignore_merges)
    : Tokenizer(std::move(vocab)), pre_(pre), ignore_merges_(ignore_merges) {
  for (int b = 0; b < 256; ++b) {
    std::string sym;
    AppendUtf8(ByteToSymbol(static_cast<uint8_t>(b)), &sym);
    byte_ids_[b] = vocab_.Find(sym);
  }
}

Result<std::unique_ptr<BpeTokenizer>> BpeTokenizer::Create(Vocab vocab, const std::vector<std::string>& merges,
                                                           PreTokenizerKind pre, bool ignore_merges) {
  std::unique_ptr<BpeTokenizer> t(new BpeTokenizer(std::move(vocab), pre, ignore_merges));
  t->merges_.Reserve(merges.size());
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const std::string& m = merges[rank];
    // Split at the first space after the first character: a left part may itself be a space.
    const size_t sep = m.find(' ', 1);
    if (sep == std::string::npos || sep + 1 >= m.size()) {
      return Status::Corrupt("tokenizer.ggml.merges[" + std::to_string(rank) + "] = '" + m +
                             "' is not 'left right'");
    }
    const std::string left = m.substr(0, sep);
    const std::string right = m.substr(sep + 1);
    const int32_t l = t->PieceId(left);
    const int32_t r = t->PieceId(right);
    const int32_t result = t->PieceId(left + right);
    // The first occurrence of a pair wins, as in a rank-ordered list.
    t->merges_.InsertIfAbsent(l, r, static_cast<int32_t>(rank), result);
  }
  t->extra_pieces_.clear();
  return t;
}

int32_t BpeTokenizer::PieceId(const std::string& text) {
  const int32_t id = vocab_.Find(text);
  if (id >= 0) return id;
  auto [it, inserted] =
      extra_pieces_.emplace(text, vocab_.size() + static_cast<int32_t>(extra_pieces_.size()));
  return it->second;
}

void BpeTokenizer::AppendBytes(std::string_view bytes, std::vector<int32_t>* out) const {
  for (unsigned char b : bytes) {
    const int32_t id = byte_ids_[b] >= 0 ? byte_ids_[b] : unk_id_;
    if (id >= 0) out->push_back(id);
  }
}

void BpeTokenizer::EncodeText(std::string_view text, bool /*fragment_start*/, std::vector<int32_t>* out) const {
  std::vector<PreTokenizer::Word> words;
  pre_.Split(text, &words);
  BpeScratch scratch;
  for (const auto& [b, e] : words) EncodeWord(text.substr(b, e - b), out, &scratch);
}

void BpeTokenizer::EncodeWord(std::string_view word, std::vector<int32_t>* out, BpeScratch* scratch) const {
  if (word.empty()) return;
  if (word.size() == 1) {
    AppendBytes(word, out);
    return;
  }
  if (ignore_merges_) {
    scratch->spelled.clear();
    EncodeByteLevel(word, &scratch->spelled);
    const int32_t id = vocab_.Find(scratch->spelled);
    if (id >= 0) {
      out->push_back(id);
      return;
    }
  }
  auto& syms = scratch->syms;
  auto& heap = scratch->heap;
  syms.clear();
  heap.clear();
  const int32_t n = static_cast<int32_t>(word.size());
  for (int32_t i = 0; i < n; ++i) {
    syms.push_back({static_cast<uint32_t>(i), 1, i - 1, i + 1 < n ? i + 1 : -1,
                    byte_ids_[static_cast<uint8_t>(word[i])]});
  }
  auto try_add = [&](int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    const Symbol& l = syms[left];
    const Symbol& r = syms[right];
    if (l.id < 0 || r.id < 0) return;
    const PairTable::Entry* m = merges_.Find(l.id, r.id);
    if (m == nullptr) return;
    heap.push_back({m->a, left, right, l.len + r.len, m->b});
    std::push_heap(heap.begin(), heap.end(), BigramAfter{});
  };
  for (int32_t i = 1; i < n; ++i) try_add(i - 1, i);

  ApplyMerges<BpeBigram, BigramAfter>(syms, heap, try_add);

  for (int32_t i = 0; i != -1; i = syms[i].next) {
    const Symbol& s = syms[i];
    if (s.id >= 0 && s.id < vocab_.size()) {
      out->push_back(s.id);
    } else {
      AppendBytes(word.substr(s.begin, s.len), out);
    }
  }
}

std::string BpeTokenizer::NormalPiece(int32_t id) const {
  if (vocab_.type(id) == TokenType::kUserDefined) return vocab_.text(id);  // added tokens are literal text
  return DecodeByteLevel(vocab_.text(id));
}

}  // namespace radixserve::tokenizer
