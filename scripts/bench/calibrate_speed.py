"""Calibrate timings on a real index: sampled vs exact h_tok, and where the time goes.

    python -m scripts.bench.calibrate_speed --url http://127.0.0.1:19200 \
        --index esqlog-bench-go-full-standard

Runs the sampled calibrate (default settings, several seeds), the exact one and the one that
also snapshots the vocabulary (``--vocabulary``), and splits
each run's wall clock into time inside engine requests (network + engine work) and time in
esqlog itself (parsing, counting), by timing every Engine.perform call.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from esqlog.calibration.calibrate import calibrate, calibrate_with_vocabulary
from esqlog.calibration.record import Calibration
from esqlog.engine.client import Engine
from esqlog.engine.steps import Request
from scripts.bench.harness import add_out, add_url, engine_at


class TimedEngine(Engine):
    """An Engine that adds up the wall time spent inside requests."""

    request_seconds = 0.0
    requests = 0

    def perform(self, request: Request) -> Any:
        started = time.perf_counter()
        try:
            return super().perform(request)
        finally:
            self.request_seconds += time.perf_counter() - started
            self.requests += 1


def timed(engine: TimedEngine, vocabulary: bool = False, **kwargs: Any) -> dict[str, Any]:
    engine.request_seconds, engine.requests = 0.0, 0
    started = time.perf_counter()
    cal: Calibration
    if vocabulary:
        cal, _ = calibrate_with_vocabulary(engine, **kwargs)
    else:
        cal = calibrate(engine, **kwargs)
    total = time.perf_counter() - started
    return {
        "h_tok": cal.h_tok,
        "low": cal.h_tok_low,
        "high": cal.h_tok_high,
        "q": cal.q,
        "docs": cal.live_docs,
        "seconds": total,
        "engine_seconds": engine.request_seconds,
        "esqlog_seconds": total - engine.request_seconds,
        "requests": engine.requests,
        "terms": cal.vocabulary_terms,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_url(parser)
    parser.add_argument("--index", required=True)
    parser.add_argument("--field", default="body")
    parser.add_argument("--seeds", default="1,2,3")
    add_out(parser, None)
    args = parser.parse_args()
    base = engine_at(args.url, timeout=300)
    engine = TimedEngine(base.client)
    exact = timed(engine, index=args.index, field_name=args.field, exact=True)
    rate = exact["docs"] / exact["seconds"]
    print(
        f"exact   h_tok={exact['h_tok']:.4f} {exact['seconds']:.1f} s ({rate:,.0f} docs/s; "
        f"engine {exact['engine_seconds']:.1f} s, esqlog {exact['esqlog_seconds']:.1f} s)"
    )
    vocab = timed(engine, vocabulary=True, index=args.index, field_name=args.field)
    print(
        f"vocabulary h_tok={vocab['h_tok']:.4f} {vocab['terms']:,} terms in "
        f"{vocab['seconds']:.1f} s ({vocab['docs'] / vocab['seconds']:,.0f} docs/s; engine "
        f"{vocab['engine_seconds']:.1f} s, esqlog {vocab['esqlog_seconds']:.1f} s)"
    )
    samples = []
    for seed in map(int, args.seeds.split(",")):
        run = timed(engine, index=args.index, field_name=args.field, seed=seed)
        run["error"] = run["h_tok"] - exact["h_tok"]
        samples.append(run)
        print(
            f"sampled seed={seed} h_tok={run['h_tok']:.4f} [{run['low']:.4f}, {run['high']:.4f}]"
            f" error {run['error']:+.4f} in {run['seconds']:.1f} s (engine "
            f"{run['engine_seconds']:.1f} s, esqlog {run['esqlog_seconds']:.1f} s)"
        )
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        summary = {"exact": exact, "vocabulary": vocab, "sampled": samples}
        args.out.write_text(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
