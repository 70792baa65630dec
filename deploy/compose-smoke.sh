#!/usr/bin/env bash
# Runs the compose stack for real and uses it as a client would, then crashes the app under load:
#
#   1. builds the app image (Dockerfile) and brings up app, PostgreSQL, Redis, Prometheus (and
#      Grafana where its image can be had), waiting for every healthcheck;
#   2. the walkthrough (waterline-load walkthrough): dev tokens, a chat, a WebSocket send
#      answered `accepted`, the `message` at the other member and its `ack`, a history page, the
#      §5 series on /actuator/prometheus, and Prometheus scraping the app as an `up` target with
#      every §5 series; Grafana's provisioned dashboard, when Grafana runs;
#   3. the load generator against the stack (20 clients, 100 msg/s); once it has messages
#      accepted, `docker kill` of the app container; the app is started again, clients reconnect
#      and resync, and every accepted message is reconciled (exit code 2 if any was lost);
#   4. `docker stop` of the app: a real SIGTERM to java, which must exit 143 after Spring's
#      graceful shutdown, within the grace period;
#   5. the cluster profile: a second app node and HAProxy; the walkthrough across the two nodes
#      (the message sent on one, received and acked on the other) and through HAProxy; then the
#      load generator over both nodes, `docker kill` of the second under load, its clients failing
#      over to the first, every accepted message reconciled;
#   6. `./mvnw spring-boot:test-run` (TestWaterlineApplication: PostgreSQL and Redis through
#      Testcontainers, on the same images) and the walkthrough against it (--skip-test-run to omit);
#   7. `down -v`, whatever happened (the logs are printed first when something failed).
#
# Where no registry can be reached, build the images from Debian packages first:
#   eval "$(deploy/local-images.sh)" && deploy/compose-smoke.sh
# Needs a Docker engine (run as root, or a member of the docker group), Docker Compose (v2's
# `docker compose`, or 1.29's `docker-compose`) and a JDK >= 21 for the clients. Takes a few
# minutes (the first image build downloads Maven's dependencies). Not part of ./mvnw verify.
# Ports (loopback only): WATERLINE_PORT 18080, PROMETHEUS_PORT 19090, GRAFANA_PORT 13000, and
# 18081 for the test-run; the compose project is waterline-smoke, apart from a `docker compose up`
# of your own.
set -euo pipefail
cd "$(dirname "$0")/.."

test_run=1
for arg in "$@"; do
    case "$arg" in
        --skip-test-run) test_run=0 ;;
        *) echo "usage: $0 [--skip-test-run]" >&2; exit 64 ;;
    esac
done

if docker compose version >/dev/null 2>&1; then
    compose=(docker compose)
elif command -v docker-compose >/dev/null; then
    compose=(docker-compose)
else
    echo "compose-smoke: neither 'docker compose' nor 'docker-compose' is installed" >&2
    exit 1
fi
docker info >/dev/null 2>&1 || { echo "compose-smoke: no Docker engine answers (start one: dockerd &)" >&2; exit 1; }

export COMPOSE_PROJECT_NAME=waterline-smoke
export WATERLINE_IMAGE=${WATERLINE_IMAGE:-waterline:smoke}
export WATERLINE_PORT=${WATERLINE_PORT:-18080} PROMETHEUS_PORT=${PROMETHEUS_PORT:-19090} GRAFANA_PORT=${GRAFANA_PORT:-13000}
export WATERLINE_PORT_2=${WATERLINE_PORT_2:-18082} HAPROXY_PORT=${HAPROXY_PORT:-18083}
export HAPROXY_IMAGE=${HAPROXY_IMAGE:-haproxy:2.6}
export GRAFANA_IMAGE=${GRAFANA_IMAGE:-grafana/grafana:12.1.0}
app_url=http://127.0.0.1:$WATERLINE_PORT
out=target/compose-smoke
rm -rf "$out"
mkdir -p "$out"

say() { echo "compose-smoke: $*"; }
failed=1
test_run_pid=
finish() {
    local rc=$?
    if [ -n "$test_run_pid" ]; then
        kill -TERM -- "-$test_run_pid" 2>/dev/null || true
        wait "$test_run_pid" 2>/dev/null || true
        remove_new_testcontainers
    fi
    if [ "$failed" = 1 ]; then
        say "FAILED (exit $rc); the stack's logs are in $out/stack.log"
        "${compose[@]}" --profile cluster logs --no-color > "$out/stack.log" 2>&1 || true
        tail -n 60 "$out/stack.log" || true
    fi
    say "down -v"
    "${compose[@]}" --profile cluster down -v --remove-orphans >/dev/null 2>&1 || say "down -v failed: remove the project waterline-smoke by hand"
    exit "$rc"
}
trap finish EXIT

# Testcontainers' containers that were there before the test-run are someone else's: only those
# it started are removed.
testcontainers_before=$(docker ps -aq --filter label=org.testcontainers=true | sort)
remove_new_testcontainers() {
    local now new
    now=$(docker ps -aq --filter label=org.testcontainers=true | sort)
    new=$(comm -13 <(echo "$testcontainers_before") <(echo "$now") | grep . || true)
    if [ -n "$new" ]; then
        say "removing $(echo "$new" | wc -l) container(s) the test-run left"
        docker rm -f $new >/dev/null
    fi
}

