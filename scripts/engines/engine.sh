#!/usr/bin/env bash
# Start, stop or query a real local search node assembled from Maven Central.
#
#   scripts/engines/engine.sh start|stop|status|url|home|served opensearch|elasticsearch
#   scripts/engines/engine.sh tool elasticsearch elasticsearch-users useradd ...   (a bin/ tool)
#
# Why this shape: Docker and the engines' download sites are out of reach on our machines, but
# Maven Central serves complete "integ-test" distributions of both engines. The zip is fetched
# into the local Maven repository (so a second start needs no network), unpacked once into a
# cache folder, and run as a single node bound to 127.0.0.1 with a bounded heap. Data and logs
# live under a temporary folder; a PID file lets `stop` end exactly the node it started.
#
# Optional settings for extra (test) nodes, all off by default:
#   ESQLOG_ES_PATH_CONF       Elasticsearch config folder to use instead of the distribution's
#                             (it then decides security itself: xpack.security.enabled=false is
#                             no longer forced); `tool` runs with it as ES_PATH_CONF too.
#   ESQLOG_ENGINE_SCHEME      http (default) or https, for the URL and the health check.
#   ESQLOG_ENGINE_CURL_ARGS   extra curl arguments for the health check (--cacert, --netrc-file).
#   ESQLOG_ENGINE_KEEP_DATA=1 keep the data folder of a previous run (a restart, not a reset).
#   ESQLOG_ENGINE_NODE_NAME / ESQLOG_ENGINE_CLUSTER_NAME / ESQLOG_ENGINE_DISCOVERY
#                             a node of a multi-node cluster (scripts/engines/cluster.sh): its
#                             name, its cluster's name, and the -E discovery settings that
#                             replace -Ediscovery.type=single-node.
#   ESQLOG_ENGINE_PLUGIN=0    start without the esqlog-terms plugin (plugins/esqlog-terms, the
#                             esqlog_terms query of IdentifierSettings(engine_query="plugin")).
#                             By default start builds its plugin zip for this exact engine
#                             version and installs it with bin/*-plugin install
#                             (scripts/engines/build-plugin.sh): a few seconds once, then kept
#                             until its sources change, so every test and bench node, of every
#                             release, can run the plugin variant. A node without javac starts
#                             without it.
#   ESQLOG_ENGINE_TERMS_CACHE the plugin's postings cache on these nodes
#                             (esqlog.terms.postings_cache_size, 1% of the heap by default in the
#                             plugin itself): 5% of the heap unless set, so that the tests
#                             exercise it; 0b turns it off.
#   ESQLOG_OPENSEARCH_VERSION / ESQLOG_ELASTICSEARCH_VERSION   another release of the engine
#                             (the CI matrix runs OpenSearch 2.19 and the newest 3.x); a
#                             non-default version keeps its own state folder, so it can run
#                             beside the default node on other ports.
set -euo pipefail

ACTION=${1:-}
ENGINE=${2:-}
usage() { echo "usage: $0 start|stop|status|url|home|served opensearch|elasticsearch" >&2; exit 2; }
[[ -n "$ACTION" && -n "$ENGINE" ]] || usage

OPENSEARCH_VERSION=${ESQLOG_OPENSEARCH_VERSION:-3.6.0}
ELASTICSEARCH_VERSION=${ESQLOG_ELASTICSEARCH_VERSION:-8.19.21}
STATE_ROOT=${ESQLOG_ENGINE_DIR:-${TMPDIR:-/tmp}/esqlog-engines}
# The node runs as an unprivileged user when we are root, so its files must live outside /root.
if [[ $(id -u) -eq 0 ]]; then DEFAULT_CACHE=/var/cache/esqlog/engines; else DEFAULT_CACHE=$HOME/.cache/esqlog/engines; fi
CACHE_ROOT=${ESQLOG_ENGINE_CACHE:-$DEFAULT_CACHE}
M2=${MAVEN_REPO:-$HOME/.m2/repository}
HEAP=${ESQLOG_ENGINE_HEAP:-1g}
START_TIMEOUT=${ESQLOG_ENGINE_START_TIMEOUT:-180}
RUN_USER=${ESQLOG_ENGINE_USER:-esqlog-engine}
SCHEME=${ESQLOG_ENGINE_SCHEME:-http}
ES_CONF=${ESQLOG_ES_PATH_CONF:-}
read -r -a CURL_EXTRA <<< "${ESQLOG_ENGINE_CURL_ARGS:-}"

