#!/usr/bin/env bash
# The durable-streams measurements of docs/BENCHMARKS.md, each run three times against a server
# this script starts for it (zero-configuration mode, fresh data), every run reconciled chunk by
# chunk; the reports land in target/load-results/streams-campaign-<time>/<measurement>-<run>/.
#   load-tests/streams.sh                 (everything, about 45 minutes on 2 cores)
#   load-tests/streams.sh single replay   (some of: single many many-total knee replay fanout fanout-cross)
# Exits non-zero if any run failed its reconciliation.
set -euo pipefail
cd "$(dirname "$0")/.."
./mvnw -q -B -DskipTests package
./mvnw -q -B -f load-tests/pom.xml -DskipTests package
java="$(cat load-tests/target/java-home)/bin/java"   # the JDK ≥ 21 that load-tests/pom.xml selected
out=target/load-results/streams-campaign-$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
what=("$@")
[ ${#what[@]} -gt 0 ] || what=(single many many-total knee replay fanout fanout-cross)
load() { "$java" -jar load-tests/target/waterline-load.jar streams --start-server "$@"; }
status=0
for m in "${what[@]}"; do
  runs=3; [ "$m" = knee ] && runs=1
  for r in $(seq 1 "$runs"); do
    dir="$out/$m-$r"
    case "$m" in
      single)       load --mode single --duration PT30S --cpu-share --out "$dir" ;;
      many)         load --mode many --streams 2000,5000 --rate 5 --duration PT40S --cpu-share --out "$dir" ;;
      many-total)   load --mode many --streams 2000,5000 --total-rate 4000 --duration PT40S --cpu-share --out "$dir" ;;
      knee)         load --mode many --streams 250,500,1000,1500 --rate 5 --duration PT40S --cpu-share --out "$dir" ;;
      replay)       load --mode replay --chunks 100000 --readers 3 --out "$dir" ;;
      fanout)       load --mode fanout --subscribers 10,1000 --chunks 600 --rate 20 --out "$dir" ;;
      fanout-cross) load --mode fanout --nodes 2 --subscribers 10,1000 --chunks 600 --rate 20 --out "$dir" ;;
      single-linger0) load --mode single --duration PT30S --server-arg=--waterline.streams.linger=0ms --out "$dir" ;;
      *) echo "unknown measurement $m" >&2; exit 1 ;;
    esac > "$dir.log" 2>&1 || status=$?
    echo "$m run $r: exit ${status} ($(grep -c '' "$dir.log") lines) -> $dir/report.md"
  done
done
echo "Reports in $out"
exit $status
