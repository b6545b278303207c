"""Calibrate time of ``--vocabulary`` alone vs ``--vocabulary --identifiers``, side by side.

    python -m scripts.bench.calibrate_identifiers_speed --url http://127.0.0.1:19200 \
        --index esqlog-bench-go-full-standard --rounds 2

Runs both back to back on the same index, alternating (``rounds`` pairs), and prints each
pair's seconds and ratio (the floor set for the mode: identifiers <= 1.5x vocabulary),
split into time inside engine requests and time in esqlog (parsing, the per-document hook,
the build).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

from esqlog.calibration.calibrate import calibrate_with_vocabulary
from esqlog.identifiers.calibrate import calibrate_identifiers
from scripts.bench.calibrate_speed import TimedEngine  # the same request timer, one definition
from scripts.bench.harness import add_url, engine_at

ENGINE_PID: int | None = None


def engine_cpu() -> float:
    """CPU seconds the engine's process has used (Linux /proc; 0 without --engine-pid).

    On a loaded machine wall clocks mostly measure the load; CPU seconds of the engine and
    of this process are what each calibrate costs, whatever else runs."""
    if ENGINE_PID is None:
        return 0.0
    fields = Path(f"/proc/{ENGINE_PID}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def timed(engine: TimedEngine, run: Any) -> tuple[float, float, float, float, Any]:
    """(wall s, s inside requests, this process's CPU s, the engine's CPU s, result)."""
    engine.request_seconds = 0.0
    started, cpu, engine_started = time.perf_counter(), time.process_time(), engine_cpu()
    out = run()
    return (
        time.perf_counter() - started,
        engine.request_seconds,
        time.process_time() - cpu,
        engine_cpu() - engine_started,
        out,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_url(parser)
    parser.add_argument("--index", default="esqlog-bench-go-full-standard")
    parser.add_argument("--field", default="body")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--engine-pid",
        type=int,
        default=None,
        help="The engine node's process id, to report its CPU seconds too.",
    )
    args = parser.parse_args()
    global ENGINE_PID
    ENGINE_PID = args.engine_pid
    base = engine_at(args.url, timeout=600)
    engine = TimedEngine(base.client)
    ratios = []
    for r in range(args.rounds):
        runs: dict[str, tuple[float, float, float, float, Any]] = {}
        order = ("vocabulary", "identifiers") if r % 2 == 0 else ("identifiers", "vocabulary")
        for name in order:  # alternate which goes first: caches and load drift cancel out
            runs[name] = timed(
                engine,
                lambda name=name: (
                    calibrate_with_vocabulary(engine, args.index, args.field)
                    if name == "vocabulary"
                    else calibrate_identifiers(engine, args.index, args.field)
                ),
            )
        (v_all, v_req, v_cpu, v_eng, _), (i_all, i_req, i_cpu, i_eng, found) = (
            runs["vocabulary"],
            runs["identifiers"],
        )
        ratios.append(i_all / v_all)
        print(
            json.dumps(
                {
                    "round": r,
                    "first": order[0],
                    "vocabulary_s": round(v_all, 2),
                    "vocabulary_requests_s": round(v_req, 2),
                    "vocabulary_cpu_s": round(v_cpu, 2),
                    "vocabulary_engine_cpu_s": round(v_eng, 2),
                    "identifiers_s": round(i_all, 2),
                    "identifiers_requests_s": round(i_req, 2),
                    "identifiers_cpu_s": round(i_cpu, 2),
                    "identifiers_engine_cpu_s": round(i_eng, 2),
                    "identifiers_build_s": round(found.build_seconds, 2),
                    "ratio": round(i_all / v_all, 3),
                    # CPU of this process plus the engine's: what each run costs,
                    # readable when other load stretches the wall clocks
                    "cpu_ratio": (
                        round((i_cpu + i_eng) / (v_cpu + v_eng), 3)
                        if ENGINE_PID is not None
                        else None
                    ),
                    "words": len(found.stats.words),
                }
            ),
            flush=True,
        )
    print(f"ratio median {statistics.median(ratios):.3f} over {len(ratios)} rounds")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
