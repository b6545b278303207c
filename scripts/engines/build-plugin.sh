#!/usr/bin/env bash
# Build the esqlog-terms plugin (plugins/esqlog-terms) for one engine distribution and install
# it into that distribution's plugins/ folder.
#
#   scripts/engines/build-plugin.sh opensearch|elasticsearch HOME
#
# Why javac and no Gradle: the engines' plugin build tooling needs their Gradle plugins and a
# network; the query is two small classes, compiled here against the distribution's own
# lib/*.jar with the JDK's javac (as secure-elasticsearch.sh builds its analysis shim), so any
# machine that can run the node can build it. The target release is the engine's Java floor
# (OpenSearch 3.x: 21, Elasticsearch 8.x: 17), the JDK the newest one found that can target it.
# Installed once per distribution and version: a jar newer than its sources is kept.
set -euo pipefail
ENGINE=${1:-}; HOME_DIR=${2:-}
[[ ( $ENGINE == opensearch || $ENGINE == elasticsearch ) && -d "$HOME_DIR/lib" ]] || {
  echo "usage: $0 opensearch|elasticsearch DISTRIBUTION_HOME" >&2; exit 2; }
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SRC=$ROOT/plugins/esqlog-terms/$ENGINE/src
SHARED=$ROOT/plugins/esqlog-terms/lucene/src  # engine-neutral Lucene code, in both jars
NAME=esqlog-terms
DEST=$HOME_DIR/plugins/$NAME
JAR=$DEST/$NAME.jar
VERSION=$(ls "$HOME_DIR/lib" | sed -nE "s/^$ENGINE-([0-9][0-9.]*)\.jar$/\1/p" | head -n 1)
[[ -n "$VERSION" ]] || { echo "[$NAME] no $ENGINE-VERSION.jar in $HOME_DIR/lib" >&2; exit 1; }
RELEASE=17
[[ $ENGINE == opensearch && ${VERSION%%.*} -ge 3 ]] && RELEASE=21
[[ $ENGINE == elasticsearch && ${VERSION%%.*} -ge 9 ]] && RELEASE=21

# Nodes of one distribution start in parallel (the test node and the three-node cluster): one
# build at a time, the others then find it installed.
exec 9>"$HOME_DIR/.esqlog-terms.lock"
flock 9
if [[ -s "$JAR" && -z $(find "$SRC" "$SHARED" -name '*.java' -newer "$JAR") ]]; then
  echo "[$NAME] already installed in $DEST" >&2; exit 0
fi
JDK=""
for candidate in ${ESQLOG_JAVA_HOME:-} $(ls -d /usr/lib/jvm/*/ 2>/dev/null | sort -rV) ${JAVA_HOME:-}; do
  [[ -x "$candidate/bin/javac" && -x "$candidate/bin/jar" ]] || continue
  v=$("$candidate/bin/javac" -version 2>&1 | sed -nE 's/^javac ([0-9]+).*/\1/p')
  if [[ -n "$v" && "$v" -ge "$RELEASE" ]]; then JDK=${candidate%/}/bin; break; fi
done
[[ -n "$JDK" ]] || { echo "[$NAME] no javac >= $RELEASE found under /usr/lib/jvm" >&2; exit 1; }
BUILD=$(mktemp -d); trap 'rm -rf "$BUILD"' EXIT
"$JDK/javac" -nowarn -Xlint:-options --release "$RELEASE" -d "$BUILD/classes" \
  -cp "$HOME_DIR/lib/*" $(find "$SRC" "$SHARED" -name '*.java')
mkdir -p "$BUILD/plugin"
"$JDK/jar" cf "$BUILD/plugin/$NAME.jar" -C "$BUILD/classes" .
{
  echo "description=esqlog_terms: one BM25 saturation over a list of terms (Lucene SynonymQuery)"
  echo "version=1.3.0"
  echo "name=$NAME"
  echo "classname=esqlog.terms.TermsPlugin"
  echo "java.version=$RELEASE"
  echo "$ENGINE.version=$VERSION"
  [[ $ENGINE == opensearch ]] && printf '%s\n' "custom.foldername=$NAME" "extended.plugins=" \
    "has.native.controller=false"
} > "$BUILD/plugin/plugin-descriptor.properties"
rm -rf "$DEST"; mkdir -p "$(dirname "$DEST")"
cp -r "$BUILD/plugin" "$DEST"
echo "[$NAME] built with $(basename "$(dirname "$JDK")") (--release $RELEASE), installed in $DEST" >&2
