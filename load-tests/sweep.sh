#!/usr/bin/env bash
# The source paper's sweep, on our server: reconnect grace, max-pending and lease moved one at a
# time, each run the paper's campaign (600 clients pairwise at 2000 msg/s) with 10 % of clients
# that never ack and 10 % that ack 3 s late, reconciled. One report per configuration under
# target/load-results/sweep-<time>/. Extra arguments go to every run (e.g. --duration PT3M).
set -euo pipefail
cd "$(dirname "$0")/.."
./mvnw -q -B -DskipTests package
./mvnw -q -B -f load-tests/pom.xml -DskipTests package
java="$(cat load-tests/target/java-home)/bin/java"   # the JDK ≥ 21 that load-tests/pom.xml selected
extra=("$@")
out="target/load-results/sweep-$(date +%Y%m%d-%H%M%S)"
status=0
for cfg in "0s 20 10s" "0s 20 20s" "1s 20 10s" "3s 9 20s" "10s 20 10s"; do
  set -- $cfg
  grace=$1 pending=$2 lease=$3
  "$java" -jar load-tests/target/waterline-load.jar --start-server --quiet \
    --clients 600 --rate 2000 --duration PT90S --pattern pairwise \
    --never-ack 0.1 --slow-ack 0.1 --slow-ack-delay PT3S \
    --server-arg=--waterline.reapers.reconnect-grace="$grace" \
    --server-arg=--waterline.reapers.max-pending="$pending" \
    --server-arg=--waterline.delivery.lease="$lease" \
    --label "grace $grace, max-pending $pending, lease $lease" \
    --out "$out/grace-$grace-pending-$pending-lease-$lease" "${extra[@]}" > /dev/null || status=$?
done
echo "reports in $out"
exit $status
