#!/usr/bin/env bash
# The main job: set up .venv, start a local OpenSearch node unless ESQLOG_URL (or --url) names
# a cluster, then run `esqlog demo`: index 5,000 real Go functions into a scratch index,
# calibrate, and compare native BM25 with q-log BM25 and the identifiers mode; then
# scripts/agent_demo.py: index this repository's own code with `esqlog index --calibrate` and
# show one search_code answer exactly as a coding agent receives it over MCP, with its token
# count. Extra arguments go to `esqlog demo`.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
if [[ -z "${ESQLOG_URL:-}" && " $* " != *" --url"* ]]; then
  ESQLOG_URL=$(scripts/start-opensearch.sh | tail -n 1)
  export ESQLOG_URL
  echo "[demo] using the local OpenSearch node at $ESQLOG_URL (stop it: scripts/stop-opensearch.sh)" >&2
fi
.venv/bin/esqlog demo "$@"
url=${ESQLOG_URL:-}
args=("$@")
for i in "${!args[@]}"; do
  [[ ${args[$i]} == --url ]] && url=${args[$((i + 1))]:-}
  [[ ${args[$i]} == --url=* ]] && url=${args[$i]#--url=}
done
exec .venv/bin/python scripts/agent_demo.py --url "$url"
