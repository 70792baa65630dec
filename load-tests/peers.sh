#!/usr/bin/env bash
# Waterline beside the brokers a team would otherwise build chat delivery on (docs/BENCHMARKS.md,
# "Peers, side by side"): one generator, the same pairwise load, payload, window of unconfirmed
# messages and reconciliation for every system; Waterline (durable, and with synchronous_commit=off
# beside JetStream), a private RabbitMQ node (classic durable and quorum queues) and a private
# NATS JetStream server, each started on its own ports and folder and stopped by its own id (the
# machine's services are never used). Three rounds, run alternately, at 600 and 100 clients:
#   load-tests/peers.sh                       (the table: about an hour on 2 cores)
#   load-tests/peers.sh --rounds 1 --duration PT30S
#   load-tests/peers.sh --systems waterline,rabbitmq-classic --patterns 600 --kinds saturation
# Needs rabbitmq-server and nats-server (Debian packages) for the broker rows; a row whose broker
# cannot be started says why. SKIP_BUILD=1 uses the jars already built.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${SKIP_BUILD:-0}" != 1 ] || ! compgen -G "target/waterline-*.jar" >/dev/null; then
  ./mvnw -q -B -DskipTests package
fi
if [ "${SKIP_BUILD:-0}" != 1 ] || [ ! -f load-tests/target/waterline-load.jar ] || [ ! -f load-tests/target/java-home ]; then
  ./mvnw -q -B -f load-tests/pom.xml -DskipTests package
fi
java="$(cat load-tests/target/java-home)/bin/java"   # the JDK ≥ 21 that load-tests/pom.xml selected
exec "$java" -Xmx4g -jar load-tests/target/waterline-load.jar peers "$@"
