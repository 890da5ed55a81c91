#!/usr/bin/env bash
# radixserve against llama.cpp on the same CPU and the same model files (issues #11 and #12).
#
#   LLAMA_CPP_SRC=~/llama.cpp LLAMA_CPP_BUILD=~/llama.cpp/build bash bench/compare_llamacpp.sh [check|speed|archs|all]
#
# llama.cpp is not a dependency of radixserve: this script needs a CPU build of it that you made
# (cmake -B build -DGGML_NATIVE=ON && cmake --build build --target llama-quantize llama-bench llama),
# and a radixserve build with the tests (for model_bench).
#
# check: llama.cpp loads every weight type radixserve's generator writes, and continues the same
#        token-id prompt the same way. Each type gets a small generated model (dim 256, 4 layers,
#        the llama-spm vocabulary), and both engines print 16 greedy ids with an F32 KV cache
#        (bench/llamacpp/greedy_ids.cc on llama.cpp's side, `radixserve generate --print-ids` on
#        ours). Random-weight logits are nearly flat, so two engines can part at a near-tie: a fork
#        passes only where radixserve's token trails llama.cpp's best by at most RADIXSERVE_NEAR_TIE
#        in llama.cpp's own logits; any other difference is a failure (exit 1).
# speed: the medium generated model in F32, quantized by llama-quantize to each type, measured by
#        llama-bench (pp512, tg128) and by model_bench (prefill 512; decode at 1, 4, 16 sequences
#        over 128 and 512 cached tokens), 2 threads each.
# archs: the other architectures the generator writes (qwen3, qwen3moe, gemma2, gemma3, granite,
#        smollm3, phi3). (a) check's greedy comparison on a small F32 file of each, with the
#        features that take effect within its 24 tokens switched on (qwen3's own head size,
#        gemma2's soft-caps 4 and 5 and window 8, gemma3's window 8 with pattern 2); (b) each at
#        the medium size (llama-spm vocabulary) in F32 and quantized by llama-quantize to F16, Q8_0
#        and Q4_K_M, measured by llama-bench (pp512, tg128) and model_bench (prefill 512, decode of
#        one sequence over 128 cached tokens, F16 KV). qwen3moe's 8 experts of 1024, 2 used, make
#        its active FFN (2 x 1024) the dense qwen3's (2048): the script ends with the weight bytes
#        a decoded token reads in each, and the decode speeds.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${RADIXSERVE_BUILD_DIR:-$root/build}"
bin="$build/bin/radixserve"
src="${LLAMA_CPP_SRC:?set LLAMA_CPP_SRC to a llama.cpp source tree}"
lbuild="${LLAMA_CPP_BUILD:-$src/build}"
out="${RADIXSERVE_BENCH_DIR:-/tmp/radixserve-llamacpp}"
threads="${RADIXSERVE_BENCH_THREADS:-2}"
vocab="${RADIXSERVE_BENCH_VOCAB:-$root/../shared/vocab/ggml-vocab-llama-spm.gguf}"
# Decisive gap: the widest a pair of logits can part between the two engines' arithmetic. Both
# quantise the activations to 8 bits for block weights, but not identically (llama.cpp's Q8_K
# scale against radixserve's per-32 or per-256 FP16 one), and model_reference_test measures
# their logits up to 0.12 apart on llama.cpp's own quantized files (K-quants; 0.08 for Q8_0);
# two engines cannot part where the best logit leads by more than this.
near_tie="${RADIXSERVE_NEAR_TIE:-0.1}"
mode="${1:-all}"
mkdir -p "$out"
[ -x "$bin" ] || { echo "compare_llamacpp.sh: build radixserve first ($bin is missing)" >&2; exit 2; }
lbin="$lbuild/bin"
[ -x "$lbin/llama-quantize" ] || { echo "compare_llamacpp.sh: no llama-quantize in $lbin" >&2; exit 2; }
[ -f "$vocab" ] || { echo "compare_llamacpp.sh: no vocabulary at $vocab (RADIXSERVE_BENCH_VOCAB)" >&2; exit 2; }

greedy="$out/greedy_ids"
if [ ! -x "$greedy" ] || [ "$root/bench/llamacpp/greedy_ids.cc" -nt "$greedy" ]; then
  g++ -O2 -std=c++17 -I"$src/include" -I"$src/ggml/include" "$root/bench/llamacpp/greedy_ids.cc" \
    -L"$lbin" -lllama -lggml -lggml-base -Wl,-rpath,"$lbin" -o "$greedy"
fi

