#!/usr/bin/env bash
# The engine matrix: a focused subset of the suite on the releases besides the default nodes
# (OpenSearch 3.6, Elasticsearch 8.19). OpenSearch 2.19 (what most managed clusters run; Java
# 17; BM25 keeps the legacy (k1+1) factor) and the newest 3.x served as an integ-test
# distribution run the native match sets, q-log scores against the oracle, calibrate and the
# esqlog-terms plugin; Elasticsearch 9.x runs the plugin's tests (its zip built for 9.x and
# installed with bin/elasticsearch-plugin, searched through the 8.x client's compatibility
# headers; on the newest 9.x node also with the 9.x client, as an application runs it:
# scripts/engines/es9-client.sh). The oldest supported releases (OpenSearch 2.11: no
# named-query scores, so the client-side rerank reads term vectors; Elasticsearch 8.11) run
# when Maven Central serves their distributions to this machine (it has not on every day;
# otherwise one line says they were skipped and why): the plugin's subset, and on OpenSearch
# also every mode against the oracle; the analyzers' match sets, calibrate's command line and
# the auto mode's choice are left to 2.19 and 3.x there (CI time: CPU-bound on two cores).
# Each node is started here, on its own ports and state folder, and stopped on exit; they
# start in parallel, then run in ESQLOG_MATRIX_LANES lanes (default 2) side by side.
#
#   bash scripts/engines/matrix.sh            (scripts/test.sh runs it before the full suite)
#   ESQLOG_MATRIX_PORT    first HTTP port (default 19214; the next nodes take the next ones)
#   ESQLOG_MATRIX_NODES   engine:version list (default "opensearch:2.19.6 opensearch:3.8.0
#                         elasticsearch:9.2.0 elasticsearch:9.5.3")
#   ESQLOG_MATRIX_OLDEST  engine:version list run when served (default "opensearch:2.11.1
#                         elasticsearch:8.11.4"; empty: none)
#   ESQLOG_MATRIX_LANES   how many nodes run their subsets at once (default 2; 1: one by one)
set -euo pipefail
cd "$(dirname "$0")/../.."
base=${ESQLOG_MATRIX_PORT:-19214}
read -r -a nodes <<< "${ESQLOG_MATRIX_NODES:-opensearch:2.19.6 opensearch:3.8.0 elasticsearch:9.2.0 elasticsearch:9.5.3}"
read -r -a oldest <<< "${ESQLOG_MATRIX_OLDEST-opensearch:2.11.1 elasticsearch:8.11.4}"
for node in ${oldest[@]+"${oldest[@]}"}; do
  engine=${node%%:*}
  if env "ESQLOG_${engine^^}_VERSION=${node#*:}" scripts/engines/engine.sh served "$engine"; then
    nodes+=("$node")
  else
    echo "[matrix] skipped $node: Maven Central does not serve its integ-test distribution" \
         "to this machine today" >&2
  fi
done
# The subsets: what must hold on every engine release, not the whole suite (CI time).
os_subset=(tests/engine/test_modes_engine.py tests/engine/test_rewrite_engine.py tests/engine/test_calibrate_cli.py
           tests/engine/test_adversarial_matchset.py tests/engine/test_identifiers_plugin.py
           tests/engine/test_plugin_cache_stats.py tests/engine/test_auto_default.py
           tests/engine/test_node_plan.py -k "opensearch" -q -p no:cacheprovider)
os_oldest_subset=(tests/engine/test_modes_engine.py tests/engine/test_identifiers_plugin.py
                  tests/engine/test_plugin_cache_stats.py tests/engine/test_node_plan.py
                  -k "opensearch" -q -p no:cacheprovider)
es_subset=(tests/engine/test_identifiers_plugin.py tests/engine/test_plugin_cache_stats.py
           tests/engine/test_auto_default.py tests/engine/test_node_plan.py
           -k "elasticsearch" -q -p no:cacheprovider)

node_env() {  # node index -> the env of that node
  local engine=${nodes[$1]%%:*} version=${nodes[$1]#*:}
  echo "ESQLOG_${engine^^}_VERSION=$version ESQLOG_${engine^^}_PORT=$((base + $1))" \
       "ESQLOG_ENGINE_HEAP=${ESQLOG_MATRIX_HEAP:-512m}"
}
stop_all() {
  for i in "${!nodes[@]}"; do
    env $(node_env "$i") scripts/engines/engine.sh stop "${nodes[$i]%%:*}" >/dev/null 2>&1 || true
  done
}
trap stop_all EXIT

pids=()
for i in "${!nodes[@]}"; do
  env $(node_env "$i") scripts/engines/engine.sh start "${nodes[$i]%%:*}" > /dev/null & pids+=($!)
done
for i in "${!nodes[@]}"; do
  wait "${pids[$i]}" || { echo "[matrix] ${nodes[$i]} did not start" >&2; exit 1; }
done
newest_es9=$(printf '%s\n' "${nodes[@]}" | grep '^elasticsearch:9\.' | sort -t: -k2 -V | tail -n 1 || true)

run_node() {  # node index: its subset, and the 9.x client's path on the newest 9.x node
  local i=$1 engine=${nodes[$1]%%:*} url=http://127.0.0.1:$((base + $1)) status=0 subset
  if [[ $engine == elasticsearch ]]; then subset=("${es_subset[@]}")
  elif [[ " ${oldest[*]-} " == *" ${nodes[$i]} "* ]]; then subset=("${os_oldest_subset[@]}")
  else subset=("${os_subset[@]}"); fi
  echo "[matrix] ${nodes[$i]} at $url: ${subset[*]}"
  env "ESQLOG_${engine^^}_URL=$url" .venv/bin/python -m pytest "${subset[@]}" || status=1
  if [[ ${nodes[$i]} == "$newest_es9" ]]; then  # as an application runs it: the 9.x client
    bash scripts/engines/es9-client.sh "$url" || status=1
  fi
  return $status
}

# The nodes run in lanes side by side: one node at a time leaves part of the two cores idle
# (two lanes: 508 against 538 s on a 2-core machine, 2026-12-07); each node's output is
# printed whole, in node order, once all are done.
lanes=${ESQLOG_MATRIX_LANES:-2}
logs=$(mktemp -d "${TMPDIR:-/tmp}/esqlog-matrix.XXXXXX")
lane_pids=()
for ((lane = 0; lane < lanes; lane++)); do
  (
    for i in "${!nodes[@]}"; do
      (( i % lanes == lane )) || continue
      started=$SECONDS
      rc=0; run_node "$i" > "$logs/$i.log" 2>&1 || rc=1
      echo "$rc" > "$logs/$i.rc"
      echo "[matrix] ${nodes[$i]} took $((SECONDS - started))s$([[ $rc == 0 ]] || echo ', FAILED')" >&2
    done
  ) & lane_pids+=($!)
done
for pid in "${lane_pids[@]}"; do wait "$pid" || true; done
status=0
for i in "${!nodes[@]}"; do
  cat "$logs/$i.log" 2>/dev/null || true
  [[ "$(cat "$logs/$i.rc" 2>/dev/null)" == 0 ]] || { status=1; echo "[matrix] ${nodes[$i]} FAILED" >&2; }
done
rm -rf "$logs"
exit $status
