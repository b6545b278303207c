#!/usr/bin/env bash
# A secured Elasticsearch node for the security tests: x-pack security on, TLS on HTTP with a
# self-signed CA made by openssl (node certificate for 127.0.0.1 and localhost), a file-realm
# superuser and a limited user, trial license (API keys and OAuth2 tokens).
#
#   scripts/engines/secure-elasticsearch.sh start|stop
#
# Settings (environment):
#   ESQLOG_SECURE_PORT              HTTP port (default 19211; transport is port + 100)
#   ESQLOG_SECURE_DIR               state folder (default ${TMPDIR:-/tmp}/esqlog-secure)
#   ESQLOG_SECURE_ADMIN_PASSWORD    password of the superuser "esqlog-admin" (required by start)
#   ESQLOG_SECURE_LIMITED_PASSWORD  password of "esqlog-limited" (monitor only, no index access)
#
# start prints two lines: the https URL and the path of the CA certificate (PEM).
#
# API keys live in the .security index, whose mapping needs three analysis components that the
# integ-test distribution lacks (it has no analysis-common module). A tiny test-only plugin
# (es-analysis-shim/, compiled here with the JDK's javac) supplies them. It goes into a private
# copy of the distribution (ESQLOG_SECURE_CACHE, unpacked from the same Maven zip), never into
# the one the shared test nodes run from. Without javac the node still starts, without API keys.
# The node runs through engine.sh with its own ESQLOG_ENGINE_DIR and ES_PATH_CONF (a copy of
# the distribution's config folder), so it never touches the shared test nodes.
set -euo pipefail

ACTION=${1:-}
HERE=$(cd "$(dirname "$0")" && pwd)
PORT=${ESQLOG_SECURE_PORT:-19211}
DIR=${ESQLOG_SECURE_DIR:-${TMPDIR:-/tmp}/esqlog-secure}
CONF=$DIR/config
CERTS=$CONF/certs
NETRC=$DIR/health.netrc

export ESQLOG_ENGINE_DIR=$DIR/engines
export ESQLOG_ELASTICSEARCH_PORT=$PORT
export ESQLOG_ES_PATH_CONF=$CONF
export ESQLOG_ENGINE_SCHEME=https
export ESQLOG_ENGINE_CURL_ARGS="--cacert $CERTS/ca.pem --netrc-file $NETRC"
export ESQLOG_ENGINE_HEAP=${ESQLOG_ENGINE_HEAP:-512m}
if [[ $(id -u) -eq 0 ]]; then default_cache=/var/cache/esqlog/engines-secure
else default_cache=$HOME/.cache/esqlog/engines-secure; fi
export ESQLOG_ENGINE_CACHE=${ESQLOG_SECURE_CACHE:-$default_cache}

log() { echo "[secure-elasticsearch] $*" >&2; }

make_certs() {
  mkdir -p "$CERTS"
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=esqlog test CA" \
    -keyout "$CERTS/ca.key" -out "$CERTS/ca.pem" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" \
    -keyout "$CERTS/node.key" -out "$CERTS/node.csr" 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n%s\n' \
    'extendedKeyUsage=serverAuth,clientAuth' > "$CERTS/node.ext"
  openssl x509 -req -in "$CERTS/node.csr" -CA "$CERTS/ca.pem" -CAkey "$CERTS/ca.key" \
    -CAcreateserial -days 2 -extfile "$CERTS/node.ext" -out "$CERTS/node.pem" 2>/dev/null
  rm -f "$CERTS/ca.key" "$CERTS/node.csr" "$CERTS/node.ext" "$CERTS/ca.srl"
}

# Compile and install the analysis shim plugin into the private distribution (once).
install_shim() {
  local home=$1 version=$2 plugin=$1/plugins/esqlog-analysis-shim javac="" build
  [[ -f "$plugin/esqlog-analysis-shim.jar" ]] && return 0
  for candidate in ${ESQLOG_JAVA_HOME:-} $(ls -d /usr/lib/jvm/*/ 2>/dev/null | sort -V) ${JAVA_HOME:-}; do
    if [[ -x "$candidate/bin/javac" && -x "$candidate/bin/jar" ]]; then javac=${candidate%/}/bin; break; fi
  done
  if [[ -z "$javac" ]]; then log "no javac found: API keys will not work on this node"; return 0; fi
  build=$(mktemp -d)
  "$javac/javac" -nowarn --release 17 -d "$build/classes" -cp "$home/lib/*" \
    "$HERE/es-analysis-shim/src/esqlog/shim/AnalysisShimPlugin.java"
  mkdir -p "$plugin"
  "$javac/jar" cf "$plugin/esqlog-analysis-shim.jar" -C "$build/classes" .
  cat > "$plugin/plugin-descriptor.properties" <<PROPS
description=Test-only analysis components for the security index (esqlog tests)
version=1.0.0
name=esqlog-analysis-shim
classname=esqlog.shim.AnalysisShimPlugin
java.version=17
elasticsearch.version=$version
PROPS
  rm -rf "$build"
}

start() {
  : "${ESQLOG_SECURE_ADMIN_PASSWORD:?set ESQLOG_SECURE_ADMIN_PASSWORD}"
  local limited=${ESQLOG_SECURE_LIMITED_PASSWORD:-$ESQLOG_SECURE_ADMIN_PASSWORD-limited}
  "$HERE/engine.sh" stop elasticsearch >/dev/null 2>&1 || true
  local home; home=$("$HERE/engine.sh" home elasticsearch)
  install_shim "$home" "${home##*-}"
  rm -rf "$DIR"; mkdir -p "$DIR"; chmod 755 "$DIR"
  cp -r "$home/config" "$CONF"
  rm -f "$CONF/elasticsearch.keystore"; : > "$CONF/users"; : > "$CONF/users_roles"
  make_certs
  cat >> "$CONF/elasticsearch.yml" <<'YAML'
# esqlog security tests
xpack.security.enabled: true
xpack.security.http.ssl.enabled: true
xpack.security.http.ssl.key: certs/node.key
xpack.security.http.ssl.certificate: certs/node.pem
xpack.security.http.ssl.certificate_authorities: [certs/ca.pem]
xpack.security.transport.ssl.enabled: false
xpack.security.authc.api_key.enabled: true
xpack.security.authc.token.enabled: true
xpack.license.self_generated.type: trial
YAML
  cat > "$CONF/roles.yml" <<'YAML'
esqlog_limited:
  cluster: [monitor]
  indices:
    - names: ["nothing-here-*"]
      privileges: [read]
YAML
  "$HERE/engine.sh" tool elasticsearch elasticsearch-keystore create >/dev/null
  "$HERE/engine.sh" tool elasticsearch elasticsearch-users useradd esqlog-admin \
    -p "$ESQLOG_SECURE_ADMIN_PASSWORD" -r superuser
  "$HERE/engine.sh" tool elasticsearch elasticsearch-users useradd esqlog-limited \
    -p "$limited" -r esqlog_limited
  ( umask 077; printf 'machine 127.0.0.1 login esqlog-admin password %s\n' \
      "$ESQLOG_SECURE_ADMIN_PASSWORD" > "$NETRC" )
  chmod -R a+rX "$CERTS"
  "$HERE/engine.sh" start elasticsearch | tail -n 1
  echo "$CERTS/ca.pem"
}

case "$ACTION" in
  start) start ;;
  stop) "$HERE/engine.sh" stop elasticsearch ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
