#!/usr/bin/env bash
# Build the esqlog-terms plugin zips with Maven (plugins/esqlog-terms/pom.xml), running the
# Lucene tests under Surefire, then check each zip against what esqlog.engine.plugin_zip writes
# (same entries, same plugin-descriptor.properties byte for byte, same classes in the jar) and
# install it with the engine's own tool into a throwaway copy of the unpacked distribution.
#
#   scripts/engines/test-plugin-maven.sh [OPENSEARCH_VERSION [ELASTICSEARCH_VERSION]]
#       (default: 3.6.0 8.19.21; MVN_ARGS="-o" once the local Maven repository is filled)
#
# The distributions are read from $ESQLOG_ENGINE_CACHE (as scripts/engines/engine.sh unpacks
# them) and copied under a temporary folder first: the cache itself is never changed. A release
# with no unpacked distribution there is built and compared but not installed. Other Lucene
# versions than the defaults (10.4.0 for OpenSearch, 9.12.2 for Elasticsearch) go in MVN_ARGS:
# -Dopensearch.lucene.version=, -Delasticsearch.lucene.version=. The Lucene tests use Lucene
# 9.8's TopScoreDocCollectorManager: for an older release's Lucene (OpenSearch 2.11's 9.7) add
# -Dmaven.test.skip=true (scripts/engines/test-plugin-java.sh runs them on 9.12 and 10.4). Exits
# non-zero on the first failure.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OS_VERSION=${1:-3.6.0}; ES_VERSION=${2:-8.19.21}
CACHE=${ESQLOG_ENGINE_CACHE:-/var/cache/esqlog/engines}
JDK=$(ls -d /usr/lib/jvm/*/ 2>/dev/null | sort -rV | while read -r d; do
  [[ -x "$d/bin/javac" ]] && "$d/bin/javac" -version 2>&1 | grep -qE 'javac (2[1-9]|[3-9][0-9])' \
    && { echo "${d%/}"; break; }; done)
[[ -n "$JDK" ]] || { echo "no JDK >= 21 under /usr/lib/jvm" >&2; exit 1; }
SRC=$ROOT/plugins/esqlog-terms
# shellcheck disable=SC2086
JAVA_HOME=$JDK mvn -B -T1 ${MVN_ARGS:-} -f "$SRC/pom.xml" clean package \
  -Dopensearch.version="$OS_VERSION" -Delasticsearch.version="$ES_VERSION"
WORK=$(mktemp -d); trap 'rm -rf "$WORK"' EXIT
for pair in "opensearch $OS_VERSION" "elasticsearch $ES_VERSION"; do
  read -r engine version <<<"$pair"
  zip="$SRC/$engine/target/esqlog-terms-$(tr -d '[:space:]' < "$SRC/VERSION")-$engine-$version.zip"
  PYTHONPATH=$ROOT python3 - "$engine" "$version" "$zip" "$CACHE/$engine-$version/lib" <<'PY'
import sys, zipfile
from pathlib import Path
from esqlog.engine import plugin_zip
engine, version, built, lib = sys.argv[1:]
tgt = plugin_zip.target(engine, version)
with zipfile.ZipFile(built) as zf:
    names = sorted(zf.namelist())
    got = zf.read("plugin-descriptor.properties")
    with zf.open(f"{plugin_zip.NAME}.jar") as jar, zipfile.ZipFile(jar) as inner:
        classes = sorted(n for n in inner.namelist() if n.endswith(".class"))
version_of_plugin = plugin_zip.plugin_version(plugin_zip.sources_folder())
want = plugin_zip.descriptor(tgt, version_of_plugin).encode()
assert names == sorted([f"{plugin_zip.NAME}.jar", "plugin-descriptor.properties"]), names
assert got == want, (got, want)
assert built.endswith("/" + plugin_zip.zip_name(tgt)), built
# the classes of the sources plugin_zip compiles for this release (and the Lucene its
# unpacked distribution ships, when there is one)
lib_path = Path(lib) if Path(lib).is_dir() else None
expected = sorted(p.relative_to(p.parents[2]).with_suffix(".class").as_posix()
                  for p in plugin_zip.java_files(plugin_zip.sources_folder(), tgt, lib_path))
missing = [c for c in expected if c not in classes]
assert not missing, missing
print(f"[{engine} {version}] zip entries, descriptor and classes as plugin_zip writes them")
PY
  dist="$CACHE/$engine-$version"
  if [[ ! -x "$dist/bin/$engine-plugin" ]]; then
    echo "[$engine $version] no unpacked distribution in $CACHE: not installed" >&2; continue
  fi
  copy="$WORK/$engine-$version"; cp -a "$dist" "$copy"; rm -rf "${copy:?}/plugins/"*
  ES_JAVA_HOME=$JDK OPENSEARCH_JAVA_HOME=$JDK "$copy/bin/$engine-plugin" install --batch \
    "file://$zip"
  listed=$(ES_JAVA_HOME=$JDK OPENSEARCH_JAVA_HOME=$JDK "$copy/bin/$engine-plugin" list 2>/dev/null)
  [[ "$listed" == *esqlog-terms* ]] || { echo "[$engine $version] not listed: $listed" >&2; exit 1; }
  echo "[$engine $version] installed with bin/$engine-plugin; listed: $listed"
  rm -rf "$copy"
done
