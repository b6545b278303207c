"""Where a search through ``esqlog.wrap`` spends the time the same body sent alone does not.

    python -m scripts.bench.wrapper_gap --url http://127.0.0.1:19260 \
        --calibration /work/bench/cal/go-1-np.json \
        --queries /work/bench/corpora/go/queries.jsonl --n 300 --warm 300 [--ref ad23700]

Three systems over the same texts and the same client, interleaved in a rotating order
(so drift and the machine's load hit all alike): ``match`` (the plain match), ``prebuilt``
(the exact call the wrapper makes of the client for that text, ``search`` or, for a search
sent per shard, ``msearch``: captured beforehand by a wrapper of its own, so that the
measured one meets the timed texts as new ones, and sent through the same client) and
``wrapped`` (``esqlog.wrap(client, calibration)`` with no other argument, as an application
searches). Each call records its wall time, the thread's CPU time, the engine's ``took``,
the time inside the connection (the HTTP round trip, from the client's transport), the time
the garbage collector ran and how many requests reached the transport. ``wrapped`` minus
``prebuilt`` is what the wrapper costs beyond the engine's own answer; the columns say
whether it is CPU, the collector, the wire or the engine.

``--select all``: the wrapper made with ``IdentifierSettings(select="all")`` (every
compound of each word, whole words kept on the nodes) instead of no argument. ``--ref
REF``: the same systems in a second worker process running REF's esqlog (``git
archive``d as scripts/bench/plan_time.py does), the two workers taking turns a batch of
texts at a time, so ``wrapped`` of both trees is compared within one run. ``--profile N``:
afterwards, N wrapped searches of this tree under cProfile (wall clock), the top entries
by cumulative and by own time.
"""

from __future__ import annotations

import argparse
import copy
import cProfile
import functools
import gc
import io
import json
import os
import pstats
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from scripts.bench.harness import add_out, add_url, append_jsonl, percentile
from scripts.bench.plan_time import _extract

SYSTEMS = ("match", "prebuilt", "wrapped")
COLUMNS = ("wall", "cpu", "client", "http", "took", "gc", "requests")


