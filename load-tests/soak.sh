#!/usr/bin/env bash
# The soak (docs/RELIABILITY.md, "Soak"): hours of the chat load on a private deployment this
# script's run starts and owns (embedded PostgreSQL and Redis on their own ports and folders, one
# node), with reconnecting clients, clients that never ack or stop reading (reapers, reclaim), an
# HTTP hook on a tenth of the chats and the retention loops running; heap, outbox depth, descriptors and
# threads sampled every 10 s into soak.csv, plotted into soak.png, judged flat or not in soak.md;
# every message and hook delivery reconciled at the end.
#   load-tests/soak.sh                                   (2 h at 1,500 msg/s, 600 clients)
#   load-tests/soak.sh --duration PT10M                  (a short one)
#   load-tests/soak.sh --plot target/load-results/soak-…/soak.csv   (plot and judge again)
# SKIP_BUILD=1 uses the jars already built. Exits non-zero if anything was lost or a series grew.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${SKIP_BUILD:-0}" != 1 ] || ! compgen -G "target/waterline-*.jar" >/dev/null; then
  ./mvnw -q -B -DskipTests package
fi
if [ "${SKIP_BUILD:-0}" != 1 ] || [ ! -f load-tests/target/waterline-load.jar ] || [ ! -f load-tests/target/java-home ]; then
  ./mvnw -q -B -f load-tests/pom.xml -DskipTests package
fi
java="$(cat load-tests/target/java-home)/bin/java"   # the JDK ≥ 21 that load-tests/pom.xml selected
# the generator keeps every accepted message and delivery of the run for the reconciliation
exec "$java" -Xmx12g -jar load-tests/target/waterline-load.jar soak "$@"
