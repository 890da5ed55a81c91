#include "core/modelgen/builtin_vocab.h"

#include <cstdio>
#include <unordered_set>

namespace radixserve::modelgen {
namespace {

constexpr const char* kSpace = "\xE2\x96\x81";  // U+2581, SentencePiece's escaped space

constexpr const char* kWords[] = {
    "the", "a", "an", "and", "or", "but", "of", "to", "in", "on", "at", "for", "with", "from", "by", "as",
    "is", "are", "was", "were", "be", "been", "it", "its", "this", "that", "these", "there", "they", "he",
    "she", "we", "you", "I", "me", "my", "your", "his", "her", "our", "their", "not", "no", "yes", "can",
    "will", "would", "could", "should", "do", "does", "did", "have", "has", "had", "what", "when", "where",
    "who", "why", "how", "which", "one", "two", "three", "time", "day", "year", "people", "man", "woman",
    "child", "world", "life", "hand", "part", "place", "case", "week", "company", "system", "program",
    "question", "work", "number", "night", "point", "home", "water", "room", "mother", "area", "money",
    "story", "fact", "month", "lot", "right", "study", "book", "eye", "job", "word", "business", "issue",
    "side", "kind", "head", "house", "service", "friend", "father", "power", "hour", "game", "line", "end",
    "member", "law", "car", "city", "name", "team", "minute", "idea", "kid", "body", "information", "back",
    "parent", "face", "others", "level", "office", "door", "health", "person", "art", "war", "history",
    "party", "result", "change", "morning", "reason", "research", "girl", "guy", "moment", "air",
    "teacher", "force", "education", "once", "upon", "little", "big", "happy", "sad", "good", "bad",
    "new", "old", "great", "small", "large", "long", "short", "high", "low", "say", "said", "go", "went",
    "get", "make", "know", "think", "take", "see", "come", "want", "look", "use", "find", "give", "tell",
    "ask", "seem", "feel", "try", "leave", "call", "play", "run", "ran", "saw", "very", "all", "some",
    "just", "like", "so", "then", "than", "up", "out", "about", "into", "over", "after", "also", "well",
    "only", "many", "more", "most", "other", "any", "each", "every", "model", "server", "token", "cache",
    "request", "answer", "hello", "world", "radix", "serve", "fast", "speed", "edge", "box", "tree",
    "dog", "cat", "bird", "sun", "sky", "park", "ball", "toy", "fun", "love", "named", "Lily", "Tom",
    "Ben", "Sue", "Tim", "Mia", "Max", "Anna",
};

}  // namespace

const Vocab& BuiltinVocab() {
  static const Vocab vocab = [] {
    Vocab v;
    std::unordered_set<std::string> seen;
    auto add = [&](const std::string& piece, float score, int32_t type) {
      if (!seen.insert(piece).second) return;
      v.tokens.push_back(piece);
      v.scores.push_back(score);
      v.types.push_back(type);
    };
    add("<unk>", 0.0f, 2);
    add("<s>", 0.0f, 3);
    add("</s>", 0.0f, 3);
    for (int b = 0; b < 256; ++b) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "<0x%02X>", b);
      add(buf, 0.0f, 6);
    }
    // Single characters: the space marker, printable ASCII. Low scores: merges prefer longer pieces.
    add(kSpace, -1000.0f, 1);
    for (int c = 33; c < 127; ++c) add(std::string(1, static_cast<char>(c)), -1000.0f, 1);
    // Each word, space-prefixed, with every prefix of two or more characters; longer scores higher.
    for (const char* word : kWords) {
      std::string full = std::string(kSpace) + word;
      size_t space_len = std::string(kSpace).size();
      for (size_t n = space_len + 1; n <= full.size(); ++n) add(full.substr(0, n), -100.0f + float(n), 1);
    }
    return v;
  }();
  return vocab;
}

}  // namespace radixserve::modelgen
