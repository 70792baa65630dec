#!/usr/bin/env bash
# Builds local stand-ins for the compose stack's images from Debian packages, for a machine that
# runs containers but cannot pull from any image registry; then prints the environment overrides
# that make docker-compose.yml (and the Dockerfile's build stages) use them:
#
#   eval "$(sudo deploy/local-images.sh)"        # then: deploy/compose-smoke.sh, or docker-compose up
#
# Each root filesystem is made by mmdebstrap (Debian's package) and turned into a base image by
# `docker import`; a small Dockerfile in deploy/local-images/ lays it out as the official image
# is laid out (user, entrypoint, data folder). Images already present are kept (REBUILD=1 to
# remake them). Needs root, a running Docker engine and Debian's package mirror; about 2 minutes
# and 1.5 GB the first time.
#
#   official image            stand-in                          from
#   eclipse-temurin:21-jdk    waterline-local/jdk:21            trixie, openjdk-21-jdk-headless
#   eclipse-temurin:21-jre    waterline-local/jre:21            trixie, openjdk-21-jre-headless
#   postgres:17               waterline-local/postgres:17       trixie, postgresql-17
#   redis:7                   waterline-local/redis:7           bookworm, redis-server 7.0
#   prom/prometheus           waterline-local/prometheus:2      bookworm, prometheus 2.42
#   haproxy:2.6               waterline-local/haproxy:2.6       bookworm, haproxy 2.6 (the cluster profile)
#   grafana/grafana           (none: Grafana is not in Debian; the smoke run leaves it out, and
#                             ObservabilityIntegrationTests checks the dashboard's series against a live server)
set -euo pipefail
cd "$(dirname "$0")"

MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for tool in mmdebstrap docker; do
    command -v "$tool" >/dev/null || { echo "local-images: $tool is not installed (apt-get install mmdebstrap docker.io)" >&2; exit 1; }
done
docker info >/dev/null 2>&1 || { echo "local-images: no Docker engine answers (start one: dockerd &)" >&2; exit 1; }

have() { [ -z "${REBUILD:-}" ] && docker image inspect "$1" >/dev/null 2>&1; }

# base <suite> <name> <packages>: a root filesystem of <suite> with <packages>, as
# waterline-local/base:<suite>-<name>.
base() {
    local suite=$1 name=$2 packages=$3 tag="waterline-local/base:$1-$2"
    if have "$tag"; then
        echo "local-images: $tag is there" >&2
        return
    fi
    echo "local-images: making $tag ($packages)" >&2
    mmdebstrap --quiet --variant=apt --include="$packages" \
        --customize-hook='chroot "$1" apt-get clean' \
        --customize-hook='rm -rf "$1"/var/lib/apt/lists/*' \
        "$suite" "$work/$suite-$name.tar" "$MIRROR" >&2
    docker import "$work/$suite-$name.tar" "$tag" >&2
    rm -f "$work/$suite-$name.tar"
}

# image <name> <tag>: the stand-in, from local-images/<name>.Dockerfile on its base. The build
# context also holds this machine's own CA certificates (extra-ca/, from
# /usr/local/share/ca-certificates, where Debian keeps locally added ones): behind a
# TLS-intercepting proxy the JDK image's Maven must trust what the machine trusts.
image() {
    local name=$1 tag=$2 context="$work/context-$1"
    if have "$tag"; then
        echo "local-images: $tag is there" >&2
        return
    fi
    mkdir -p "$context/extra-ca"
    cp local-images/* "$context/"
    if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
        cp /usr/local/share/ca-certificates/*.crt "$context/extra-ca/"
    fi
    docker build --quiet -f "$context/$name.Dockerfile" -t "$tag" "$context" >&2
    echo "local-images: built $tag" >&2
}

base trixie jdk openjdk-21-jdk-headless,ca-certificates,ca-certificates-java,curl,unzip
base trixie jre openjdk-21-jre-headless,ca-certificates,passwd
base trixie postgres postgresql-17
base bookworm redis redis-server
base bookworm prometheus prometheus,wget
base bookworm haproxy haproxy

image jdk waterline-local/jdk:21
image jre waterline-local/jre:21
image postgres waterline-local/postgres:17
image redis waterline-local/redis:7
image prometheus waterline-local/prometheus:2
image haproxy waterline-local/haproxy:2.6

cat <<'OUT'
export JDK_IMAGE=waterline-local/jdk:21
export JRE_IMAGE=waterline-local/jre:21
export POSTGRES_IMAGE=waterline-local/postgres:17
export REDIS_IMAGE=waterline-local/redis:7
export PROMETHEUS_IMAGE=waterline-local/prometheus:2
export HAPROXY_IMAGE=waterline-local/haproxy:2.6
OUT
