#!/usr/bin/env python3
"""Generates tests/tokenizer/testdata/pretokenizer_cases.json: reference word splits for the
single-regex pre-tokenizer families, made with the `regex` module (which, like the
Hugging Face tokenizers, supports \\p{..} classes and lookahead).

Usage: python3 tools/gen_pretokenizer_cases.py [/work/shared/vocab] > tests/tokenizer/testdata/pretokenizer_cases.json

The test inputs are the vocab conformance strings plus extra cases aimed at the regexes'
corners (case-insensitive contractions, digit groups, newline runs, non-ASCII classes).
Needs `pip install regex`; the output is committed so that tests never need python.
"""
import glob
import json
import os
import sys

import regex

PATTERNS = {
    # Hugging Face ByteLevel pre-tokenizer (GPT-2).
    "gpt2": r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""",
    # Llama 3 tokenizer.json.
    "llama3": r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""",
    # Qwen2 tokenizer.json.
    "qwen2": r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""",
    # GPT-4o (o200k_base) as llama.cpp's LLAMA_VOCAB_PRE_TYPE_GPT4O lists it (Phi-4-mini, llama4).
    "gpt-4o": r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+""",
}

EXTRA = [
    "I'M here, THEY'RE there; it'S WE'VE YOU'LL he'D",
    "don't won't can't 'tis 'Twas",
    "1234567 12 1 123456789012",
    "line one\r\nline two\n\n\n  indented\n\t\ttabs\n",
    "   leading and trailing   ",
    "\n",
    "  \n  x",
    "!!!\n\n?",
    "$100 + €50 = ¥1,000.00",
    "Ünïcödé Ωμέγα Привет мир",
    "日本語のテキスト、中文文本。한국어 텍스트",
    "١٢٣ ٤٥٦ Ⅻ ½ ²",
    "e\u0301t\u00e9 cafe\u0301",
    "x\u00a0y\u2003z\u3000w",
    "emoji 🦙🦙 and 👨‍👩‍👧 family",
    "tab\tsep\tvalues\t\t\n",
    "<|im_start|>user\nhi<|im_end|>",
    "a'b'c''d'''",
    "snake_case_name = camelCaseName2(x)",
    "HELLOworld's I'M don't ÉCOLE élève E\u0301COLE camelCaseWord XMLHttpRequest",
    "it'S WE'LL THEY'RE ǅemal ǈubav ʰaʰ Ωμέγα ΩΜΈΓΑ ß ﬁne",
    "a/b\n/c ./x //\n\n/ \t\tfoo\t \n",
    "!Hello ¡Hola (ok) [X] 'quoted' \"DQ\" -x +Y",
    "",
]


def read_vocab_inputs(vocab_dir):
    sep = "\n__ggml_vocab_test__\n"
    seen = []
    for path in sorted(glob.glob(os.path.join(vocab_dir, "*.gguf.inp"))):
        with open(path, encoding="utf-8") as f:
            for s in f.read().split(sep)[:-1]:
                if s not in seen:
                    seen.append(s)
    return seen


def main():
    vocab_dir = sys.argv[1] if len(sys.argv) > 1 else "/work/shared/vocab"
    texts = read_vocab_inputs(vocab_dir) + EXTRA
    cases = []
    for family, pattern in PATTERNS.items():
        rx = regex.compile(pattern)
        for t in texts:
            cases.append({"family": family, "text": t, "words": rx.findall(t)})
    json.dump({"regex_version": regex.__version__, "cases": cases}, sys.stdout, ensure_ascii=False, indent=0)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