case "$ENGINE" in
  opensearch)
    VERSION=$OPENSEARCH_VERSION
    GROUP_PATH=org/opensearch/distribution/integ-test-zip/opensearch
    ARTIFACT=org.opensearch.distribution.integ-test-zip:opensearch:$VERSION:zip
    HTTP_PORT=${ESQLOG_OPENSEARCH_PORT:-19200}
    BIN=bin/opensearch
    ;;
  elasticsearch)
    VERSION=$ELASTICSEARCH_VERSION
    GROUP_PATH=org/elasticsearch/distribution/integ-test-zip/elasticsearch
    ARTIFACT=org.elasticsearch.distribution.integ-test-zip:elasticsearch:$VERSION:zip
    HTTP_PORT=${ESQLOG_ELASTICSEARCH_PORT:-19201}
    BIN=bin/elasticsearch
    ;;
  *) usage ;;
esac
TRANSPORT_PORT=$((HTTP_PORT + 100))
URL="$SCHEME://127.0.0.1:$HTTP_PORT"
STATE=$STATE_ROOT/$ENGINE
case "$ENGINE:$VERSION" in
  opensearch:3.6.0|elasticsearch:8.19.21) ;;
  *) STATE=$STATE_ROOT/$ENGINE-$VERSION ;;
esac
# Java: OpenSearch 3 and Elasticsearch 9 need 21+, OpenSearch 2.x and Elasticsearch 8 run on 17.
NEED_JAVA=17
[[ ${VERSION%%.*} -ge 3 && $ENGINE == opensearch ]] && NEED_JAVA=21
[[ ${VERSION%%.*} -ge 9 && $ENGINE == elasticsearch ]] && NEED_JAVA=21
PIDFILE=$STATE/node.pid
LOG=$STATE/logs

log() { echo "[$ENGINE] $*" >&2; }

healthy() {
  curl -fsS -m 5 ${CURL_EXTRA[@]+"${CURL_EXTRA[@]}"} "$URL/_cluster/health?wait_for_status=yellow&timeout=1s" 2>/dev/null \
    | grep -qE '"status":"(yellow|green)"'
}