# greedy_row MODEL LABEL LOG: one table row, "| LABEL | llama.cpp loads | verdict |": both engines'
# 16 greedy ids for the same token-id prompt (F32 KV), compared with the near-tie rule above.
# Returns 1 when llama.cpp refuses the file or the ids part decisively.
greedy_row() {
  local m="$1" label="$2" log="$3" prompt="1,15,27,300,4000,29871,13,450"
  local theirs ours verdict
  if ! theirs="$("$greedy" "$m" "$prompt" 16 f32 "$threads" 2>"$log")"; then
    echo "| $label | **no**: $(tail -1 "$log") | |"
    return 1
  fi
  ours="$("$bin" generate --model "$m" --prompt-ids "$prompt" --max-tokens 16 --temperature 0 \
    --kv-type f32 --ignore-eos --print-ids --threads "$threads" 2>/dev/null | tail -1)"
  verdict="$(python3 - "$theirs" "$ours" "$near_tie" <<'EOF'
import json, sys
lines = sys.argv[1].splitlines()
theirs, runners = (json.loads(line) for line in lines[:2])
try:
    ours = json.loads(sys.argv[2])
except ValueError:
    print(f"FAIL: radixserve printed no ids ({sys.argv[2][:80]!r})")
    sys.exit()
near = float(sys.argv[3])
fork = next((i for i, (a, b) in enumerate(zip(theirs, ours)) if a != b), None)
gap = dict(runners[fork]).get(ours[fork]) if fork is not None else None
if fork is None and len(theirs) == len(ours):
    print("equal")
elif fork is None:
    print(f"FAIL: {len(ours)} ids against llama.cpp's {len(theirs)}")
elif gap is not None and gap <= near:
    print(f"equal up to step {fork}; there radixserve takes a token {gap:.3g} behind llama.cpp's best")
else:
    shown = "not in llama.cpp's best 9" if gap is None else f"{gap:.3g} behind llama.cpp's best"
    print(f"FAIL: parts at step {fork} (ours {ours[fork]}, {shown}; llama.cpp took {theirs[fork]})")
EOF
)"
  echo "| $label | yes | $verdict |"
  case "$verdict" in FAIL*) return 1 ;; esac
  return 0
}

check() {
  local failed=0
  echo "| type | llama.cpp loads | greedy ids (16, F32 KV) |"
  echo "|---|---|---|"
  for type in f32 f16 bf16 q8_0 q4_0 q4_1 q5_0 q5_1 iq4_nl q2_k q3_k q4_k q5_k q6_k q4_k_m q5_k_m; do
    local m="$out/check-$type.gguf"
    [ -f "$m" ] || "$bin" gen-model --size small --dim 256 --layers 4 --heads 8 --kv-heads 4 --ffn 768 \
      --type "$type" --tokenizer-from "$vocab" -o "$m" >/dev/null
    greedy_row "$m" "$type" "$out/check-$type.llama.log" || failed=1
  done
  return $failed
}

speed() {
  local f32="$out/medium-f32.gguf" files="" margs=()
  [ -f "$f32" ] || "$bin" gen-model --size medium --type f32 --tokenizer-from "$vocab" -o "$f32" >/dev/null
  for type in F16 Q8_0 Q4_0 Q4_K_M Q5_K_M Q6_K; do
    local q="$out/medium-$type.gguf"
    [ -f "$q" ] || "$lbin/llama-quantize" "$f32" "$q" "$type" "$threads" >"$out/quantize-$type.log" 2>&1
    files="$files,$q"
  done
  files="$f32$files"
  for f in ${files//,/ }; do margs+=(-m "$f"); done
  echo "## llama.cpp (llama-bench -p 512 -n 128 -t $threads)"
  "$lbin/llama-bench" "${margs[@]}" -p 512 -n 128 -t "$threads" -r 3 -o md 2>/dev/null
  echo "## radixserve (model_bench)"
  "$build/bin/model_bench" --files "$files" --threads "$threads" --batches 1,4,16 --cached 128,512 --kv f16
}

archs_list="qwen3 qwen3moe gemma2 gemma3 granite smollm3 phi3"

# The greedy check's options per architecture: the features that act within 24 tokens.
small_arch_args() {
  case "$1" in
    qwen3) echo "--head-dim 64" ;;  # Qwen3's head size differs from dim / heads (32)
    gemma2) echo "--attn-softcap 4 --final-softcap 5 --sliding-window 8" ;;
    gemma3) echo "--sliding-window 8 --swa-pattern 2" ;;
  esac
}
# The medium size's options: qwen3moe's active FFN (2 of 8 experts of 1024) is the dense 2048.
medium_arch_args() {
  case "$1" in
    qwen3moe) echo "--experts 8 --experts-used 2 --expert-ffn 1024" ;;
  esac
}

