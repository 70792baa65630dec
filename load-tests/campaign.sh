#!/usr/bin/env bash
# The paper's campaign: 600 clients messaging pairwise at 2000 msg/s for 3 minutes against a
# server this script starts (zero-configuration mode, fresh data), reconciled message by message.
# Exits non-zero if anything accepted was lost. Extra arguments go to the load generator, e.g.
#   load-tests/campaign.sh --url http://127.0.0.1:8080     (use a running server instead)
#   load-tests/campaign.sh --duration PT5M --never-ack 0.1
set -euo pipefail
cd "$(dirname "$0")/.."
./mvnw -q -B -DskipTests package
./mvnw -q -B -f load-tests/pom.xml -DskipTests package
java="$(cat load-tests/target/java-home)/bin/java"   # the JDK ≥ 21 that load-tests/pom.xml selected
start=(--start-server)
for a in "$@"; do
  case "$a" in --url|--url=*) start=() ;; esac
done
exec "$java" -jar load-tests/target/waterline-load.jar "${start[@]}" \
  --clients 600 --rate 2000 --duration PT3M --pattern pairwise --label paper-campaign "$@"
