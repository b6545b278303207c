#!/usr/bin/env bash
# What an application on Elasticsearch 9 runs: the 9.x Python client (esqlog[es9], not the
# 8.x client the suite uses through its compatibility headers) against a 9.x node that
# installed esqlog-terms with bin/elasticsearch-plugin.
#
#   bash scripts/engines/es9-client.sh URL      (scripts/engines/matrix.sh runs it on the
#                                                newest Elasticsearch 9.x node it starts)
#
# In a scratch venv with `pip install '.[es9]'`: the 9.x client indexes the bundled sample's
# first 2,000 Go functions into a scratch index marked as esqlog's, `esqlog calibrate
# --vocabulary --identifiers` must say that searches take the plugin, and searches through
# esqlog.wrap(Elasticsearch(URL), calibration) with no mode must answer every text and find
# more golds in the top 10 than the plain match. Writes only its scratch index (and the word
# lists calibrate writes); deletes the index.
set -euo pipefail
cd "$(dirname "$0")/../.."
url=${1:?usage: es9-client.sh URL}
work=$(mktemp -d "${TMPDIR:-/tmp}/esqlog-es9.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "[es9-client] FAIL: $*" >&2; exit 1; }
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q ".[es9]" > "$work/pip.log" 2>&1 \
  || { cat "$work/pip.log" >&2; fail "pip install '.[es9]'"; }
index=esqlog-es9-client
"$work/venv/bin/python" - "$url" "$index" <<'PY' || fail "indexing with the 9.x client"
import gzip
import json
import sys
from importlib.resources import files

from elasticsearch import Elasticsearch, helpers

from esqlog.engine.scratch import scratch_marker

url, index = sys.argv[1:]
client = Elasticsearch(url)
client.options(ignore_status=404).indices.delete(index=index)
client.indices.create(
    index=index,
    settings={"number_of_shards": 2, "number_of_replicas": 0},
    mappings={"_meta": scratch_marker("es9-client"), "properties": {"body": {"type": "text"}}},
)
with gzip.open(files("esqlog.data").joinpath("sample_go_docs.jsonl.gz"), "rt") as handle:
    docs = [json.loads(line) for _, line in zip(range(2000), handle, strict=False)]
helpers.bulk(client, ({"_index": index, "_id": d["id"], "body": d["text"]} for d in docs))
client.indices.refresh(index=index)
PY
"$work/venv/bin/esqlog" calibrate --url "$url" --index "$index" --field body --vocabulary \
  --identifiers --out "$work/cal.json" > "$work/cal.out" 2>&1 \
  || { cat "$work/cal.out" >&2; fail "esqlog calibrate"; }
grep -q "as plugin esqlog-terms" "$work/cal.out" || { cat "$work/cal.out" >&2; fail "not the plugin"; }
"$work/venv/bin/python" - "$url" "$index" "$work/cal.json" <<'PY' || fail "searches through esqlog.wrap"
import json
import sys
from importlib.resources import files

import elasticsearch
from elasticsearch import Elasticsearch

import esqlog

url, index, calibration = sys.argv[1:]
assert elasticsearch.__versionstr__.startswith("9."), elasticsearch.__versionstr__
plain = Elasticsearch(url)
wrapped = esqlog.wrap(Elasticsearch(url), calibration)
indexed = plain.search(index=index, size=2000, source=False)["hits"]["hits"]
golds = {hit["_id"] for hit in indexed}
lines = files("esqlog.data").joinpath("sample_go_queries.jsonl").read_text().splitlines()
queries = [q for q in map(json.loads, lines) if q["gold"] in golds][:100]
assert len(queries) >= 50, len(queries)
found = {"match": 0, "wrapped": 0}
for q in queries:
    for name, client in (("match", plain), ("wrapped", wrapped)):
        hits = client.search(index=index, query={"match": {"body": q["text"]}}, size=10)["hits"]
        assert hits["hits"], (name, q["text"])
        found[name] += q["gold"] in [h["_id"] for h in hits["hits"]]
assert found["wrapped"] > found["match"], found
print(
    f"[es9-client] elasticsearch {elasticsearch.__versionstr__}: golds in the top 10 of "
    f"{len(queries)} texts, the match {found['match']}, esqlog.wrap {found['wrapped']}",
    file=sys.stderr,
)
PY
curl -fsS -X DELETE "$url/$index" > /dev/null
echo "[es9-client] ok: indexing, calibrate (the plugin) and esqlog.wrap with the 9.x client" >&2
