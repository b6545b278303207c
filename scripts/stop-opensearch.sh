#!/usr/bin/env bash
# Stop the local opensearch node that start-opensearch.sh started (and only that one).
exec "$(dirname "$0")/engines/engine.sh" stop opensearch
