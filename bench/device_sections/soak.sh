# shellcheck shell=bash
# shellcheck disable=SC2154  # out, bundle: set by bench/device_run.sh, which sources this file
# The chaos soak on real GPUs, a section of bench/device_run.sh (run it through that script):
#   soak         bench/chaos_soak.py --mode=gpu for SOAK_DURATION (default 9m), in this call
#                                                                          [--python, sortd]
#   soak-start   the same soak (SOAK_DURATION, default 10m) started to outlive this call, as
#                longer than one call allows: the bundle, the soak and its client tests are
#                copied to SOAK_DIR (default /tmp/sortd-soak) and the soak runs in a session of
#                its own; the call then follows it for SOAK_WAIT seconds (default 0)
#   soak-finish  in the next call on the same (still warm) machine: waits for that soak to end
#                (at most SOAK_FINISH_WAIT seconds, default 540), prints its report and copies it
#                to $OUT/soak; fails where no soak was started here, or it did not pass in time

soak_flags() {  # soak_flags SORTD PYTHON PYTHONPATH DURATION OUT: the soak's arguments
  echo --mode=gpu --sortd="$1" --python="$2" --pythonpath="$3" --duration="$4" --workers=8 \
    --max_log2=24 --out="$5" --progress=60
}

section_soak() {
  has_python "chaos soak (gpu)" && needs "chaos soak (gpu)" sortd || return 0
  # shellcheck disable=SC2046  # soak_flags: words
  "$SORTD_PYTHON" bench/chaos_soak.py $(soak_flags "$(command -v sortd)" "$SORTD_PYTHON" \
    "$SORTD_PYTHONPATH" "${SOAK_DURATION:-9m}" "$out/soak") 2>&1 | tail -60
  ran "chaos soak (gpu)" "${PIPESTATUS[0]}"
}

section_soak_start() {
  has_python "chaos soak (gpu, across calls)" && needs "chaos soak (gpu, across calls)" sortd ||
    return 0
  local dir=${SOAK_DIR:-/tmp/sortd-soak}
  if [[ -f $dir/pid ]] && kill -0 "$(cat "$dir/pid")" 2>/dev/null; then
    echo "=== soak-start: a soak started here earlier is still running (pid $(cat "$dir/pid"))"
    ran "chaos soak start" 1
    return
  fi
  rm -rf "$dir"
  if ! { mkdir -p "$dir/repo/bench" "$dir/repo/client/python" && cp -a "$bundle" "$dir/bundle" &&
    cp bench/chaos_soak.py "$dir/repo/bench/" &&
    cp -r client/python/tests "$dir/repo/client/python/"; }; then
    ran "soak copy to $dir" 1
    return
  fi
  (
    # shellcheck source=/dev/null  # made by scripts/device-bundle.sh
    . "$dir/bundle/env.sh"
    # shellcheck disable=SC2046  # soak_flags: words
    # Without job control setsid execs rather than forks, so $! is the soak's own pid.
    setsid nohup "$SORTD_PYTHON" "$dir/repo/bench/chaos_soak.py" $(soak_flags \
      "$dir/bundle/bin/sortd" "$SORTD_PYTHON" "$SORTD_PYTHONPATH" "${SOAK_DURATION:-10m}" \
      "$dir/out") >"$dir/log" 2>&1 </dev/null &
    echo $! >"$dir/pid"
  )
  echo "soak started: pid $(cat "$dir/pid"), $(date -u +%FT%TZ), log $dir/log"
  local until=$((SECONDS + ${SOAK_WAIT:-0}))
  sleep 2
  while ((SECONDS < until)) && kill -0 "$(cat "$dir/pid")" 2>/dev/null; do sleep 5; done
  tail -n 20 "$dir/log"
  kill -0 "$(cat "$dir/pid")" 2>/dev/null || [[ -f $dir/out/summary.json ]]
  ran "chaos soak start (still running, or ended with a report)" $?
}

section_soak_finish() {
  local dir=${SOAK_DIR:-/tmp/sortd-soak} pid
  if [[ ! -f $dir/pid ]]; then
    echo "=== soak-finish: no soak was started on this machine (a fresh one?)"
    ran "chaos soak (gpu, across calls)" 1
    return
  fi
  pid=$(cat "$dir/pid")
  echo "soak pid $pid: $(kill -0 "$pid" 2>/dev/null && echo running || echo gone), $(date -u +%FT%TZ)"
  local until=$((SECONDS + ${SOAK_FINISH_WAIT:-540}))  # within one call, with the report's copy
  while ((SECONDS < until)) && kill -0 "$pid" 2>/dev/null; do sleep 2; done
  tail -n 80 "$dir/log"
  mkdir -p "$out/soak"
  cp "$dir"/out/{report.md,summary.json,rss.csv} "$out/soak/" 2>/dev/null
  grep -q '"passed": true' "$dir/out/summary.json" 2>/dev/null
  ran "chaos soak (gpu, across calls)" $?
}