# health <service> <seconds>: waits until the service's container reports healthy.
health() {
    local service=$1 deadline=$((SECONDS + $2)) id status
    while :; do
        id=$("${compose[@]}" ps -q "$service")
        status=$( [ -n "$id" ] && docker inspect -f '{{.State.Health.Status}}' "$id" 2>/dev/null || echo missing)
        [ "$status" = healthy ] && { say "$service is healthy"; return 0; }
        if [ "$SECONDS" -ge "$deadline" ]; then
            say "$service is not healthy after $2 s (status: $status)"
            return 1
        fi
        sleep 2
    done
}

# metric <name>: the app's current value of an unlabelled counter, 0 when absent.
metric() {
    curl -fsS "$app_url/actuator/prometheus" 2>/dev/null | awk -v n="$1" '$1 == n {v = $2} END {print (v == "" ? 0 : int(v))}'
}

say "building the load generator (the clients)"
./mvnw -q -B -f load-tests/pom.xml -DskipTests package
load=("$(cat load-tests/target/java-home)/bin/java" -jar load-tests/target/waterline-load.jar)

say "building the app image $WATERLINE_IMAGE (JDK_IMAGE=${JDK_IMAGE:-default}, JRE_IMAGE=${JRE_IMAGE:-default})"
"${compose[@]}" build app

services=(app postgres redis prometheus)
grafana=0
if docker image inspect "$GRAFANA_IMAGE" >/dev/null 2>&1 || docker pull -q "$GRAFANA_IMAGE" >/dev/null 2>&1; then
    services+=(grafana)
    grafana=1
else
    say "SKIPPED Grafana: its image $GRAFANA_IMAGE is not here and cannot be pulled (Grafana is not in Debian);"
    say "         ObservabilityIntegrationTests checks every series the dashboard names against a live server instead"
fi

say "up: ${services[*]}"
"${compose[@]}" up -d "${services[@]}"
health postgres 120
health redis 60
health app 180
health prometheus 60

say "1/5 the walkthrough against the stack"
"${load[@]}" walkthrough --url "$app_url" --prometheus "http://127.0.0.1:$PROMETHEUS_PORT" --timeout PT90S

if [ "$grafana" = 1 ]; then
    health grafana 120
    curl -fsS -u admin:admin "http://127.0.0.1:$GRAFANA_PORT/api/search?query=Waterline" | grep -q '"uid"' \
        || { say "Grafana has no provisioned Waterline dashboard"; exit 1; }
    curl -fsS -u admin:admin "http://127.0.0.1:$GRAFANA_PORT/api/datasources/uid/prometheus" | grep -q '"type":"prometheus"' \
        || { say "Grafana has no provisioned Prometheus datasource"; exit 1; }
    say "Grafana serves the provisioned dashboard and datasource"
fi

say "2/5 docker kill of the app under load, restart, reconcile"
"${load[@]}" --url "$app_url" --clients 20 --rate 100 --duration PT60S --ramp-up PT2S --pattern mixed --group-size 4 \
    --drain PT90S --outbox-drain PT30S --out "$out/load" --label compose-kill --quiet > "$out/load.txt" 2>&1 &
load_pid=$!
base=$(metric waterline_messages_accepted_total)
deadline=$((SECONDS + 60))
while [ "$(metric waterline_messages_accepted_total)" -lt $((base + 300)) ]; do
    [ "$SECONDS" -lt "$deadline" ] || { say "the load was not accepted (see $out/load.txt)"; kill "$load_pid"; exit 1; }
    sleep 1
done
accepted_before=$(metric waterline_messages_accepted_total)
app_id=$("${compose[@]}" ps -q app)
docker kill "$app_id" >/dev/null
say "killed the app after $((accepted_before - base)) accepted sends of this run"
"${compose[@]}" start app >/dev/null
health app 180
set +e
wait "$load_pid"
load_rc=$?
set -e
sed -n '1,40p' "$out/load.txt"
[ "$load_rc" = 0 ] || { say "the load run after the kill did not reconcile (exit $load_rc; 2 = something accepted was lost)"; exit 1; }
grep -q '"lost" : 0' "$out/load/report.json" || { say "report.json does not say 0 lost"; exit 1; }
reconnects=$(grep -o '"reconnects" : [0-9]*' "$out/load/report.json" | grep -o '[0-9]*$' || echo 0)
[ "${reconnects:-0}" -gt 0 ] || { say "no client reconnected: the kill did not happen under load"; exit 1; }
say "the kill cost nothing: 0 lost, $reconnects reconnects"

