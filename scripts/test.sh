#!/usr/bin/env bash
# The test suite: sets up .venv, starts the real OpenSearch and Elasticsearch nodes if they
# are not running (both at once), then runs pytest. Extra arguments go to pytest; without
# any, the engine matrix (scripts/engines/matrix.sh) and the install check
# (scripts/check-install.sh) run before the suite. The three-node cluster of
# tests/engine/test_cluster_engine.py (scripts/engines/cluster.sh, ports ESQLOG_CLUSTER_PORTS) starts
# beside the single nodes for the full run, or when an argument names a cluster test.
# Arguments whose test paths all lie under tests/unit (the contributor's fast lane,
# `scripts/test.sh tests/unit`) start no engine: the unit tests need none.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
unit_only=0
for arg in "$@"; do
  case "${arg#./}" in
    tests/unit|tests/unit/*) unit_only=1 ;;
    tests|tests/*) unit_only=0; break ;;
  esac
done
if [[ $unit_only -eq 1 ]]; then exec .venv/bin/python -m pytest "$@"; fi
os_out=$(mktemp); es_out=$(mktemp)
scripts/start-opensearch.sh > "$os_out" & os_pid=$!
scripts/start-elasticsearch.sh > "$es_out" & es_pid=$!
cluster_pid=
if [[ $# -eq 0 || "$*" == *cluster* ]]; then
  cluster_out=$(mktemp)
  scripts/engines/cluster.sh start > "$cluster_out" & cluster_pid=$!
fi
wait $os_pid || { echo "OpenSearch did not start" >&2; exit 1; }
wait $es_pid || { echo "Elasticsearch did not start" >&2; exit 1; }
if [[ -n "$cluster_pid" ]]; then
  wait $cluster_pid || { echo "the three-node cluster did not start" >&2; exit 1; }
  export ESQLOG_CLUSTER_URLS=$(tail -n 1 "$cluster_out")
  rm -f "$cluster_out"
  echo "[test] three-node cluster at $ESQLOG_CLUSTER_URLS" >&2
fi
export ESQLOG_OPENSEARCH_URL=$(tail -n 1 "$os_out")
export ESQLOG_ELASTICSEARCH_URL=$(tail -n 1 "$es_out")
rm -f "$os_out" "$es_out"
echo "[test] OpenSearch at $ESQLOG_OPENSEARCH_URL, Elasticsearch at $ESQLOG_ELASTICSEARCH_URL" >&2
if [[ $# -gt 0 ]]; then exec .venv/bin/python -m pytest "$@"; fi
# The full run (CI's): the engine matrix's focused subset on the other OpenSearch releases
# (nodes started and stopped by matrix.sh), what a pip install gives, then the suite, last so
# that its pytest summary is the run's closing line.
status=0
bash scripts/engines/matrix.sh || status=1
bash scripts/check-install.sh || status=1
.venv/bin/python -m pytest || status=1
exit $status
