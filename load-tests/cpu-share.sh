#!/usr/bin/env bash
# CPU time taken by each part of a load run over a window, from /proc (no sysstat needed):
#   load-tests/cpu-share.sh 60        (start it once the run is warm; prints after 60 s)
# Groups: the server JVM (waterline-*.jar), the load generator JVM (waterline-load.jar),
# every postgres process, every redis-server process, and everything else.
set -euo pipefail
window=${1:-60}
hz=$(getconf CLK_TCK)
sample() {
  for p in /proc/[0-9]*; do
    [ -r "$p/stat" ] || continue
    cmd=$(tr '\0' ' ' < "$p/cmdline" 2>/dev/null || true)
    stat=$(cat "$p/stat" 2>/dev/null) || continue
    rest=${stat##*) }
    read -r -a f <<< "$rest"
    ticks=$(( f[11] + f[12] ))
    case "$cmd" in
      *waterline-load.jar*) g=generator ;;
      *waterline-*.jar*) g=server ;;
      *postgres*) g=postgres ;;
      *redis-server*) g=redis ;;
      *) g=other ;;
    esac
    echo "${p#/proc/} $g $ticks"
  done
}
a=$(sample); t0=$(date +%s.%N)
sleep "$window"
b=$(sample); t1=$(date +%s.%N)
awk -v hz="$hz" -v secs="$(echo "$t1 - $t0" | bc)" -v cores="$(nproc)" '
  NR==FNR { before[$1]=$3; next }
  { d = $3 - ($1 in before ? before[$1] : 0); if (d > 0) used[$2] += d }
  END {
    printf "%-10s %8s %8s\n", "part", "cpu-s", "% of box"
    for (g in used) { total += used[g]; printf "%-10s %8.1f %7.1f%%\n", g, used[g]/hz, 100*used[g]/hz/secs/cores }
    printf "%-10s %8.1f %7.1f%%\n", "total", total/hz, 100*total/hz/secs/cores
  }' <(echo "$a") <(echo "$b")
