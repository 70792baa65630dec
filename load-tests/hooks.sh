#!/usr/bin/env bash
# The hooks measurements of docs/BENCHMARKS.md ("Hooks"): the paper's chat load (600 clients
# pairwise, 2000 msg/s) with one hook per chat, against a server this script starts for each run
# (zero-configuration mode, fresh data), and the brokers it starts privately (their own ports and
# folders under the run's folder, stopped by their own ids after; the machine's own services are
# never loaded). Every run reconciles every accepted message: in history, at its recipient, and
# at its hook. Reports land in target/load-results/hooks-campaign-<time>/<measurement>-<run>/.
#   load-tests/hooks.sh                        (side by side: none http, then each broker, then the outage)
#   load-tests/hooks.sh none http redis        (some of: none http redis amqp mqtt nats outage)
#   RUNS=3 RATE=2000 DURATION=PT60S load-tests/hooks.sh none http
# Exits non-zero if any run lost a message.
set -euo pipefail
cd "$(dirname "$0")/.."
./mvnw -q -B -DskipTests package
./mvnw -q -B -f load-tests/pom.xml -DskipTests package
java="$(cat load-tests/target/java-home)/bin/java"   # the JDK ≥ 21 that load-tests/pom.xml selected
out=target/load-results/hooks-campaign-$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
what=("$@")
[ ${#what[@]} -gt 0 ] || what=(none http none http none http redis amqp mqtt nats outage)
runs=${RUNS:-1}
rate=${RATE:-2000}
duration=${DURATION:-PT60S}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
brokers="$out/brokers"
mkdir -p "$brokers"
pids=()
rabbit_node=""
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  if [ -n "$rabbit_node" ]; then
    HOME=/root RABBITMQ_CONF_ENV_FILE="$brokers/rabbit/env.conf" /usr/lib/rabbitmq/bin/rabbitmqctl -n "$rabbit_node" stop >/dev/null 2>&1 || true
  fi
}
trap cleanup EXIT
start_mqtt() {
  local port; port=$(free_port)
  mkdir -p "$brokers/mosquitto"
  printf 'listener %s 127.0.0.1\nallow_anonymous true\npersistence false\n' "$port" > "$brokers/mosquitto/mosquitto.conf"
  mosquitto -c "$brokers/mosquitto/mosquitto.conf" > "$brokers/mosquitto/log" 2>&1 &
  pids+=($!)
  sleep 1
  echo "mqtt://localhost:$port"
}
start_nats() {
  local port; port=$(free_port)
  mkdir -p "$brokers/nats"
  nats-server -a 127.0.0.1 -p "$port" -sd "$brokers/nats" > "$brokers/nats/log" 2>&1 &
  pids+=($!)
  sleep 1
  echo "nats://localhost:$port"
}
start_amqp() {
  local port dist; port=$(free_port); dist=$(free_port)
  local d="$brokers/rabbit"; mkdir -p "$d/mnesia" "$d/log"
  printf 'listeners.tcp.local = 127.0.0.1:%s\nloopback_users = none\n' "$port" > "$d/rabbitmq.conf"
  printf 'ERL_EPMD_ADDRESS=127.0.0.1\n' > "$d/env.conf"
  : > "$d/enabled_plugins"
  rabbit_node="wlhooks$$@localhost"
  HOME=/root RABBITMQ_NODENAME="$rabbit_node" RABBITMQ_CONFIG_FILE="$d/rabbitmq.conf" RABBITMQ_CONF_ENV_FILE="$d/env.conf" \
    RABBITMQ_DIST_PORT="$dist" RABBITMQ_MNESIA_BASE="$d/mnesia" RABBITMQ_LOG_BASE="$d/log" RABBITMQ_PID_FILE="$d/pid" \
    RABBITMQ_ENABLED_PLUGINS_FILE="$d/enabled_plugins" /usr/lib/rabbitmq/bin/rabbitmq-server -detached >/dev/null 2>&1
  HOME=/root RABBITMQ_CONF_ENV_FILE="$d/env.conf" /usr/lib/rabbitmq/bin/rabbitmqctl -n "$rabbit_node" await_startup >/dev/null 2>&1
  echo "amqp://guest:guest@localhost:$port/%2F"
}
load() { "$java" -jar load-tests/target/waterline-load.jar --start-server --clients 600 --rate "$rate" --duration "$duration" --quiet "$@"; }
status=0
mqtt=""; nats=""; amqp=""
for m in "${what[@]}"; do
  for r in $(seq 1 "$runs"); do
    n=$(find "$out" -maxdepth 1 -name "$m-*.log" | wc -l); dir="$out/$m-$((n + 1))"
    case "$m" in
      none)   load --out "$dir" ;;
      http)   load --hook-kind http --out "$dir" ;;
      redis)  load --hook-kind redis --out "$dir" ;;
      mqtt)   [ -n "$mqtt" ] || mqtt=$(start_mqtt); load --hook-kind mqtt --hook-broker "$mqtt" --out "$dir" ;;
      nats)   [ -n "$nats" ] || nats=$(start_nats); load --hook-kind nats --hook-broker "$nats" --out "$dir" ;;
      amqp)   [ -n "$amqp" ] || amqp=$(start_amqp); load --hook-kind amqp --hook-broker "$amqp" --out "$dir" ;;
      outage) load --hook-kind http --duration PT90S --hook-outage-at PT30S --hook-outage-for PT30S --out "$dir" ;;
      *) echo "unknown measurement $m" >&2; exit 1 ;;
    esac > "$dir.log" 2>&1 || status=$?
    echo "$m: exit ${status} -> $dir/report.md"
  done
done
echo "Reports in $out"
exit $status