archs() {
  local failed=0 a
  echo "## greedy ids: small F32 files (dim 256, 4 layers, 8 heads, 4 kv heads, ffn 768), 16 ids, F32 KV"
  echo "| arch | llama.cpp loads | greedy ids (16, F32 KV) |"
  echo "|---|---|---|"
  for a in $archs_list; do
    local m="$out/archs-small-$a.F32.gguf"
    # shellcheck disable=SC2046
    [ -f "$m" ] || "$bin" gen-model --arch "$a" --size small --dim 256 --layers 4 --heads 8 --kv-heads 4 --ffn 768 \
      $(small_arch_args "$a") --type f32 --tokenizer-from "$vocab" -o "$m" >/dev/null
    greedy_row "$m" "$a" "$out/archs-small-$a.llama.log" || failed=1
  done

  local files="" margs=() f
  for a in $archs_list; do
    local f32="$out/medium-$a.F32.gguf"
    # shellcheck disable=SC2046
    [ -f "$f32" ] || "$bin" gen-model --arch "$a" --size medium $(medium_arch_args "$a") --type f32 \
      --tokenizer-from "$vocab" -o "$f32" >/dev/null
    files="$files,$f32"
    for type in F16 Q8_0 Q4_K_M; do
      local q="$out/medium-$a.$type.gguf"
      if [ ! -f "$q" ] && ! "$lbin/llama-quantize" "$f32" "$q" "$type" "$threads" >"$out/quantize-$a-$type.log" 2>&1; then
        echo "llama-quantize refused $f32 -> $type: $(tail -1 "$out/quantize-$a-$type.log")" >&2
        rm -f "$q"
        failed=1
        continue
      fi
      files="$files,$q"
    done
  done
  files="${files#,}"
  for f in ${files//,/ }; do margs+=(-m "$f"); done
  echo
  echo "## llama.cpp (llama-bench -p 512 -n 128 -t $threads -r 3), medium size"
  "$lbin/llama-bench" "${margs[@]}" -p 512 -n 128 -t "$threads" -r 3 -o json 2>"$out/archs-llama-bench.log" \
    >"$out/archs-llama-bench.json" || { echo "llama-bench failed: $(tail -1 "$out/archs-llama-bench.log")"; failed=1; }
  python3 - "$out/archs-llama-bench.json" <<'EOF'
import json, os, sys
try:
    runs = json.load(open(sys.argv[1]))
except ValueError:
    sys.exit("no llama-bench results")
rows = {}
for r in runs:
    name = os.path.basename(r["model_filename"]).removeprefix("medium-").removesuffix(".gguf")
    row = rows.setdefault(name, {"size": r["model_size"] / 2**20, "params": r["model_n_params"] / 1e6})
    test = f"pp{r['n_prompt']}" if r["n_gen"] == 0 else f"tg{r['n_gen']}"
    row[test] = f"{r['avg_ts']:.1f} ± {r['stddev_ts']:.1f}"
print("| file | size MiB | params M | pp512 tok/s | tg128 tok/s |")
print("|---|---:|---:|---:|---:|")
for name, r in rows.items():
    print(f"| {name} | {r['size']:.1f} | {r['params']:.1f} | {r.get('pp512', '-')} | {r.get('tg128', '-')} |")
EOF
  echo
  echo "## radixserve (model_bench --batches 1 --cached 128 --kv f16), medium size"
  "$build/bin/model_bench" --files "$files" --threads "$threads" --batches 1 --cached 128 --kv f16 \
    | tee "$out/archs-model-bench.md"
  echo
  echo "## qwen3moe (8 experts of 1024, 2 used) against the dense qwen3 of the same active size (ffn 2048)"
  python3 - "$out/archs-model-bench.md" "$out/archs-llama-bench.json" <<'EOF'
import json, os, sys
ours = {}
for line in open(sys.argv[1]):
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if len(cells) >= 7 and cells[0].startswith("medium-qwen3"):
        ours[cells[0].removeprefix("medium-")] = cells  # type, threads, kv, prefill, decode, MB/token, bound
theirs = {}
try:
    for r in json.load(open(sys.argv[2])):
        if r["n_gen"]:
            theirs[os.path.basename(r["model_filename"]).removeprefix("medium-").removesuffix(".gguf")] = r["avg_ts"]
except (OSError, ValueError):
    pass
print("| type | weights MB/token dense | MoE | MoE/dense | radixserve decode tok/s dense | MoE | llama.cpp tg128 dense | MoE |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for t in ["F32", "F16", "Q8_0", "Q4_K_M"]:
    d, m = ours.get(f"qwen3.{t}"), ours.get(f"qwen3moe.{t}")
    if not d or not m:
        continue
    ratio = float(m[5]) / float(d[5])
    ld, lm = theirs.get(f"qwen3.{t}"), theirs.get(f"qwen3moe.{t}")
    fmt = lambda v: "-" if v is None else f"{v:.1f}"
    print(f"| {t} | {d[5]} | {m[5]} | {ratio:.3f} | {d[4]} | {m[4]} | {fmt(ld)} | {fmt(lm)} |")
EOF
  return $failed
}

case "$mode" in
  check) check ;;
  speed) speed ;;
  archs) archs ;;
  all) rc=0; check || rc=1; speed; archs || rc=1; exit $rc ;;
  *) echo "usage: compare_llamacpp.sh [check|speed|archs|all]" >&2; exit 2 ;;
esac
