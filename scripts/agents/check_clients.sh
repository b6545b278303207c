#!/usr/bin/env bash
# Register docs/agents.md's configurations with the real agent CLIs, each in a throw-away
# HOME, and print what the CLIs say: Claude Code's `claude mcp list` starts the server and
# reports "Connected" or "Failed to connect"; Codex's `codex mcp list/get` parses and shows
# the entry (it does not start the server). The docs' placeholders are replaced by a real
# esqlog, engine URL, index and calibration; everything else is used as written.
#
#   npm install --prefix /tmp/agent-clients @anthropic-ai/claude-code @openai/codex
#   scripts/agents/check_clients.sh /tmp/agent-clients/node_modules/.bin \
#       "$(which esqlog)" http://127.0.0.1:9200 myindex /abs/path/myindex.qlog.json
set -euo pipefail
bin=$1 esqlog=$2 url=$3 index=$4 calibration=$5
doc="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/docs/agents.md"
fill() {  # the docs' placeholders -> the real values given above
  sed -e "s#/home/me/.venv/bin/esqlog#$esqlog#g" -e "s#http://localhost:9200#$url#g" \
      -e "s#--index myrepo#--index $index#g" -e "s#\"myrepo\"#\"$index\"#g" \
      -e "s#/home/me/.esqlog/myrepo.qlog.json#$calibration#g"
}
block() {  # the first fenced block of kind $1 after the heading $2
  awk -v kind="$1" -v head="$2" '$0 == head {h=1} h && $0 == "```" kind {b=1; next}
       b && $0 == "```" {exit} b {print}' "$doc"
}
home=$(mktemp -d) && trap 'rm -rf "$home"' EXIT

echo "== claude $("$bin/claude" --version)"
mkdir -p "$home/claude/proj" && cd "$home/claude/proj"
line=$(grep '^claude mcp add ' "$doc" | fill)
HOME=$home/claude eval "\"$bin/\"$line" >/dev/null
HOME=$home/claude "$bin/claude" mcp list | grep esqlog
HOME=$home/claude "$bin/claude" mcp remove esqlog -s local >/dev/null
# the project block (.mcp.json), approved as the trust dialog would
printf 'unused\n' > "$home/pass" && chmod 600 "$home/pass"  # ESQLOG_PASSWORD_FILE's
block json "## Claude Code" | fill | sed "s#/home/me/.es-pass#$home/pass#" > .mcp.json
python3 - "$home/claude/.claude.json" "$PWD" <<'PY'
import json, sys
path, project = sys.argv[1:]
data = json.load(open(path))
data.setdefault("projects", {}).setdefault(project, {}).update(
    hasTrustDialogAccepted=True, enabledMcpjsonServers=["esqlog"])
json.dump(data, open(path, "w"))
PY
HOME=$home/claude "$bin/claude" mcp list | grep esqlog

echo "== $("$bin/codex" --version 2>/dev/null)"
mkdir -p "$home/codex/.codex"
line=$(grep '^codex mcp add ' "$doc" | fill)
HOME=$home/codex eval "\"$bin/\"$line" 2>/dev/null
HOME=$home/codex "$bin/codex" mcp list 2>/dev/null | grep esqlog
block toml "## Codex CLI" | fill | sed "s#/home/me/.es-pass#$home/pass#" \
    > "$home/codex/.codex/config.toml"
HOME=$home/codex "$bin/codex" mcp get esqlog 2>/dev/null | grep -E "command|args|env"
