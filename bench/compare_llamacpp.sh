#!/usr/bin/env bash
# radixserve against llama.cpp on the same CPU and the same model files (issues #11 and #12).
#
#   LLAMA_CPP_SRC=~/llama.cpp LLAMA_CPP_BUILD=~/llama.cpp/build bash bench/compare_llamacpp.sh [check|speed|all]
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

check() {
  local prompt="1,15,27,300,4000,29871,13,450" failed=0
  echo "| type | llama.cpp loads | greedy ids (16, F32 KV) |"
  echo "|---|---|---|"
  for type in f32 f16 bf16 q8_0 q4_0 q4_1 q5_0 q5_1 iq4_nl q2_k q3_k q4_k q5_k q6_k q4_k_m q5_k_m; do
    local m="$out/check-$type.gguf"
    [ -f "$m" ] || "$bin" gen-model --size small --dim 256 --layers 4 --heads 8 --kv-heads 4 --ffn 768 \
      --type "$type" --tokenizer-from "$vocab" -o "$m" >/dev/null
    local theirs ours
    if ! theirs="$("$greedy" "$m" "$prompt" 16 f32 "$threads" 2>"$out/check-$type.llama.log")"; then
      echo "| $type | **no**: $(tail -1 "$out/check-$type.llama.log") | |"
      failed=1
      continue
    fi
    ours="$("$bin" generate --model "$m" --prompt-ids "$prompt" --max-tokens 16 --temperature 0 \
      --kv-type f32 --ignore-eos --print-ids --threads "$threads" 2>/dev/null | tail -1)"
    local verdict
    verdict="$(python3 - "$theirs" "$ours" "$near_tie" <<'EOF'
import json, sys
lines = sys.argv[1].splitlines()
theirs, runners = (json.loads(line) for line in lines[:2])
ours, near = json.loads(sys.argv[2]), float(sys.argv[3])
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
    echo "| $type | yes | $verdict |"
    case "$verdict" in FAIL*) failed=1 ;; esac
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

case "$mode" in
  check) check ;;
  speed) speed ;;
  all) rc=0; check || rc=1; speed; exit $rc ;;
  *) echo "usage: compare_llamacpp.sh [check|speed|all]" >&2; exit 2 ;;
esac