say "3/5 docker stop of the app: SIGTERM to java (PID 1), graceful shutdown within the grace period"
app_id=$("${compose[@]}" ps -q app)
stop_started=$SECONDS
"${compose[@]}" stop app >/dev/null
stop_took=$((SECONDS - stop_started))
exit_code=$(docker inspect -f '{{.State.ExitCode}}' "$app_id")
docker logs "$app_id" > "$out/app-stop.log" 2>&1
# 143 = 128 + SIGTERM: the JVM ran its shutdown hooks (Spring's graceful close) and exited; a
# SIGKILL after the grace period would be 137
[ "$exit_code" = 143 ] || { say "the app exited with $exit_code after docker stop, not 143 (SIGTERM)"; exit 1; }
grep -q "Commencing graceful shutdown" "$out/app-stop.log" && grep -q "Graceful shutdown complete" "$out/app-stop.log" \
    || { say "the app's log does not show Spring's graceful shutdown (see $out/app-stop.log)"; exit 1; }
say "the app stopped gracefully in ${stop_took} s (exit 143)"

say "4/5 the cluster profile: a second node and HAProxy in front of both"
"${compose[@]}" --profile cluster up -d app app2 haproxy
health app 180
health app2 180
health haproxy 60
"${load[@]}" walkthrough --url "$app_url" --peer-url "http://127.0.0.1:$WATERLINE_PORT_2" --timeout PT60S
"${load[@]}" walkthrough --url "http://127.0.0.1:$HAPROXY_PORT" --timeout PT60S
"${load[@]}" --urls "$app_url,http://127.0.0.1:$WATERLINE_PORT_2" --clients 20 --rate 100 --duration PT60S --ramp-up PT2S \
    --pattern mixed --group-size 4 --drain PT90S --outbox-drain PT60S --out "$out/cluster-load" --label compose-cluster-kill \
    --quiet > "$out/cluster-load.txt" 2>&1 &
load_pid=$!
base=$(metric waterline_messages_accepted_total)
deadline=$((SECONDS + 60))
while [ "$(metric waterline_messages_accepted_total)" -lt $((base + 150)) ]; do
    [ "$SECONDS" -lt "$deadline" ] || { say "the cluster load was not accepted (see $out/cluster-load.txt)"; kill "$load_pid"; exit 1; }
    sleep 1
done
docker kill "$("${compose[@]}" --profile cluster ps -q app2)" >/dev/null
say "killed app2 under load; its clients fail over to app"
set +e
wait "$load_pid"
load_rc=$?
set -e
sed -n '1,45p' "$out/cluster-load.txt"
[ "$load_rc" = 0 ] || { say "the cluster load after the kill did not reconcile (exit $load_rc)"; exit 1; }
grep -q '"lost" : 0' "$out/cluster-load/report.json" || { say "cluster report.json does not say 0 lost"; exit 1; }
failovers=$(grep -o '"failovers" : [0-9]*' "$out/cluster-load/report.json" | grep -o '[0-9]*$' || echo 0)
[ "${failovers:-0}" -gt 0 ] || { say "no client failed over: the kill did not happen under load"; exit 1; }
say "a node's death cost nothing: 0 lost, $failovers failovers"
"${compose[@]}" --profile cluster stop haproxy app >/dev/null

if [ "$test_run" = 1 ]; then
    say "5/5 ./mvnw spring-boot:test-run (Testcontainers: ${POSTGRES_IMAGE:-postgres:17}, ${REDIS_IMAGE:-redis:7})"
    # No Ryuk (its image may not be pullable): the containers are stopped when the app's context
    # closes (SIGTERM below), and anything left is removed by label afterwards. The engine is
    # local, so its published ports are on localhost: say so, or Testcontainers running inside a
    # container itself would look for the engine's gateway with a container of its own (alpine).
    TESTCONTAINERS_RYUK_DISABLED=${TESTCONTAINERS_RYUK_DISABLED:-true} \
    TESTCONTAINERS_HOST_OVERRIDE=${TESTCONTAINERS_HOST_OVERRIDE:-localhost} SERVER_PORT=18081 \
        setsid ./mvnw -q -B spring-boot:test-run > "$out/test-run.log" 2>&1 &
    test_run_pid=$!
    deadline=$((SECONDS + 300))
    until curl -fsS http://127.0.0.1:18081/actuator/health/readiness 2>/dev/null | grep -q UP; do
        if ! kill -0 "$test_run_pid" 2>/dev/null || [ "$SECONDS" -ge "$deadline" ]; then
            tail -n 40 "$out/test-run.log"
            say "spring-boot:test-run did not become ready"
            exit 1
        fi
        sleep 2
    done
    containers=$(comm -13 <(echo "$testcontainers_before") <(docker ps -aq --filter label=org.testcontainers=true | sort) | grep -c . || true)
    [ "$containers" -ge 2 ] || { say "spring-boot:test-run is up but not on Testcontainers ($containers containers)"; exit 1; }
    "${load[@]}" walkthrough --url http://127.0.0.1:18081 --timeout PT60S
    # the whole process group setsid made: Maven and the application it forked
    kill -TERM -- "-$test_run_pid" 2>/dev/null || kill -TERM "$test_run_pid"
    wait "$test_run_pid" || true
    test_run_pid=
    remove_new_testcontainers
    say "spring-boot:test-run served the walkthrough on PostgreSQL and Redis containers"
fi

failed=0
say "PASSED"
