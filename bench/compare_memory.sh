#!/usr/bin/env bash
# The memory of a radixserve pipeline against llama-server's (issue #41, point 4): the same GGUF
# file, the same context per sequence, the same parallel sequences and the same KV tokens in all.
#
#   LLAMA_CPP_BUILD=~/llama.cpp/build bash bench/compare_memory.sh [ROW ...]
#
# A ROW is KVTYPE:SEQS[:mrr][:compact] (default rows: f16:1 q8_0:1 auto:1 f16:4 f16:1:mrr f16:4:mrr
# f16:1:mrr:compact).
#   radixserve: radixserve launch launch/edge.yaml model:=M port:=P context:=C kv_tokens:=C*SEQS
#               kv_type:=KVTYPE threads:=T            (an iceoryx RouDi + launcher + 4 node processes)
#               ":mrr": the same with max_running_requests:=SEQS (as llama-server's -np; the
#               default is 256)
#               ":compact": launch/compact.yaml (the four nodes in one container process) instead
#   llama-server: -m M -t T -c C*SEQS -np SEQS (its KV is not unified when -np is given, so every slot
#               gets C = c/np tokens: the same C*SEQS KV tokens as radixserve's pool) with
#               -ctk/-ctv f16 (its default; flash attention "auto"), q8_0 (-fa on), or f32 for
#               radixserve's "auto" (f32 on the CPU); warm-up left on (llama-server's default).
# (llama-server runs with -lv 4 only so that its log states its buffers.)
# Each side serves SEQS concurrent /v1/completions (a ~32-token prompt, 32 tokens, ignore_eos), then
# every process of it is measured from /proc/PID/smaps_rollup: RSS, and PSS (pages shared between
# processes counted once, split among them; shared memory nobody touched is not resident), split
# into anonymous, file-backed and shared-memory PSS. The pipeline's total PSS is the sum over its
# processes; the shm columns give iceoryx's /dev/shm segments, reserved (apparent size) and resident
# (du). Then each side is stopped (SIGINT to the launcher; SIGTERM to llama-server).
#
# Only one iceoryx RouDi can run on a machine: before each launch the script waits (polling every
# 20 s) until no iox-roudi / `radixserve roudi` runs. The largest mappings of each process go to
# $RADIXSERVE_BENCH_DIR/<row>-<process>.maps (and are printed with RADIXSERVE_MEMORY_MAPS=1).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${RADIXSERVE_BUILD_DIR:-$root/build}"
bin="$build/bin/radixserve"
lbuild="${LLAMA_CPP_BUILD:?set LLAMA_CPP_BUILD to a llama.cpp CPU build directory (with bin/llama-server)}"
lserver="$lbuild/bin/llama-server"
out="${RADIXSERVE_BENCH_DIR:-/tmp/radixserve-memory}"
threads="${RADIXSERVE_BENCH_THREADS:-2}"
ctx="${RADIXSERVE_BENCH_CONTEXT:-4096}"
vocab="${RADIXSERVE_BENCH_VOCAB:-$root/../shared/vocab/ggml-vocab-llama-spm.gguf}"
model="${RADIXSERVE_BENCH_MODEL:-$out/medium-q8_0.gguf}"
rs_port="${RADIXSERVE_BENCH_PORT:-30197}"
lc_port="$((rs_port + 1))"
show_maps="${RADIXSERVE_MEMORY_MAPS:-0}"
rows=("$@")
[ ${#rows[@]} -gt 0 ] || rows=(f16:1 q8_0:1 auto:1 f16:4 f16:1:mrr f16:4:mrr f16:1:mrr:compact)
mkdir -p "$out"
[ -x "$bin" ] || { echo "compare_memory.sh: build radixserve first ($bin is missing)" >&2; exit 2; }
[ -x "$lserver" ] || { echo "compare_memory.sh: no llama-server in $lbuild/bin" >&2; exit 2; }
if [ ! -f "$model" ]; then
  [ -f "$vocab" ] || { echo "compare_memory.sh: no vocabulary at $vocab (RADIXSERVE_BENCH_VOCAB)" >&2; exit 2; }
  "$bin" gen-model --size medium --type q8_0 --context "$ctx" --tokenizer-from "$vocab" -o "$model" >/dev/null || exit 2
fi
grep -q 'kv_type' "$root/launch/edge.yaml" || { echo "compare_memory.sh: launch/edge.yaml has no kv_type argument" >&2; exit 2; }

launcher_pid="" lc_pid=""
cleanup() {
  [ -n "$launcher_pid" ] && kill -INT "$launcher_pid" 2>/dev/null
  [ -n "$lc_pid" ] && kill "$lc_pid" 2>/dev/null
  wait 2>/dev/null
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
# "Rss Pss Pss_Anon Pss_File Pss_Shmem" in kB of one process
rollup() {
  awk '/^(Rss|Pss|Pss_Anon|Pss_File|Pss_Shmem):/ { v[$1] = $2 }
       END { printf "%d %d %d %d %d\n", v["Rss:"], v["Pss:"], v["Pss_Anon:"], v["Pss_File:"], v["Pss_Shmem:"] }' \
    "/proc/$1/smaps_rollup" 2>/dev/null
}
# The mappings of a process by name (anonymous ones one by one, with their size), largest RSS first.
maps() {
  python3 - "$1" "${2:-12}" <<'PY' 2>/dev/null
import sys
rss, pss, size, name = {}, {}, {}, None
for line in open(f"/proc/{sys.argv[1]}/smaps"):
    f = line.split()
    if "-" in f[0] and len(f) >= 5 and ":" in f[3]:
        lo, hi = (int(x, 16) for x in f[0].split("-"))
        name = " ".join(f[5:]) or f"[anon {f[0]}]"
        size[name] = size.get(name, 0) + (hi - lo) // 1024
    elif f[0] == "Rss:":
        rss[name] = rss.get(name, 0) + int(f[1])
    elif f[0] == "Pss:":
        pss[name] = pss.get(name, 0) + int(f[1])
for n in sorted(rss, key=lambda n: -rss[n])[: int(sys.argv[2])]:
    if rss[n]:
        print(f"{rss[n]:8d} {pss[n]:8d} {size[n]:9d}  {n}")
PY
}
label() {
  local cmd
  cmd="$(tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null)"
  case "$cmd" in
    *iox-roudi*) echo roudi ;;
    *" roudi"*) echo roudi ;;
    *" node "*) echo "$cmd" | sed 's/.* node \([^ ]*\).*/\1/' ;;
    *" watch-status"*) echo watch-status ;;
    *" container "*) echo container ;;
    *" launch "*) echo launcher ;;
    *) basename "${cmd%% *}" ;;
  esac
}
roudi_running() { pgrep -x iox-roudi >/dev/null || pgrep -f "radixserve roudi" >/dev/null; }
wait_for_no_roudi() {
  while roudi_running; do
    echo "  (an iceoryx RouDi is running: $(pgrep -x iox-roudi; pgrep -f 'radixserve roudi') ; waiting 20 s)" >&2
    sleep 20
  done
}
prompt="Once upon a time there was a little girl who lived in a village near the forest. Every day she walked to the river to look at the fish"
request() {  # port, concurrent requests
  local i pids=()
  for ((i = 0; i < $2; i++)); do
    curl -s -m 120 "http://127.0.0.1:$1/v1/completions" -H 'Content-Type: application/json' \
      -d "{\"prompt\": \"$prompt $i\", \"max_tokens\": 32, \"temperature\": 0, \"ignore_eos\": true}" \
      -o "$out/response-$1-$i.json" -w '%{http_code}\n' &
    pids+=($!)
  done
  wait "${pids[@]}"
}
# prints the usage of one request's response: prompt/completion tokens
usage() {
  python3 -c 'import json,sys; u=json.load(open(sys.argv[1])).get("usage",{}); print(u.get("prompt_tokens"), "+", u.get("completion_tokens"), "tokens")' "$1" 2>/dev/null || echo "no usage"
}

