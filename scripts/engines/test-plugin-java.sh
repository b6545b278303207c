#!/usr/bin/env bash
# Run the esqlog-terms plugin's Lucene unit tests (plugins/esqlog-terms/lucene/test) against
# each Lucene version the plugin is built for, with Lucene's own test framework.
#
#   scripts/engines/test-plugin-java.sh [LUCENE_VERSION ...]   (default: 9.12.2 10.4.0)
#
# Why javac and JUnitCore rather than a build tool: the shared Lucene code compiles on its own
# against lucene-core, so its tests need only lucene-test-framework and its three dependencies,
# fetched once into the local Maven repository (mvn dependency:get) from Maven Central. Lucene
# 9.12 is Elasticsearch 8.x's and OpenSearch 2.x's, 10.x OpenSearch 3.x's; the JDK is the
# newest one under /usr/lib/jvm (Lucene 10 needs 21). Exits non-zero if any test fails.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
M2=${MAVEN_REPO:-$HOME/.m2/repository}
VERSIONS=("$@"); [[ ${#VERSIONS[@]} -gt 0 ]] || VERSIONS=(9.12.2 10.4.0)
JDK=$(ls -d /usr/lib/jvm/*/ 2>/dev/null | sort -rV | while read -r d; do
  [[ -x "$d/bin/javac" ]] && "$d/bin/javac" -version 2>&1 | grep -qE 'javac (2[1-9]|[3-9][0-9])' \
    && { echo "${d%/}/bin"; break; }; done)
[[ -n "$JDK" ]] || { echo "no JDK >= 21 under /usr/lib/jvm" >&2; exit 1; }
jar() { echo "$M2/$(echo "$1" | tr . /)/$2/$3/$2-$3.jar"; }
status=0
for v in "${VERSIONS[@]}"; do
  CP="$(jar org.apache.lucene lucene-core "$v"):$(jar org.apache.lucene lucene-codecs "$v")"
  CP="$CP:$(jar org.apache.lucene lucene-test-framework "$v")"
  CP="$CP:$(jar com.carrotsearch.randomizedtesting randomizedtesting-runner 2.8.1)"
  CP="$CP:$(jar junit junit 4.13.1):$(jar org.hamcrest hamcrest 2.2)"
  [[ -s "$(jar org.apache.lucene lucene-test-framework "$v")" ]] || \
    mvn -q dependency:get -Dartifact="org.apache.lucene:lucene-test-framework:$v" >&2
  OUT=$(mktemp -d); trap 'rm -rf "$OUT"' EXIT
  # lucene/src and the folders of the classes whose Lucene API moved, as the zip build picks
  # them for Lucene $v (esqlog.engine.plugin_zip.range_folders: standard library only)
  FOLDERS=$(PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}" "${PYTHON:-python3}" \
    -m esqlog.engine.plugin_zip --lucene-folders "$v")
  # shellcheck disable=SC2046,SC2086
  "$JDK/javac" -nowarn -d "$OUT" -cp "$CP" \
    $(find $FOLDERS "$ROOT/plugins/esqlog-terms/lucene/test" -name '*.java')
  TESTS=$(cd "$ROOT/plugins/esqlog-terms/lucene/test" && find . -name '*Test.java' \
    | sed -E 's#^\./##; s#\.java$##; s#/#.#g')
  echo "[lucene $v, $(echo $FOLDERS | sed "s#$ROOT/plugins/esqlog-terms/##g")] $TESTS" >&2
  # shellcheck disable=SC2086
  "$JDK/java" -ea -Desqlog.test.data="$ROOT/plugins/esqlog-terms/lucene/test/esqlog/terms" -cp "$OUT:$CP" org.junit.runner.JUnitCore ${ESQLOG_JAVA_TESTS:-$TESTS} || status=1
  rm -rf "$OUT"
done
exit $status
