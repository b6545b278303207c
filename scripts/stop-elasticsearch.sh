#!/usr/bin/env bash
# Stop the local elasticsearch node that start-elasticsearch.sh started (and only that one).
exec "$(dirname "$0")/engines/engine.sh" stop elasticsearch
