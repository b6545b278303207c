#!/usr/bin/env bash
# A real three-node OpenSearch cluster on 127.0.0.1, for the multi-node tests.
#
#   scripts/engines/cluster.sh start            start the three nodes (a fresh cluster)
#   scripts/engines/cluster.sh stop             stop them
#   scripts/engines/cluster.sh stop-node N      stop node N (1..3): an outage
#   scripts/engines/cluster.sh start-node N     restart node N with its data: it rejoins
#   scripts/engines/cluster.sh urls             the nodes' URLs, comma-separated
#
# Why: one node cannot show what replicas, shard copies on other machines and a node leaving
# do to esqlog's statistics and searches. Each node is a separate JVM started by engine.sh
# (the same distribution from Maven Central, the same cache), with its own data folder and
# PID file, discovering the others through their transport ports. `start` prints the URLs as
# its last line, as start-opensearch.sh does.
#
# Settings (environment):
#   ESQLOG_CLUSTER_PORTS   the three HTTP ports (default "19230 19231 19232"; transport ports
#                          are HTTP + 100). The defaults stay clear of scripts/test.sh's single
#                          nodes (19200-19203) and the matrix (19214-19218).
#   ESQLOG_CLUSTER_HEAP    heap of each node (default 512m)
#   ESQLOG_ENGINE_START_TIMEOUT  seconds each node may take (default 420: three JVMs starting
#                          at once on two busy cores take minutes)
#   ESQLOG_ENGINE_DIR      state root, as for the single nodes; the nodes live in cluster-N/
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
read -r -a PORTS <<< "${ESQLOG_CLUSTER_PORTS:-19230 19231 19232}"
[[ ${#PORTS[@]} -eq 3 ]] || { echo "[cluster] ESQLOG_CLUSTER_PORTS needs three ports" >&2; exit 2; }
STATE_ROOT=${ESQLOG_ENGINE_DIR:-${TMPDIR:-/tmp}/esqlog-engines}
NAMES=(esqlog-c1 esqlog-c2 esqlog-c3)

seeds() { local p out=""; for p in "${PORTS[@]}"; do out+="${out:+,}127.0.0.1:$((p + 100))"; done; echo "$out"; }
urls() { local p out=""; for p in "${PORTS[@]}"; do out+="${out:+,}http://127.0.0.1:$p"; done; echo "$out"; }

node() {  # N action [keep-data]: engine.sh for node N
  local i=$(($1 - 1)) action=$2 keep=${3:-0}
  [[ $i -ge 0 && $i -lt 3 ]] || { echo "[cluster] node must be 1, 2 or 3" >&2; exit 2; }
  ESQLOG_ENGINE_DIR="$STATE_ROOT/cluster-$1" ESQLOG_OPENSEARCH_PORT="${PORTS[$i]}" \
  ESQLOG_ENGINE_START_TIMEOUT="${ESQLOG_ENGINE_START_TIMEOUT:-420}" ESQLOG_ENGINE_HEAP="${ESQLOG_CLUSTER_HEAP:-512m}" ESQLOG_ENGINE_KEEP_DATA="$keep" \
  ESQLOG_ENGINE_NODE_NAME="${NAMES[$i]}" ESQLOG_ENGINE_CLUSTER_NAME=esqlog-cluster \
  ESQLOG_ENGINE_DISCOVERY="-Ediscovery.seed_hosts=$(seeds) -Ecluster.initial_cluster_manager_nodes=$(IFS=,; echo "${NAMES[*]}")" \
    "$HERE/engine.sh" "$action" opensearch
}

case "${1:-}" in
  start)
    # All three at once: none is healthy before a quorum of them has formed the cluster.
    pids=()
    for n in 1 2 3; do node "$n" start > /dev/null & pids+=($!); done
    for pid in "${pids[@]}"; do wait "$pid" || { echo "[cluster] a node did not start" >&2; "$0" stop >&2; exit 1; }; done
    curl -fsS -m 60 "http://127.0.0.1:${PORTS[0]}/_cluster/health?wait_for_nodes=3&timeout=60s" \
      | grep -q '"number_of_nodes":3' || { echo "[cluster] the nodes did not form one cluster" >&2; exit 1; }
    echo "[cluster] three nodes up" >&2
    urls ;;
  stop) for n in 1 2 3; do node "$n" stop; done ;;
  stop-node) node "${2:-}" stop ;;
  start-node) node "${2:-}" start 1 > /dev/null ;;
  urls) urls ;;
  *) echo "usage: $0 start|stop|stop-node N|start-node N|urls" >&2; exit 2 ;;
esac
