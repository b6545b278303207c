#!/usr/bin/env bash
# Start a real local elasticsearch node on 127.0.0.1; prints its URL as the last line.
exec "$(dirname "$0")/engines/engine.sh" start elasticsearch
