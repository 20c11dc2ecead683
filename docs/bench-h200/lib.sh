# Helpers for the GPU command scripts (docs/bench-h200/<run>/commands.sh), sourced after
# `set -u` and `LIMIT=…`:
#   source docs/bench-h200/lib.sh
# The scripts of runs before s19 carry their own copies of these lines (they are the records
# of what ran); new runs source this file.
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
LIMIT=${LIMIT:-540}
start=$(date +%s)
# Seconds left of LIMIT.
left() { echo $(( LIMIT - ($(date +%s) - start) )); }
# The time and the GPU's clocks, for the log.
stamp() { date -u +%FT%TZ; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader; }
# Kills what still runs at LIMIT. Its PID is $dog: `kill $dog` at the end. Never wait for it:
# wait on the PIDs you started (`wait $pids`), not a bare `wait`, which waits for the watchdog
# too and spends the whole LIMIT (s18-a lost about seven minutes of device time so).
( sleep "$LIMIT"; pkill -f '.gpu/bin/'; pkill -f compute-sanitizer ) > /dev/null 2>&1 & dog=$!
# The lines of a criterion run worth keeping.
pick() { grep -E '^(norm|copy|matmul|softmax|reduce|attention|gemv|histogram|transpose)/|time:|SKIP|panick|error|wrong|unavailable|Unsupported|not timed' | grep -v '%'; }
# `run SECONDS CMD…`: CMD under a timeout no longer than what is left, filtered by pick.
run() { local t=$1; shift; local l; l=$(left); [ "$l" -gt 15 ] || { echo "(skipped: $l s left)"; return; }; [ "$t" -lt "$l" ] || t=$l; timeout "$t" "$@" 2>&1 | pick; }