class _Meter:
    """Counters the timed calls read: the connection's time and requests, the collector's."""

    def __init__(self, client: Any) -> None:
        self.http = 0.0
        self.client = 0.0  # inside the client's own search (the whole call, but for wrapped)
        self.requests = 0
        self.gc = 0.0
        self._gc_started = 0.0
        gc.callbacks.append(self._on_gc)
        for connection in client.transport.connection_pool.connections:
            connection.perform_request = self._timed(connection.perform_request)

    def _timed(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.http += time.perf_counter() - started
                self.requests += 1

        return call

    def _on_gc(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._gc_started = time.perf_counter()
        else:
            self.gc += time.perf_counter() - self._gc_started

    def measure(self, fn: Callable[[], Any]) -> dict[str, float]:
        http, requests, collected, client = self.http, self.requests, self.gc, self.client
        cpu, wall = time.thread_time(), time.perf_counter()
        answer = fn()
        wall, cpu = time.perf_counter() - wall, time.thread_time() - cpu
        inside = self.client - client
        took = answer.get("took", 0) if isinstance(answer, dict) else 0
        return {
            "wall": wall * 1000,
            "cpu": cpu * 1000,
            "client": inside * 1000 if inside else wall * 1000,
            "took": float(took),
            "http": (self.http - http) * 1000,
            "gc": (self.gc - collected) * 1000,
            "requests": float(self.requests - requests),
        }


def _setup(args: argparse.Namespace) -> tuple[Any, Any, Any, list[str], list[str]]:
    from opensearchpy import OpenSearch

    import esqlog
    from esqlog.calibration.files import load_calibration
    from esqlog.evaluation.corpus import load_queries
    from esqlog.identifiers.settings import IdentifierSettings

    cal = load_calibration(args.calibration)
    client = OpenSearch(hosts=[args.url], timeout=120)
    wrapped = (
        esqlog.wrap(client, cal, identifiers=IdentifierSettings(select=args.select))
        if args.select
        else esqlog.wrap(client, cal)
    )
    every = list(dict.fromkeys(q.text for q in load_queries(args.queries)))
    return cal, client, wrapped, every[: args.n], every[args.n : args.n + args.warm]


def _captured(wrapped: Any, index: str, body: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The client method (``search``, or ``msearch`` for a search sent per shard) and the
    keywords the wrapper hands it for this body."""
    from esqlog.engine.steps import ClientSearch, drive
    from esqlog.wrapper.search import search_plan

    sent: list[tuple[str, dict[str, Any]]] = []

    def perform(step: Any) -> Any:
        if isinstance(step, ClientSearch):
            sent.append((step.method, copy.deepcopy(dict(step.kwargs))))
        return wrapped._perform(step)

    core = wrapped.esqlog_core
    drive(search_plan(core, (), {"index": index, "body": copy.deepcopy(body)}, None), perform)
    if len(sent) != 1:
        raise SystemExit(f"the wrapper sent {len(sent)} searches for one text, not 1")
    return sent[0]


def worker(args: argparse.Namespace) -> None:
    """One tree's systems, served over stdin/stdout: "A B" runs texts A..B-1 and answers one
    JSON line of rows (system -> column -> value), as scripts/bench/plan_time.py's workers."""
    import esqlog

    cal, client, wrapped, texts, warming = _setup(args)
    meter = _Meter(client)
    perform = wrapped._perform

    def timed_perform(step: Any) -> Any:  # the wrapper's call of the client's own search
        started = time.perf_counter()
        try:
            return perform(step)
        finally:
            meter.client += time.perf_counter() - started

    wrapped._perform = timed_perform

    def body(text: str) -> dict[str, Any]:
        return {"query": {"match": {cal.field: text}}, "size": args.size, "_source": False}

    prebuilt: dict[str, tuple[str, dict[str, Any]]] = {}

    def replay(text: str) -> Callable[[], Any]:
        """The captured call, its keywords copied now (the client may change them)."""
        method, kwargs = prebuilt[text]
        return functools.partial(getattr(client, method), **copy.deepcopy(kwargs))

    systems: dict[str, Callable[[str], Any]] = {
        "match": lambda t: client.search(index=cal.index, body=body(t)),
        "prebuilt": lambda t: replay(t)(),
        "wrapped": lambda t: wrapped.search(index=cal.index, body=body(t)),
    }
    # captured by a wrapper of their own: the measured one meets the timed texts as new ones
    # (its memory of recent words holds only the warm-up texts', as an application's would)
    capturer = _setup(args)[2]
    for text in [*texts, *warming]:
        prebuilt[text] = _captured(capturer, cal.index, body(text))
    del capturer
    for text in warming:
        for name in SYSTEMS:
            systems[name](text)
    print(json.dumps({"esqlog": str(Path(esqlog.__file__).parent)}), flush=True)
    turn = 0
    for line in sys.stdin:
        a, b = (int(x) for x in line.split())
        rows = []
        for text in texts[a:b]:
            order = SYSTEMS[turn % 3 :] + SYSTEMS[: turn % 3]
            turn += 1
            row: dict[str, dict[str, float]] = {}
            for name in order:
                if name == "prebuilt":  # the copy the client gets is made outside the timing
                    row[name] = meter.measure(replay(text))
                else:
                    row[name] = meter.measure(functools.partial(systems[name], text))
            rows.append(row)
        print(json.dumps({"rows": rows}), flush=True)
    if args.profile:
        _profile(wrapped, cal, texts[: args.profile], body)


def _profile(wrapped: Any, cal: Any, texts: list[str], body: Callable[[str], Any]) -> None:
    profile = cProfile.Profile(time.perf_counter)
    profile.enable()
    for text in texts:
        wrapped.search(index=cal.index, body=body(text))
    profile.disable()
    out = io.StringIO()
    stats = pstats.Stats(profile, stream=out)
    stats.sort_stats("cumulative").print_stats(45)
    stats.sort_stats("tottime").print_stats(30)
    print(out.getvalue(), file=sys.stderr, flush=True)


class _Side:
    """A worker process in ``tree`` (None: this checkout); see plan_time._Side."""

    def __init__(self, args: argparse.Namespace, tree: str | None) -> None:
        import subprocess

        cmd = [sys.executable, "-m", "scripts.bench.wrapper_gap", "--worker", "--url", args.url]
        cmd += ["--calibration", str(args.calibration.resolve())]
        cmd += ["--queries", str(args.queries.resolve()), "--n", str(args.n)]
        cmd += ["--warm", str(args.warm), "--size", str(args.size), "--select", args.select]
        cmd += ["--profile", str(args.profile if tree is None else 0)]
        self.process = subprocess.Popen(
            cmd, cwd=tree, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        self.info = self._answer()
        self.rows: list[dict[str, dict[str, float]]] = []

    def _answer(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            sys.exit(f"a worker failed (exit {self.process.wait()}): see its error above")
        found: dict[str, Any] = json.loads(line)
        return found

    def run(self, a: int, b: int) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(f"{a} {b}\n")
        self.process.stdin.flush()
        self.rows += self._answer()["rows"]

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait()


def _report(name: str, side: _Side) -> dict[str, Any]:
    """Print one tree's table: each system's p50 / p95 per column, and the ratios."""
    print(f"{name}: esqlog {side.info['esqlog']}, {len(side.rows)} texts x 3 systems")
    print(f"  {'system':9s}" + "".join(f" {c + ' p50':>12s} {'p95':>7s}" for c in COLUMNS))
    out: dict[str, Any] = {}
    for system in SYSTEMS:
        cols = {}
        for c in COLUMNS:
            values = [row[system][c] for row in side.rows]
            cols[c] = (percentile(values, 50), percentile(values, 95))
        out[system] = cols
        print(f"  {system:9s}" + "".join(f" {cols[c][0]:12.3f} {cols[c][1]:7.3f}" for c in COLUMNS))
    wall = {s: out[s]["wall"] for s in SYSTEMS}
    for a, b in (("prebuilt", "match"), ("wrapped", "match"), ("wrapped", "prebuilt")):
        print(f"  {a} / {b}: p50 {wall[a][0] / wall[b][0]:.3f}  p95 {wall[a][1] / wall[b][1]:.3f}")
    gap = [row["wrapped"]["wall"] - row["prebuilt"]["wall"] for row in side.rows]
    print(f"  wrapped - prebuilt, per text: median {percentile(gap, 50):.3f} ms")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_url(parser)
    parser.add_argument("--calibration", type=Path, required=True)
    parser.add_argument("--queries", type=Path, required=True)
    parser.add_argument("--n", type=int, default=300, help="timed query texts")
    parser.add_argument("--warm", type=int, default=300, help="untimed texts sent first")
    parser.add_argument("--size", type=int, default=10)
    parser.add_argument("--batch", type=int, default=20, help="texts a side runs per turn")
    parser.add_argument("--ref", default="", help="also run this git ref's esqlog, in turn")
    parser.add_argument("--profile", type=int, default=0, help="then profile N wrapped searches")
    parser.add_argument(
        "--select", default="", help="wrap with IdentifierSettings(select=...), e.g. all"
    )
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    add_out(parser, None)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return 0
    with tempfile.TemporaryDirectory(prefix="wrapper-gap-") as tmp:
        sides = {"this": _Side(args, None)}
        if args.ref:
            sides[args.ref] = _Side(args, _extract(args.ref, tmp))
        try:
            order = list(sides.values())
            for turn, a in enumerate(range(0, args.n, args.batch)):
                for side in order[turn % len(order) :] + order[: turn % len(order)]:
                    side.run(a, min(a + args.batch, args.n))
        finally:
            for side in sides.values():
                side.close()
    load = os.getloadavg()
    print(
        f"{args.calibration.name}: {args.n} texts after {args.warm} warm-up texts, "
        f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
    )
    got = {name: _report(name, side) for name, side in sides.items()}
    if args.ref:
        this, ref = got["this"], got[args.ref]
        for s in SYSTEMS:
            print(
                f"this / {args.ref} {s}: p50 {this[s]['wall'][0] / ref[s]['wall'][0]:.3f}"
                f"  p95 {this[s]['wall'][1] / ref[s]['wall'][1]:.3f}"
            )
    if args.out is not None:
        append_jsonl(
            args.out,
            {
                "calibration": str(args.calibration),
                "n": args.n,
                "warm": args.warm,
                "load": load,
                "sides": got,
            },
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