running_pid() {
  [[ -f "$PIDFILE" ]] || return 1
  local pid; pid=$(cat "$PIDFILE" 2>/dev/null || true)
  [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

# The oldest JDK new enough for the engine (OpenSearch 3 needs Java 21+, Elasticsearch 8 runs on
# 17+): the oldest supported one is what the engine was tested with most.
pick_java() {
  local need=$1 candidate v
  for candidate in ${ESQLOG_JAVA_HOME:-} $(ls -d /usr/lib/jvm/*/ 2>/dev/null | sort -V) ${JAVA_HOME:-}; do
    [[ -x "$candidate/bin/java" ]] || continue
    v=$("$candidate/bin/java" -version 2>&1 | sed -nE 's/.*version "([0-9]+).*/\1/p' | head -1)
    if [[ -n "$v" && "$v" -ge "$need" ]]; then echo "${candidate%/}"; return 0; fi
  done
  return 1
}

# The distribution's zip in the local Maven repository, and its address on Maven Central.
ZIP_NAME=$GROUP_PATH/$VERSION/$(basename "$GROUP_PATH")-$VERSION.zip
CENTRAL=https://repo.maven.apache.org/maven2

# True when the distribution is cached here or Maven Central serves it (it has not served
# every release on every day): the engine matrix asks before it adds the oldest releases.
served() {
  [[ -s $M2/$ZIP_NAME ]] || curl -fsSI -m 20 "$CENTRAL/$ZIP_NAME" >/dev/null 2>&1
}

fetch_distribution() {
  local zip=$M2/$ZIP_NAME
  if [[ ! -s "$zip" ]]; then
    log "downloading $ARTIFACT from Maven Central (cached in $M2)"
    if command -v mvn >/dev/null; then
      mvn -q -B dependency:get -Dartifact="$ARTIFACT" -Dtransitive=false >&2
    else
      mkdir -p "$(dirname "$zip")"
      curl -fsS -o "$zip.part" "$CENTRAL/$ZIP_NAME"
      mv "$zip.part" "$zip"
    fi
  fi
  local home=$CACHE_ROOT/$ENGINE-$VERSION
  if [[ ! -x "$home/$BIN" ]]; then
    log "unpacking $(basename "$zip") into $CACHE_ROOT"
    mkdir -p "$CACHE_ROOT"
    local tmp; tmp=$(mktemp -d "$CACHE_ROOT/.unpack.XXXXXX")
    unzip -q "$zip" -d "$tmp"
    rm -rf "$home"
    mv "$tmp"/* "$home"
    rmdir "$tmp"
  fi
  assemble_modules "$home" >&2
  echo "$home"
}

# OpenSearch 2.x integ-test distributions ship transport-netty4 alone, while the clusters
# users run have Painless and the common analyzers (3.x distributions ship both). Those two
# modules are assembled here from their Maven Central jars, with the descriptors the 3.x
# distributions write.
maven_jar() {  # group artifact version -> the jar, fetched once into the local repository
  local path=$M2/${1//.//}/$2/$3/$2-$3.jar
  if [[ ! -s "$path" ]]; then
    mkdir -p "$(dirname "$path")"
    curl -fsS -o "$path.part" "https://repo.maven.apache.org/maven2/${1//.//}/$2/$3/$2-$3.jar"
    mv "$path.part" "$path"
  fi
  echo "$path"
}

plugin_class() {  # jar pattern -> the plugin class it holds (its name changed in 3.0)
  unzip -Z1 "$1" | grep -E "$2" | head -n 1 | sed 's/\.class$//; s|/|.|g'
}

module_descriptor() {  # name classname description extended -> plugin-descriptor.properties
  printf '%s\n' "description=$3" "version=$VERSION" "name=$1" "classname=$2" "java.version=11" \
    "opensearch.version=$VERSION" "custom.foldername=" "extended.plugins=$4" \
    "has.native.controller=false"
}

assemble_modules() {
  local home=$1 dir jar
  [[ $ENGINE == opensearch && ! -d "$home/modules/lang-painless" ]] || return 0
  log "adding the lang-painless and analysis-common modules from Maven Central"
  dir=$home/modules/lang-painless; mkdir -p "$dir"
  for jar in org.opensearch.plugin:lang-painless:$VERSION \
             org.opensearch.plugin:opensearch-scripting-painless-spi:$VERSION \
             org.antlr:antlr4-runtime:4.13.1 org.ow2.asm:asm:9.7 org.ow2.asm:asm-util:9.7 \
             org.ow2.asm:asm-tree:9.7 org.ow2.asm:asm-commons:9.7 org.ow2.asm:asm-analysis:9.7; do
    IFS=: read -r g a v <<< "$jar"; cp "$(maven_jar "$g" "$a" "$v")" "$dir/"
  done
  module_descriptor lang-painless \
    "$(plugin_class "$dir/lang-painless-$VERSION.jar" '^org/opensearch/painless/Painless(Module)?Plugin.class$')" \
    "An easy, safe and fast scripting language for OpenSearch" "" > "$dir/plugin-descriptor.properties"
  printf '%s\n' 'grant {' '  permission java.lang.RuntimePermission "createClassLoader";' \
    '  permission java.lang.RuntimePermission "getClassLoader";' '};' > "$dir/plugin-security.policy"
  dir=$home/modules/analysis-common; mkdir -p "$dir"
  cp "$(maven_jar org.opensearch.plugin analysis-common "$VERSION")" "$dir/"
  module_descriptor analysis-common \
    "$(plugin_class "$dir/analysis-common-$VERSION.jar" '^org/opensearch/analysis/common/CommonAnalysis(Module)?Plugin.class$')" \
    'Adds "built in" analyzers to OpenSearch.' lang-painless > "$dir/plugin-descriptor.properties"
}

# The esqlog-terms plugin, built as its zip for this exact distribution and installed with the
# engine's own plugin tool (scripts/engines/build-plugin.sh), as a user installs it
# (docs/plugin.md); a build failure leaves the node without it.
install_plugin() {
  local home=$1
  if [[ ${ESQLOG_ENGINE_PLUGIN:-1} == 0 ]]; then
    if [[ -d "$home/plugins/esqlog-terms" ]]; then
      ES_JAVA_HOME="$java_home" OPENSEARCH_JAVA_HOME="$java_home" \
        "$home/bin/$ENGINE-plugin" remove esqlog-terms >/dev/null 2>&1 || rm -rf "$home/plugins/esqlog-terms"
      rm -f "$home/.esqlog-terms.installed"
      log "esqlog-terms plugin removed"
    fi
    return 0
  fi
  if "$(dirname "$0")/build-plugin.sh" "$ENGINE" "$home"; then
    PLUGIN_ARGS=(-Eesqlog.terms.postings_cache_size="${ESQLOG_ENGINE_TERMS_CACHE:-5%}")
  else
    log "esqlog-terms plugin not built: starting without it"
  fi
}
PLUGIN_ARGS=()

# Both engines refuse to run as root; a locked system account runs the node instead.
as_node_user() {
  if [[ $(id -u) -eq 0 ]]; then
    id "$RUN_USER" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$RUN_USER"
    runuser -u "$RUN_USER" -- "$@"
  else
    "$@"
  fi
}

start() {
  if pid=$(running_pid) && healthy; then
    log "already running (pid $pid)"
    echo "$URL"; return 0
  fi
  if healthy; then
    echo "[$ENGINE] port $HTTP_PORT already serves a cluster that this script did not start;" \
         "stop it or set ESQLOG_${ENGINE^^}_PORT" >&2
    exit 1
  fi
  local home java_home need=$NEED_JAVA
  java_home=$(pick_java $need) || { log "no Java >= $need found under /usr/lib/jvm; set ESQLOG_JAVA_HOME"; exit 1; }
  # Nodes of one distribution start in parallel (the test nodes and the three-node cluster) and
  # share its folder: one at a time unpacks it, installs the plugin and creates the keystore,
  # which each node would otherwise create at start-up, racing on config/*.keystore.tmp.
  mkdir -p "$CACHE_ROOT"
  exec 8>"$CACHE_ROOT/.$ENGINE-$VERSION.lock"
  flock 8
  home=$(fetch_distribution)
  install_plugin "$home"
  if [[ ! -f "$home/config/$ENGINE.keystore" ]]; then
    ES_JAVA_HOME="$java_home" OPENSEARCH_JAVA_HOME="$java_home" \
      "$home/bin/$ENGINE-keystore" create >/dev/null 2>&1 || log "could not create the keystore"
  fi
  flock -u 8
  if [[ ${ESQLOG_ENGINE_KEEP_DATA:-0} == 1 && -d "$STATE/data" ]]; then
    rm -rf "$STATE/tmp" "$LOG"; log "keeping the data of the previous run"
  else
    rm -rf "$STATE"
  fi
  mkdir -p "$STATE/data" "$LOG" "$STATE/tmp"
  if [[ $(id -u) -eq 0 ]]; then
    id "$RUN_USER" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$RUN_USER"
    chown -R "$RUN_USER" "$STATE" "$home"
    [[ -n "$ES_CONF" ]] && chown -R "$RUN_USER" "$ES_CONF"
    chmod 755 "$STATE_ROOT"
  fi
  local discovery
  read -r -a discovery <<< "${ESQLOG_ENGINE_DISCOVERY:--Ediscovery.type=single-node}"
  local common=(-d -p "$PIDFILE"
    "${discovery[@]}" -Enetwork.host=127.0.0.1
    -Ehttp.port="$HTTP_PORT" -Etransport.port="$TRANSPORT_PORT"
    -Epath.data="$STATE/data" -Epath.logs="$LOG"
    -Ecluster.name="${ESQLOG_ENGINE_CLUSTER_NAME:-esqlog-$ENGINE}"
    -Enode.name="${ESQLOG_ENGINE_NODE_NAME:-esqlog-$ENGINE-1}"
    -Ecluster.routing.allocation.disk.threshold_enabled=false)
  local extra=() conf_env=()
  if [[ $ENGINE == elasticsearch && -z "$ES_CONF" ]]; then
    extra=(-Expack.security.enabled=false)
  fi
  [[ -n "$ES_CONF" ]] && conf_env=(ES_PATH_CONF="$ES_CONF")
  log "starting $ENGINE $VERSION on $URL (Java $(basename "$java_home"), heap $HEAP)"
  local t0=$SECONDS
  as_node_user env ES_JAVA_HOME="$java_home" OPENSEARCH_JAVA_HOME="$java_home" \
    ES_JAVA_OPTS="-Xms$HEAP -Xmx$HEAP" OPENSEARCH_JAVA_OPTS="-Xms$HEAP -Xmx$HEAP" \
    ES_TMPDIR="$STATE/tmp" OPENSEARCH_TMPDIR="$STATE/tmp" ${conf_env[@]+"${conf_env[@]}"} \
    "$home/$BIN" "${common[@]}" "${extra[@]}" ${PLUGIN_ARGS[@]+"${PLUGIN_ARGS[@]}"} \
    ${ESQLOG_ENGINE_EXTRA_ARGS:-} > "$LOG/console.log" 2>&1 || {
      log "failed to start; last lines of $LOG:"; tail -n 40 "$LOG/console.log" >&2; exit 1; }
  while ! healthy; do
    if (( SECONDS - t0 > START_TIMEOUT )); then
      log "not healthy after ${START_TIMEOUT}s; last lines of the log:"
      tail -n 40 "$LOG"/*.log >&2 || true
      stop >/dev/null 2>&1 || true
      exit 1
    fi
    if [[ -f "$PIDFILE" ]] && ! running_pid >/dev/null; then
      log "node exited during start-up; last lines of the log:"
      tail -n 40 "$LOG"/*.log >&2 || true
      exit 1
    fi
    sleep 1
  done
  log "healthy after $((SECONDS - t0))s"
  echo "$URL"
}

stop() {
  local pid
  if pid=$(running_pid); then
    kill "$pid"
    for _ in $(seq 60); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
    log "stopped (pid $pid)"
  else
    log "not running"
  fi
  rm -f "$PIDFILE"
}

# A command-line tool of the distribution (elasticsearch-users, ...) with the right Java.
tool() {
  local home java_home need=$NEED_JAVA name=${1:-} conf_env=(); shift || true
  [[ "$name" =~ ^[a-z-]+$ ]] || usage
  home=$(fetch_distribution)
  java_home=$(pick_java $need) || { log "no Java >= $need found under /usr/lib/jvm"; exit 1; }
  [[ -n "$ES_CONF" ]] && conf_env=(ES_PATH_CONF="$ES_CONF")
  env ES_JAVA_HOME="$java_home" OPENSEARCH_JAVA_HOME="$java_home" \
    ${conf_env[@]+"${conf_env[@]}"} "$home/bin/$name" "$@"
}

case "$ACTION" in
  start) start ;;
  home) fetch_distribution ;;
  tool) shift 2; tool "$@" ;;
  stop) stop ;;
  status) if pid=$(running_pid) && healthy; then log "running (pid $pid) at $URL"; else log "not running"; exit 1; fi ;;
  url) echo "$URL" ;;
  served) served ;;
  *) usage ;;
esac