summary=()
for row in "${rows[@]}"; do
  IFS=: read -r kv seqs flags <<<"$row"
  [ -n "$seqs" ] || seqs=1
  mrr="" shape=edge
  case ":$flags:" in *:mrr:*) mrr=1 ;; esac
  case ":$flags:" in *:compact:*) shape=compact ;; esac
  mrr_text="256 (default)"; [ -n "$mrr" ] && mrr_text="$seqs"
  tokens=$((ctx * seqs))
  tag="${kv}x${seqs}${mrr:+-mrr}-$shape"
  case "$kv" in
    f16) lc_kv=(-ctk f16 -ctv f16); lc_desc="f16 (default), -fa auto" ;;
    q8_0) lc_kv=(-ctk q8_0 -ctv q8_0 -fa on); lc_desc="-ctk q8_0 -ctv q8_0 -fa on" ;;
    q4_0) lc_kv=(-ctk q4_0 -ctv q4_0 -fa on); lc_desc="-ctk q4_0 -ctv q4_0 -fa on" ;;
    auto | f32) lc_kv=(-ctk f32 -ctv f32); lc_desc="-ctk f32 -ctv f32, -fa auto" ;;
    *) echo "compare_memory.sh: unknown KV type '$kv' in row '$row'" >&2; exit 2 ;;
  esac
  echo
  echo "## $tag: KV $kv, $seqs parallel sequence(s) of $ctx tokens, $tokens KV tokens in all, launch/$shape.yaml${mrr:+ with max_running_requests $seqs}"
  echo

  # --- radixserve
  launch_file="$root/launch/$shape.yaml"
  rs_cmd=("$bin" launch "$launch_file" "model:=$model" "port:=$rs_port" "context:=$ctx" "kv_tokens:=$tokens" "kv_type:=$kv" "threads:=$threads"
          ${mrr:+"max_running_requests:=$seqs"})
  log="$out/$tag-radixserve.log"
  started=0
  for attempt in 1 2 3 4 5 6 7 8 9 10; do
    wait_for_no_roudi
    shm_before="$(ls /dev/shm)"
    [ "$attempt" = 1 ] && echo "\$ ${rs_cmd[*]}"
    "${rs_cmd[@]}" >"$log" 2>&1 &
    launcher_pid=$!
    for _ in $(seq 120); do grep -q "is ready" "$log" && break; kill -0 "$launcher_pid" 2>/dev/null || break; sleep 1; done
    if grep -q "is ready" "$log" && grep -q "RouDi started" "$log"; then started=1; break; fi
    # Another launch (a test) took the machine's RouDi between our check and our start: try again.
    echo "  (attempt $attempt: $(grep -m1 -o 'already running[^(]*\|shares\|did not[^.]*' "$log" || tail -1 "$log"); retrying)" >&2
    kill -INT "$launcher_pid" 2>/dev/null; wait "$launcher_pid" 2>/dev/null; launcher_pid=""
    sleep 5
  done
  [ "$started" = 1 ] || { echo "radixserve did not start:"; tail -20 "$log"; continue; }
  grep -h "KV pool:\|RouDi started" "$log" | sed 's/^/    /'
  echo "    requests: $(request "$rs_port" "$seqs" | tr '\n' ' ')($(usage "$out/response-$rs_port-0.json"))"
  sleep 1
  pids=("$launcher_pid" $(ps -o pid= --ppid "$launcher_pid"))
  echo
  echo "| process | pid | RSS MiB | PSS MiB | PSS anon | PSS file | PSS shmem |"
  echo "|---|---|---|---|---|---|---|"
  tot_rss=0 tot_pss=0 tot_anon=0 tot_file=0 tot_shm=0 roudi_pss=0 model_pss=0
  for pid in "${pids[@]}"; do
    read -r r p a f s <<<"$(rollup "$pid")"
    [ -n "$r" ] || continue
    name="$(label "$pid")"
    echo "| $name | $pid | $(mib "$r") | $(mib "$p") | $(mib "$a") | $(mib "$f") | $(mib "$s") |"
    maps "$pid" 25 >"$out/$tag-$name.maps"
    case "$name" in roudi) roudi_pss=$p ;; worker | container) model_pss=$p ;; esac
    tot_rss=$((tot_rss + r)) tot_pss=$((tot_pss + p)) tot_anon=$((tot_anon + a)) tot_file=$((tot_file + f)) tot_shm=$((tot_shm + s))
  done
  echo "| **radixserve total** | | $(mib $tot_rss) (sum) | **$(mib $tot_pss)** | $(mib $tot_anon) | $(mib $tot_file) | $(mib $tot_shm) |"
  shm_reserved=0 shm_resident=0 shm_list=""
  for f in $(comm -13 <(echo "$shm_before" | sort) <(ls /dev/shm | sort)); do
    a=$(stat -c %s "/dev/shm/$f") d=$(du -k "/dev/shm/$f" | cut -f1)
    shm_reserved=$((shm_reserved + a / 1024)) shm_resident=$((shm_resident + d))
    shm_list+="$f $(mib $((a / 1024))) / $(mib "$d"); "
  done
  echo
  echo "iceoryx shm (reserved / resident MiB): ${shm_list}total $(mib $shm_reserved) / $(mib $shm_resident)"
  echo
  echo "RouDi's pools after the requests (\`radixserve shm\`: chunks used now and at most):"
  "$bin" shm --timeout 5 2>&1 | sed 's/^/    /'
  roudi_pools="$(sed -n 's/.*RouDi pools \([0-9.]*\) MiB.*/\1/p' "$log" | head -1)"
  if [ "$show_maps" = 1 ]; then
    for f in "$out/$tag"-*.maps; do echo; echo "$(basename "$f"): RSS kB, PSS kB, size kB, mapping"; cat "$f"; done
  fi
  kill -INT "$launcher_pid"
  for _ in $(seq 90); do kill -0 "$launcher_pid" 2>/dev/null || break; sleep 1; done
  wait "$launcher_pid" 2>/dev/null
  launcher_pid=""
  for pid in "${pids[@]}"; do
    if kill -0 "$pid" 2>/dev/null; then echo "process $pid ($(label "$pid")) outlived the launcher: killing it"; kill -KILL "$pid"; fi
  done

  # --- llama-server
  lc_cmd=("$lserver" -m "$model" --host 127.0.0.1 --port "$lc_port" -t "$threads" -c "$tokens" -np "$seqs" "${lc_kv[@]}" -lv 4)
  llog="$out/$tag-llama-server.log"
  echo
  echo "\$ ${lc_cmd[*]}"
  "${lc_cmd[@]}" >"$llog" 2>&1 &
  lc_pid=$!
  for _ in $(seq 120); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$lc_port/health")" = 200 ] && break
    kill -0 "$lc_pid" 2>/dev/null || break
    sleep 1
  done
  grep -h "n_ctx_seq\|KV buffer size\|compute buffer size\|model buffer size\|n_slots =\|Flash Attention\|flash_attn" -a "$llog" | sed 's/^/    /'
  echo "    requests: $(request "$lc_port" "$seqs" | tr '\n' ' ')($(usage "$out/response-$lc_port-0.json"))"
  # (a random-weight model's text can fail llama-server's output parser: a 500 after the tokens were made)
  grep -a "stop processing" "$llog" | sed 's/^/    /'
  sleep 1
  read -r lr lp la lf ls <<<"$(rollup "$lc_pid")"
  maps "$lc_pid" 25 >"$out/$tag-llama-server.maps"
  [ "$show_maps" = 1 ] && { echo; echo "$tag-llama-server.maps: RSS kB, PSS kB, size kB, mapping"; cat "$out/$tag-llama-server.maps"; }
  kill "$lc_pid"
  wait "$lc_pid" 2>/dev/null
  lc_pid=""
  echo
  echo "| llama-server ($lc_desc) | RSS MiB | PSS MiB | PSS anon | PSS file | PSS shmem |"
  echo "|---|---|---|---|---|---|"
  echo "| llama-server | $(mib "$lr") | **$(mib "$lp")** | $(mib "$la") | $(mib "$lf") | $(mib "$ls") |"
  ratio="$(awk -v a="$tot_pss" -v b="$lp" 'BEGIN { printf "%.2f", a / b }')"
  echo
  echo "radixserve total PSS / llama-server PSS = $(mib $tot_pss) / $(mib "$lp") = **${ratio}x** (target <= 1.3x)"
  summary+=("| $kv | $seqs | $tokens | $shape | $mrr_text | $roudi_pools | $(mib $shm_reserved) / $(mib $shm_resident) | $(mib $roudi_pss) | $(mib $model_pss) | $(mib $((tot_pss - roudi_pss - model_pss))) | $(mib $tot_pss) | $(mib "$lp") | ${ratio}x |")
done

echo
echo "## Summary (MiB; context $ctx per sequence, $threads threads, $(basename "$model"), $(stat -c %s "$model") bytes)"
echo
echo "| KV type | sequences | KV tokens | launch | max_running_requests | RouDi pools | shm reserved / resident | RouDi PSS | worker (container) PSS | other processes PSS | radixserve total PSS | llama-server PSS | ratio |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${summary[@]}"
