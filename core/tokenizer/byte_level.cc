#include "core/tokenizer/byte_level.h"

#include <array>

#include "core/tokenizer/unicode.h"

namespace radixserve::tokenizer {
namespace {

bool PrintsAsItself(int b) { return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF); }

struct Tables {
  std::array<uint32_t, 256> to_symbol{};
  std::array<int16_t, 0x144> to_byte{};  // symbols are all below U+0144
  Tables() {
    to_byte.fill(-1);
    uint32_t next = 0x100;
    for (int b = 0; b < 256; ++b) {
      to_symbol[b] = PrintsAsItself(b) ? static_cast<uint32_t>(b) : next++;
      to_byte[to_symbol[b]] = static_cast<int16_t>(b);
    }
  }
};

const Tables& GetTables() {
  static const Tables tables;
  return tables;
}

}  // namespace

uint32_t ByteToSymbol(uint8_t b) { return GetTables().to_symbol[b]; }

int SymbolToByte(uint32_t cp) {
  const auto& t = GetTables().to_byte;
  return cp < t.size() ? t[cp] : -1;
}

std::string DecodeByteLevel(std::string_view token_text) {
  std::string out;
  out.reserve(token_text.size());
  for (size_t pos = 0; pos < token_text.size();) {
    const size_t start = pos;
    const uint32_t cp = DecodeUtf8(token_text, &pos);
    const int b = SymbolToByte(cp);
    if (b >= 0) {
      out.push_back(static_cast<char>(b));
    } else {
      out.append(token_text.substr(start, pos - start));
    }
  }
  return out;
}

void EncodeByteLevel(std::string_view bytes, std::string* out) {
  for (unsigned char b : bytes) AppendUtf8(ByteToSymbol(b), out);
}

}  // namespace radixserve::tokenizer
