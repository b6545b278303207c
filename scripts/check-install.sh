#!/usr/bin/env bash
# What a new user gets from `pip install`: builds the sdist and the wheel (no deprecation
# warning; the sdist carries the whole test suite), installs the wheel into scratch venvs
# and runs the console script there against the real nodes:
#   plain install:  no search client at all (an application brings its own); `esqlog demo`
#                   and `esqlog index` say in one line which extra to add (before
#                   connecting: nothing is written), and `esqlog calibrate` says in one line
#                   to install a client's extra (with --dask: the distributed extra);
#   esqlog[es9]:    the 9.x client against Elasticsearch 8 says in one line to install
#                   esqlog[es8];
#   esqlog[eval,es8] / esqlog[eval,opensearch]: `esqlog demo` runs to the end on
#                   Elasticsearch 8 / on OpenSearch; with only opensearch-py, a command
#                   pointed at Elasticsearch names esqlog[es8].
# Needs ESQLOG_OPENSEARCH_URL and ESQLOG_ELASTICSEARCH_URL (scripts/test.sh exports them).
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d "${TMPDIR:-/tmp}/esqlog-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
passed=0
fail() { echo "[install] FAIL: $*" >&2; echo "install: $passed passed, 1 failed" >&2; exit 1; }
one_line_error() {  # expected exit code, text the line must contain, command...
  local code=$1 want=$2; shift 2
  local rc=0; "$@" > "$work/out" 2> "$work/err" || rc=$?
  [[ $rc == "$code" ]] || { cat "$work/out" "$work/err" >&2; fail "$* exited $rc, not $code"; }
  [[ $(wc -l < "$work/err") == 1 ]] || { cat "$work/err" >&2; fail "$*: not one line"; }
  grep -qF -- "$want" "$work/err" || { cat "$work/err" >&2; fail "$*: no '$want'"; }
  passed=$((passed + 1)); echo "[install] ok: $* -> $(cat "$work/err")" >&2
}

.venv/bin/python -m build --outdir "$work/dist" . > "$work/build.log" 2>&1 \
  || { cat "$work/build.log" >&2; fail "python -m build"; }
if grep -qi "deprecat" "$work/build.log"; then
  grep -i -B2 -A2 "deprecat" "$work/build.log" >&2; fail "the build warns about a deprecation"
fi
sdist=$(ls "$work"/dist/esqlog-*.tar.gz); wheel=$(ls "$work"/dist/esqlog-*.whl)
tar tzf "$sdist" > "$work/sdist.txt"
grep -q "/tests/engine/conftest.py$" "$work/sdist.txt" || fail "the sdist has no tests/engine/conftest.py"
passed=$((passed + 1)); echo "[install] built $(basename "$sdist") (with tests/engine/conftest.py) and $(basename "$wheel")" >&2

python3 -m venv "$work/plain"
"$work/plain/bin/pip" install -q "$wheel"
"$work/plain/bin/python" -c "import elasticsearch" 2>/dev/null && fail "a plain install brought elasticsearch"
"$work/plain/bin/python" -c "import opensearchpy" 2>/dev/null && fail "a plain install brought opensearch-py"
passed=$((passed + 1)); echo "[install] ok: a plain install brings no search client" >&2
(cd "$work" && "$work/plain/bin/python" -c "
from esqlog.scoring.painless import painless_folder, painless_source
assert 'site-packages' in str(painless_folder()), painless_folder()
assert painless_source('esqlog-qlog-term').strip() and painless_source('esqlog-qlog-bm25-similarity').strip()
") || fail "the wheel does not carry painless/ as esqlog/painless"
passed=$((passed + 1)); echo "[install] ok: the wheel carries painless/ as esqlog/painless" >&2
one_line_error 2 "pip install 'esqlog[eval]'" \
  "$work/plain/bin/esqlog" demo --url "$ESQLOG_OPENSEARCH_URL"
one_line_error 2 "pip install 'esqlog[index]'" \
  "$work/plain/bin/esqlog" index . --url "$ESQLOG_OPENSEARCH_URL" --index esqlog-install-check
one_line_error 2 "pip install 'esqlog[opensearch]'" \
  "$work/plain/bin/esqlog" calibrate --url "$ESQLOG_OPENSEARCH_URL" --index esqlog-none --field body
one_line_error 2 "pip install 'esqlog[distributed]'" \
  "$work/plain/bin/esqlog" calibrate --url "$ESQLOG_OPENSEARCH_URL" --index esqlog-none --field body \
  --vocabulary --identifiers --out "$work/dask.json" --dask tcp://127.0.0.1:8786

python3 -m venv "$work/es9"
"$work/es9/bin/pip" install -q "$wheel[es9]"
one_line_error 3 "pip install 'esqlog[es8]'" \
  "$work/es9/bin/esqlog" calibrate --url "$ESQLOG_ELASTICSEARCH_URL" --index esqlog-none --field body

run_demo() {  # venv, url
  "$work/$1/bin/esqlog" demo --url "$2" --index esqlog-install-demo > "$work/demo.out" 2>&1 \
    || { cat "$work/demo.out" >&2; fail "esqlog demo on $2 from esqlog[$1]"; }
  grep -q "NDCG@10 change" "$work/demo.out" || { cat "$work/demo.out" >&2; fail "demo output"; }
  curl -fsS -X DELETE "$2/esqlog-install-demo" > /dev/null
  passed=$((passed + 1)); echo "[install] ok: esqlog[eval,$1] demo on $(head -n 1 "$work/demo.out")" >&2
}
python3 -m venv "$work/es8"
"$work/es8/bin/pip" install -q "$wheel[eval,es8]"
run_demo es8 "$ESQLOG_ELASTICSEARCH_URL"
python3 -m venv "$work/opensearch"
"$work/opensearch/bin/pip" install -q "$wheel[eval,opensearch]"
run_demo opensearch "$ESQLOG_OPENSEARCH_URL"
one_line_error 2 "pip install 'esqlog[es8]'" \
  "$work/opensearch/bin/esqlog" calibrate --url "$ESQLOG_ELASTICSEARCH_URL" --index esqlog-none --field body
echo "install: $passed passed, 0 failed" >&2
