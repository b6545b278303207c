#!/usr/bin/env bash
# Build the esqlog-terms plugin (plugins/esqlog-terms) as the engine's standard plugin zip for
# one distribution, and install it with that distribution's own plugin tool.
#
#   scripts/engines/build-plugin.sh opensearch|elasticsearch HOME             build (cached) and install
#   scripts/engines/build-plugin.sh opensearch|elasticsearch HOME --zip OUT   only write the zip to OUT
#
# Why javac and no Gradle: the engines' plugin build tooling needs their Gradle plugins and a
# network; the query is a few small classes, compiled here against the distribution's own
# lib/*.jar with the JDK's javac, so any machine that can run the node can build it. The zip is
# what users install (docs/plugin.md): plugin-descriptor.properties and the jar at its root,
# naming the exact engine version, which both engines' plugin tools require. The target release
# is the engine's Java floor (OpenSearch 3.x and Elasticsearch 9.x: 21, older: 17).
# Installed through `bin/opensearch-plugin install` / `bin/elasticsearch-plugin install`, as a
# user's node would; the zip is kept beside the distribution and rebuilt, and the plugin
# reinstalled, only when the sources or the plugin's version changed.
set -euo pipefail
ENGINE=${1:-}; HOME_DIR=${2:-}; ZIP_ONLY=""
[[ ${3:-} == --zip ]] && ZIP_ONLY=$(realpath -m -- "${4:?"--zip needs an output path"}")
[[ ( $ENGINE == opensearch || $ENGINE == elasticsearch ) && -d "$HOME_DIR/lib" ]] || {
  echo "usage: $0 opensearch|elasticsearch DISTRIBUTION_HOME [--zip OUT.zip]" >&2; exit 2; }
HOME_DIR=$(cd "$HOME_DIR" && pwd)
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
NAME=esqlog-terms
PLUGIN_VERSION=$(tr -d '[:space:]' < "$ROOT/plugins/esqlog-terms/VERSION")
VERSION=$(ls "$HOME_DIR/lib" | sed -nE "s/^$ENGINE-([0-9][0-9.]*)\.jar$/\1/p" | head -n 1)
[[ -n "$VERSION" ]] || { echo "[$NAME] no $ENGINE-VERSION.jar in $HOME_DIR/lib" >&2; exit 1; }
# The zip is built by esqlog.engine.plugin_zip (standard library only: no virtualenv needed),
# the same code as `esqlog plugin build`; its digest covers the sources and the plugin version.
PY=${PYTHON:-python3}
# From the checkout's root: `python -m` puts the working directory first on the path, so from
# another checkout's folder it would build that one's sources.
run_zip() { (cd "$ROOT" && PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}" "$PY" -m \
  esqlog.engine.plugin_zip --engine "$ENGINE" --distribution "$HOME_DIR" "$@"); }
DIGEST=$(run_zip --digest)
ZIP=${ZIP_ONLY:-$(dirname "$HOME_DIR")/$NAME-$PLUGIN_VERSION-$ENGINE-$VERSION.zip}
STAMP=$HOME_DIR/.$NAME.installed

# Nodes of one distribution start in parallel (the test node and the three-node cluster): one
# build at a time, the others then find it installed.
exec 9>"$HOME_DIR/.$NAME.lock"
flock 9
if [[ -z "$ZIP_ONLY" && -d "$HOME_DIR/plugins/$NAME" && -f "$STAMP" && $(cat "$STAMP") == "$DIGEST" ]]; then
  echo "[$NAME] $PLUGIN_VERSION already installed in $HOME_DIR/plugins/$NAME" >&2; exit 0
fi
if [[ -n "$ZIP_ONLY" || ! -s "$ZIP" || $(cat "$ZIP.digest" 2>/dev/null) != "$DIGEST" ]]; then
  run_zip --out "$ZIP" >/dev/null
  echo "$DIGEST" > "$ZIP.digest"
  echo "[$NAME] $PLUGIN_VERSION for $ENGINE $VERSION: $ZIP" >&2
fi
[[ -n "$ZIP_ONLY" ]] && exit 0

# The engine's own tool installs it, with the JDK that runs that engine.
TOOL=$HOME_DIR/bin/$ENGINE-plugin
JDK=""
for candidate in ${ESQLOG_JAVA_HOME:-} $(ls -d /usr/lib/jvm/*/ 2>/dev/null | sort -rV) ${JAVA_HOME:-}; do
  [[ -x "$candidate/bin/java" ]] && { JDK=${candidate%/}; break; }
done
JAVA_ENV=(ES_JAVA_HOME="$JDK" OPENSEARCH_JAVA_HOME="$JDK")
if [[ -d "$HOME_DIR/plugins/$NAME" ]]; then
  env "${JAVA_ENV[@]}" "$TOOL" remove "$NAME" >/dev/null 2>&1 || rm -rf "$HOME_DIR/plugins/$NAME"
fi
env "${JAVA_ENV[@]}" "$TOOL" install --batch "file://$ZIP" >&2 || {
  echo "[$NAME] $TOOL install refused $ZIP" >&2; exit 1; }
echo "$DIGEST" > "$STAMP"
echo "[$NAME] $PLUGIN_VERSION installed with $(basename "$TOOL") into $HOME_DIR/plugins/$NAME" >&2
