#!/usr/bin/env bash
# The chaos suite (docs/RELIABILITY.md): each scenario's fault injected into a deployment this
# script's run starts and owns (a private PostgreSQL and Redis from the embedded binaries on their
# own ports and folders, one or three server nodes, fault proxies where the scenario needs them;
# the machine's own services are never touched) under the chat load with streams beside it; every
# accepted message, stream chunk and hook delivery reconciled; the chat load's sends are a tenth edits
# and reactions and a fiftieth deletes (--entry-mix, --delete-mix), each reconciled as a message and
# its effect checked (a delete's text gone everywhere); one row per run, then the medians.
#   load-tests/chaos.sh                                  (every scenario once, paper scale: ~30 min on 2 cores)
#   load-tests/chaos.sh --runs 3                         (the tables of docs/RELIABILITY.md)
#   load-tests/chaos.sh --scale short --scenarios short  (what .ci/run runs: 3 scenarios, ~5 min)
#   load-tests/chaos.sh --scenarios pg-stop,redis-flush  (some of them; --help lists the options)
# SKIP_BUILD=1 uses the jars already built. Exits non-zero if any run lost anything or failed a check.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${SKIP_BUILD:-0}" != 1 ] || ! compgen -G "target/waterline-*.jar" >/dev/null; then
  ./mvnw -q -B -DskipTests package
fi
./mvnw -q -B -f load-tests/pom.xml -DskipTests package
java="$(cat load-tests/target/java-home)/bin/java"   # the JDK ≥ 21 that load-tests/pom.xml selected
exec "$java" -jar load-tests/target/waterline-load.jar chaos "$@"
