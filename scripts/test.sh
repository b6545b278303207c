#!/usr/bin/env bash
# The test suite: sets up .venv, starts the real OpenSearch and Elasticsearch nodes if they
# are not running (both at once), then runs pytest. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
os_out=$(mktemp); es_out=$(mktemp)
scripts/start-opensearch.sh > "$os_out" & os_pid=$!
scripts/start-elasticsearch.sh > "$es_out" & es_pid=$!
wait $os_pid || { echo "OpenSearch did not start" >&2; exit 1; }
wait $es_pid || { echo "Elasticsearch did not start" >&2; exit 1; }
export ESQLOG_OPENSEARCH_URL=$(tail -n 1 "$os_out")
export ESQLOG_ELASTICSEARCH_URL=$(tail -n 1 "$es_out")
rm -f "$os_out" "$es_out"
echo "[test] OpenSearch at $ESQLOG_OPENSEARCH_URL, Elasticsearch at $ESQLOG_ELASTICSEARCH_URL" >&2
exec .venv/bin/python -m pytest "$@"
