#!/usr/bin/env bash
# The engine matrix: a focused subset of the suite (native match sets, q-log scores against
# the oracle, calibrate) on the OpenSearch releases besides the default 3.6 node: 2.19 (what
# most managed clusters run; Java 17; BM25 keeps the legacy (k1+1) factor) and the newest
# 3.x served as an integ-test distribution. Elasticsearch 8.19 with the 8.x client is the
# default node of the whole suite. Each node is started here, on its own ports and state
# folder, and stopped on exit; the two start in parallel, then run one after the other.
#
#   bash scripts/engines/matrix.sh            (scripts/test.sh runs it before the full suite)
#   ESQLOG_MATRIX_PORT   first HTTP port (default 19214; the second node takes the next one)
#   ESQLOG_MATRIX_VERSIONS  OpenSearch versions (default "2.19.6 3.8.0")
set -euo pipefail
cd "$(dirname "$0")/../.."
base=${ESQLOG_MATRIX_PORT:-19214}
read -r -a versions <<< "${ESQLOG_MATRIX_VERSIONS:-2.19.6 3.8.0}"
# The subset: what must hold on every engine release, not the whole suite (CI time).
subset=(tests/engine/test_modes_engine.py tests/engine/test_rewrite_engine.py tests/engine/test_calibrate_cli.py
        tests/engine/test_adversarial_matchset.py -k "opensearch" -q -p no:cacheprovider)

node_env() {  # version index -> the env of that node
  echo "ESQLOG_OPENSEARCH_VERSION=${versions[$1]} ESQLOG_OPENSEARCH_PORT=$((base + $1))" \
       "ESQLOG_ENGINE_HEAP=${ESQLOG_MATRIX_HEAP:-512m}"
}
stop_all() {
  for i in "${!versions[@]}"; do
    env $(node_env "$i") scripts/engines/engine.sh stop opensearch >/dev/null 2>&1 || true
  done
}
trap stop_all EXIT

pids=()
for i in "${!versions[@]}"; do
  env $(node_env "$i") scripts/engines/engine.sh start opensearch > /dev/null & pids+=($!)
done
for i in "${!versions[@]}"; do
  wait "${pids[$i]}" || { echo "[matrix] OpenSearch ${versions[$i]} did not start" >&2; exit 1; }
done
status=0
for i in "${!versions[@]}"; do
  url=http://127.0.0.1:$((base + i))
  echo "[matrix] OpenSearch ${versions[$i]} at $url: ${subset[*]}" >&2
  started=$SECONDS
  ESQLOG_OPENSEARCH_URL=$url .venv/bin/python -m pytest "${subset[@]}" || status=1
  echo "[matrix] OpenSearch ${versions[$i]} took $((SECONDS - started))s" >&2
done
exit $status
