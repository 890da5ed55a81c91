// GPT-2 byte-level alphabet: each of the 256 byte values is written as one printable code
// point in byte-level BPE vocabularies ("Ġ" is the space byte, "Ċ" the newline byte).
// Bytes that are already printable Latin-1 characters (!..~, ¡..¬, ®..ÿ) map to themselves;
// the other 68 map to U+0100 and upwards, in byte order. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace radixserve::tokenizer {

// The code point that stands for byte `b`.
uint32_t ByteToSymbol(uint8_t b);
// The byte that code point `cp` stands for, or -1 if it is not a byte-level symbol.
int SymbolToByte(uint32_t cp);
// Decodes byte-level token text to raw bytes; code points outside the alphabet are kept
// as their UTF-8 encoding.
std::string DecodeByteLevel(std::string_view token_text);
// Appends the byte-level spelling of `bytes` to *out.
void EncodeByteLevel(std::string_view bytes, std::string* out);

}  // namespace radixserve::tokenizer
