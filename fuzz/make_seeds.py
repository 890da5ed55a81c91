#!/usr/bin/env python3
"""Writes the seed corpora under fuzz/corpus/<target>/ (small, hand-made inputs).

Run from the repository root; the files are committed, so this only needs rerunning when
a seed changes."""
import os
import struct

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def put(target, name, data):
    d = os.path.join(ROOT, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


# ---- gguf: small v2/v3 files with every value type and a few tensors ----
def gstr(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def kv(key, vtype, payload):
    return gstr(key) + struct.pack("<I", vtype) + payload


def gguf(version, kvs, tensors, align=32):
    out = b"GGUF" + struct.pack("<IQQ", version, len(tensors), len(kvs)) + b"".join(kvs)
    data = b""
    infos = b""
    for name, dims, ttype, blob in tensors:
        off = len(data)
        infos += gstr(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims)
        infos += struct.pack("<IQ", ttype, off)
        data += blob
        data += b"\0" * ((-len(data)) % align)
    out += infos
    out += b"\0" * ((-len(out)) % align)
    return out + data


all_types = [
    kv("u8", 0, struct.pack("<B", 7)), kv("i8", 1, struct.pack("<b", -7)), kv("u16", 2, struct.pack("<H", 7)),
    kv("i16", 3, struct.pack("<h", -7)), kv("u32", 4, struct.pack("<I", 7)), kv("i32", 5, struct.pack("<i", -7)),
    kv("f32", 6, struct.pack("<f", 0.5)), kv("bool", 7, b"\x01"), kv("str", 8, gstr("hello")),
    kv("arr_str", 9, struct.pack("<IQ", 8, 2) + gstr("a") + gstr("bc")),
    kv("arr_i32", 9, struct.pack("<IQ", 5, 3) + struct.pack("<3i", 1, 2, 3)),
    kv("arr_f32", 9, struct.pack("<IQ", 6, 2) + struct.pack("<2f", 1.0, 2.0)),
    kv("u64", 10, struct.pack("<Q", 7)), kv("i64", 11, struct.pack("<q", -7)), kv("f64", 12, struct.pack("<d", 0.25)),
    kv("arr_nested", 9, struct.pack("<IQ", 9, 1) + struct.pack("<IQ", 4, 1) + struct.pack("<I", 9)),
]
f32_tensor = ("w", [4, 2], 0, struct.pack("<8f", *range(8)))
f16_tensor = ("h", [8], 1, b"\0\x3c" * 8)
q8_tensor = ("q", [32], 8, struct.pack("<e", 1.0) + bytes(range(32)))
put("gguf", "v3_all_types", gguf(3, all_types, [f32_tensor, f16_tensor, q8_tensor]))
put("gguf", "v2_small", gguf(2, [kv("general.architecture", 8, gstr("llama"))], [f32_tensor]))
put("gguf", "aligned_64", gguf(3, [kv("general.alignment", 4, struct.pack("<I", 64))], [f32_tensor, q8_tensor], 64))
put("gguf", "empty", gguf(3, [], []))
put("gguf", "tokenizer", gguf(3, [kv("tokenizer.ggml.model", 8, gstr("llama")),
                                  kv("tokenizer.ggml.tokens", 9, struct.pack("<IQ", 8, 3) + gstr("<unk>") + gstr("<s>") + gstr("a")),
                                  kv("tokenizer.ggml.scores", 9, struct.pack("<IQ", 6, 3) + struct.pack("<3f", 0, 0, -1))], []))

# ---- tokenizer: selector byte (tokenizer index | flags) + text ----
texts = ["Hello world, the thing is going well!", " the  hello\n\n\ttabs", "héllo wörld ñ 日本語 😀",
         "<s>[INST] hi [/INST]</s>", "<|im_start|>user\nhi<|im_end|><|endoftext|><extra>", "12345 678 3.14 can't I'll",
         "\xe2\x96\x81\xe2\x96\x81x", "", "   ", "a" * 300]
for i, t in enumerate(texts):
    for sel in (0x00, 0x31, 0x72, 0x13, 0x24, 0x35, 0x46, 0x57, 0x68):
        if (i + sel) % 3 == 0:
            put("tokenizer", f"t{i}_{sel:02x}", bytes([sel]) + t.encode())
put("tokenizer", "invalid_utf8", b"\x01" + b"ab\xff\xfe\xc3(\xe2\x82 \xf0\x9f\x98")

# ---- request_parser: JSON bodies of every endpoint ----
bodies = {
    "completion": '{"model":"default","prompt":"Once upon","max_tokens":16,"temperature":0.7,"top_p":0.9,"stop":["\\n","END"],"n":2,"logprobs":3,"seed":5,"stream":true}',
    "completion_ids": '{"prompt":[1,2,3],"max_tokens":4,"echo":false,"stream_options":{"include_usage":true}}',
    "chat": '{"model":"default","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi"}],"max_tokens":8,"logprobs":true,"top_logprobs":2,"stop":"x"}',
    "chat_parts": '{"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}],"max_completion_tokens":3}',
    "generate": '{"text":"hi","sampling_params":{"max_new_tokens":4,"temperature":0,"top_k":5,"min_p":0.1,"stop_token_ids":[2],"ignore_eos":true},"return_logprob":true,"top_logprobs_num":2,"rid":"r1"}',
    "generate_ids": '{"input_ids":[1,5,9],"sampling_params":{"max_new_tokens":2,"repetition_penalty":1.1}}',
    "tokenize": '{"text":"hello","add_special_tokens":false}',
    "tokenize_chat": '{"messages":[{"role":"user","content":"hi"}]}',
    "detokenize": '{"tokens":[1,2,3],"skip_special_tokens":false}',
    "wrong_types": '{"prompt":5,"max_tokens":"x","temperature":null,"n":-1,"stop":[1],"messages":{}}',
    "huge_numbers": '{"prompt":"a","max_tokens":1e999,"temperature":-1e308,"n":99999999999999999999}',
    "nested": "[" * 50 + "]" * 50,
    "bad_utf8": b'{"prompt":"\xff\xfe","stop":["\xc3"]}',
    # Structured output: each constraint form reaches the grammar compiler.
    "response_format_schema": '{"messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema","json_schema":{"name":"p","strict":true,"schema":{"type":"object","properties":{"name":{"type":"string","maxLength":8},"age":{"type":"integer","minimum":0,"maximum":120}},"required":["name","age"],"additionalProperties":false}}}}',
    "response_format_json_object": '{"prompt":"x","response_format":{"type":"json_object"}}',
    "guided_regex": '{"prompt":"x","guided_regex":"[a-z]{2,5}(-\\\\d+)?"}',
    "guided_choice": '{"prompt":"x","guided_choice":["yes","no"]}',
    "generate_ebnf": '{"text":"x","sampling_params":{"ebnf":"root ::= item+\\nitem ::= [a-c] | \\"(\\" root \\")\\""}}',
    "guided_json_text": '{"prompt":"x","guided_json":"{\\"type\\":\\"array\\",\\"items\\":{\\"enum\\":[1,\\"a\\",null]}}"}',
}
for name, body in bodies.items():
    put("request_parser", name, body)

# ---- http_connection: raw client bytes ----
reqs = {
    "get": "GET /health HTTP/1.1\r\nHost: x\r\n\r\n",
    "post": 'POST /v1/completions?x=1 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 15\r\n\r\n{"prompt":"hi"}',
    "pipelined": "GET /a HTTP/1.1\r\n\r\nGET /b HTTP/1.0\r\nConnection: keep-alive\r\n\r\nPOST /c HTTP/1.1\r\nContent-Length: 2\r\n\r\nok",
    "expect": "POST /x HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\nabc",
    "chunked": "POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
    "too_large": "POST /x HTTP/1.1\r\nContent-Length: 999999999\r\n\r\n",
    "bad_line": "GARBAGE\r\n\r\n",
    "bad_header": "GET / HTTP/1.1\r\n: novalue\r\nNoColon\r\n\r\n",
    "truncated": "POST /x HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc",
    "close": "GET / HTTP/1.1\r\nConnection: close\r\n\r\n",
}
for name, r in reqs.items():
    put("http_connection", name, r)

# ---- launch: the shipped files plus small ones ----
repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for name in ("edge.yaml", "compact.yaml"):
    with open(os.path.join(repo, "launch", name), "rb") as f:
        put("launch", name, f.read())
put("launch", "minimal.yaml", "launch:\n- node:\n    name: api\n    component: api\n")
put("launch", "args.yaml", "launch:\n- arg: {name: port, default: '8000'}\n- node:\n    name: api\n    component: api\n    parameters: [{port: $(var port)}]\n")
put("launch", "group.yaml", "launch:\n- group:\n    namespace: g\n    actions:\n    - node: {name: a, component: worker, respawn: true, respawn_delay: 1.5}\n")
put("launch", "bad.yaml", "launch: [ {node: [1, 2]}, {include: {file: nope.yaml}}, 5 ]\n")
put("launch", "anchors.yaml", "a: &x [1, *x]\nlaunch: []\n")

# ---- messages: kind byte, flags (1: fix the header), body (zeros → empty arrays) ----
for kind in range(10):
    put("messages", f"kind{kind}_zeros", bytes([kind, 1]) + b"\0" * 512)
    put("messages", f"kind{kind}_raw", bytes([kind, 0]) + b"RMSG" + b"\0" * 60)
