"""The wrapper's client-side time per identifiers search, this checkout against a git ref.

    python -m scripts.bench.plan_time --url http://127.0.0.1:19260 \
        --calibration results/go.json --queries data/corpora/go/queries.jsonl \
        --n 300 --rounds 3 --ref main

What is timed: one search through ``esqlog.wrap(client, calibration)`` with no other
argument (mode auto -> identifiers; engine_query auto -> the esqlog-terms plugin when the
calibration records it), as ``client.search(index=..., body={"query": {"match": ...}})``,
with the wrapper's own search answered by a recorded answer of the engine instead of a
round trip (a search sent per shard in one ``_msearch``: that answer once per shard, as one
shard's): planning, the body, and the handling of the answer, nothing of the engine or
the wire. esqlog's own requests (resolving the index, the snapshot check, the clause limit,
asked once a minute or once a wrapper) do go to the engine; their time is subtracted and
their count printed. A calibration made before calibrate looked for the plugin records
nothing: ``--terms-plugin VERSION`` (default 1.5.0, the bench nodes') stands in for that
finding; ``--terms-plugin ''`` keeps the calibration's (spans where it found none).

Phases (p50 / p95 ms per search, of the thread's CPU time unless ``--clock wall``: on a
shared machine the wall time of a millisecond's work mostly measures the other processes):
``search`` (the whole client-side time), ``plan``
(esqlog.identifiers.query.plan_identifier_query), ``choose`` (the clause budget, within
plan), ``groups`` (the terms grouped per word, within plan), ``body`` (the plan's query
dict), ``json`` (the final body serialized as the client sends it, outside the wrapper) and
``again`` (the whole client-side time of the same search's next page, ``from`` 10: the same
text planned again, or its plan reused). The words a plan remembers across searches
(esqlog.identifiers.word_facts) are forgotten at the start of each round, so that every
round sees its texts' words as the first did.

Both sides run at once in two worker processes that take turns, a batch of texts at a time
(which side goes first alternates), so drift and the machine's load hit both alike; the
ref's ``esqlog`` is ``git archive``d into a temporary folder its worker runs in. Each side
also records a digest of every request it would send: the script prints how many differ
between the two sides and exits 1 when any does (a speed change must not change a body).
``json`` runs the same code on both sides: its ratio shows what is left of the noise.
``--cold MB``: before each timed search, write over MB of memory, as the engine's work
between two searches of an application evicts the CPU caches (a search through the wrapper
then costs 2-3x its warm time: docs/benchmarks/identifiers.md, 2026-12-07).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from scripts.bench.harness import add_out, add_url, append_jsonl, percentile

PHASES = ("search", "plan", "choose", "groups", "body", "json", "again")
#: --clock: the thread's CPU time (the work itself, whatever else the machine runs) or wall
CLOCKS = {"cpu": time.thread_time, "wall": time.perf_counter}
clock = time.thread_time


def shard_answer(answer: dict[str, Any]) -> dict[str, Any]:
    """The whole index's recorded answer as one shard's: what the engine answers a request
    of an msearch sent per shard (``preference=_shards:k``, esqlog.wrapper.fan_out)."""
    return {**answer, "_shards": {"total": 1, "successful": 1, "skipped": 0, "failed": 0}}


def recorded_answer(
    answer: dict[str, Any], one_shard: dict[str, Any], method: str, kwargs: dict[str, Any]
) -> dict[str, Any]:
    """The engine's answer to the wrapper's own ``method`` call, from recorded ones: the
    whole index's for a search, ``one_shard`` once per search of an msearch (its body holds
    a header line and a body line each).

    Why one shard's: the wrapper reads a per-shard answer from several shards as an index
    that moved (esqlog.wrapper.fan_out.index_moved); it would resolve the index again and
    search per shard a second time, and that is what would be timed."""
    if method != "msearch":
        return answer
    return {"responses": [one_shard] * (len(kwargs.get("body", [])) // 2)}


def _timer(acc: dict[str, float], label: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def timed(*args: Any, **kwargs: Any) -> Any:
        started = clock()
        try:
            return fn(*args, **kwargs)
        finally:
            acc[label] = acc.get(label, 0.0) + clock() - started

    return timed


def _instrument(acc: dict[str, float]) -> None:
    """Time the plan's parts where the module that calls them looks them up."""
    import esqlog.identifiers.query as query
    import esqlog.wrapper.identifier_search as search

    for module, name, label in (
        (search, "plan_identifier_query", "plan"),
        (query, "choose", "choose"),
        (query, "plugin_groups", "groups"),
        (query, "one_shard_groups", "groups"),
        (query, "group_words", "groups"),
    ):
        if hasattr(module, name):
            setattr(module, name, _timer(acc, label, getattr(module, name)))
    query.IdentifierPlan.query = _timer(  # type: ignore[method-assign]
        acc, "body", query.IdentifierPlan.query
    )


def worker(args: argparse.Namespace) -> None:
    """One side, served over stdin/stdout: "A B" runs query texts A..B-1 and answers one
    JSON line (per search the phases' milliseconds and a digest of its requests)."""
    from dataclasses import replace

    import numpy as np
    from opensearchpy import OpenSearch
    from opensearchpy.serializer import JSONSerializer

    import esqlog
    from esqlog.calibration.files import load_calibration
    from esqlog.engine.steps import ClientSearch, drive
    from esqlog.evaluation.corpus import load_queries
    from esqlog.wrapper import wrap
    from esqlog.wrapper.search import search_plan

    global clock
    clock = CLOCKS[args.clock]
    cal = load_calibration(args.calibration)
    if args.terms_plugin and cal.terms_plugin is None:
        cal = replace(cal, terms_plugin=args.terms_plugin)
    client = OpenSearch(hosts=[args.url], timeout=120)
    wrapped: Any = wrap(client, cal)
    core = wrapped.esqlog_core
    texts = list(dict.fromkeys(q.text for q in load_queries(args.queries)))[: args.n + 1]
    answer = client.search(
        index=cal.index,
        body={"query": {"match": {cal.field: texts[0]}}, "size": 10, "_source": False},
    )
    one_shard = shard_answer(answer)
    serializer = JSONSerializer()
    acc: dict[str, float] = {}
    _instrument(acc)
    sent: list[Any] = []

    def perform(step: Any) -> Any:
        if isinstance(step, ClientSearch):
            sent.append(step.kwargs)
            return recorded_answer(answer, one_shard, step.method, step.kwargs)
        started = clock()
        try:
            return wrapped._perform(step)  # esqlog's own request: not client-side time
        finally:
            acc["requests"] = acc.get("requests", 0.0) + clock() - started
            acc["request_count"] = acc.get("request_count", 0.0) + 1

    plans = getattr(core.identifiers, "_plans", None)  # the wrapper's kept plans, if any

    junk = np.zeros(args.cold * 131072, dtype=np.int64)  # --cold MB of 8-byte integers

    def one(text: str) -> tuple[dict[str, float], str]:
        acc.clear()
        sent.clear()
        if plans is not None:  # a text seen in an earlier round is new again
            plans.clear()
        body = {"query": {"match": {cal.field: text}}, "size": 10, "_source": False}
        np.add(junk, 1, out=junk)  # the caches as the engine's work leaves them (or none)
        started = clock()
        drive(search_plan(core, (), {"index": cal.index, "body": body}, None), perform)
        acc["search"] = clock() - started - acc.get("requests", 0.0)
        started = clock()
        encoded = [serializer.dumps(kw.get("body")) for kw in sent]
        acc["json"] = clock() - started
        row = {k: acc.get(k, 0.0) * 1000 for k in PHASES} | {
            "requests": acc.get("request_count", 0.0)
        }
        # the next page of the same search: the same text planned again
        np.add(junk, 1, out=junk)
        started = clock()
        requests = acc.get("requests", 0.0)
        drive(
            search_plan(core, (), {"index": cal.index, "body": body | {"from": 10}}, None), perform
        )
        row["again"] = (clock() - started - acc.get("requests", 0.0) + requests) * 1000
        digest = hashlib.sha256(
            json.dumps(
                [{k: v for k, v in kw.items() if k != "body"} for kw in sent],
                sort_keys=True,
                default=str,
            ).encode()
            + "".join(encoded).encode()
            + "".join(serializer.dumps(kw.get("body")) for kw in sent[len(encoded) :]).encode()
        ).hexdigest()
        return row, digest

    one(texts[0])  # warms the wrapper (its first resolution and clause-limit request)
    texts = texts[1:]
    print(
        json.dumps(
            {
                "esqlog": str(Path(esqlog.__file__).parent),
                "index": cal.index,
                "engine_query": core.engine_query.settings.engine_query,
                "texts": len(texts),
            }
        ),
        flush=True,
    )
    for line in sys.stdin:
        a, b = (int(x) for x in line.split())
        if a == 0:  # a new pass over the texts: the words' memory starts empty again
            for stats in getattr(core.identifiers, "stats", {}).values():
                if getattr(stats, "facts", None) is not None:
                    stats.facts.clear()
        done = [one(text) for text in texts[a:b]]
        print(
            json.dumps({"rows": [r for r, _ in done], "digests": [d for _, d in done]}), flush=True
        )


class _Side:
    """A worker process: in the ref's tree (its esqlog, this checkout's scripts) or here.

    ``python -m`` puts the current folder first on the import path, before PYTHONPATH and
    the editable install, so the folder a worker runs in decides which esqlog it imports."""

    def __init__(self, args: argparse.Namespace, tree: str | None) -> None:
        cmd = [
            sys.executable,
            "-m",
            "scripts.bench.plan_time",
            "--worker",
            "--url",
            args.url,
            "--calibration",
            str(args.calibration.resolve()),
            "--queries",
            str(args.queries.resolve()),
            "--n",
            str(args.n),
            "--terms-plugin",
            args.terms_plugin,
            "--clock",
            args.clock,
            "--cold",
            str(args.cold),
        ]
        self.process = subprocess.Popen(
            cmd, cwd=tree, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        self.info = self._answer()
        self.rows: list[dict[str, float]] = []
        self.digests: list[str] = []

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
        got = self._answer()
        self.rows += got["rows"]
        self.digests += got["digests"]

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait()


def _extract(ref: str, into: str) -> str:
    """The ref's esqlog package unpacked under ``into``, beside a copy of this checkout's
    scripts package (the same worker on both sides)."""
    archive = subprocess.run(["git", "archive", ref, "esqlog"], capture_output=True, check=False)
    if archive.returncode != 0:
        sys.exit(f"git archive {ref} failed: {archive.stderr.decode()[-500:]}")
    subprocess.run(["tar", "-x", "-C", into], input=archive.stdout, check=True)
    here = Path(__file__).resolve().parents[1]
    shutil.copytree(
        here, Path(into) / "scripts", ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
    )
    return into


def interleaved(args: argparse.Namespace, tree: str) -> tuple[_Side, _Side]:
    """(this checkout, the ref): both workers alive at once, taking turns a batch of texts
    at a time (which goes first alternates), ``rounds`` passes over the texts."""
    this, ref = _Side(args, None), _Side(args, tree)
    try:
        total = min(this.info["texts"], ref.info["texts"])
        turn = 0
        for _ in range(args.rounds):
            for a in range(0, total, args.batch):
                pair = (this, ref) if turn % 2 == 0 else (ref, this)
                for side in pair:
                    side.run(a, min(a + args.batch, total))
                turn += 1
    finally:
        this.close()
        ref.close()
    return this, ref


def _summary(rows: list[dict[str, float]]) -> dict[str, tuple[float, float]]:
    return {
        k: (percentile([r[k] for r in rows], 50), percentile([r[k] for r in rows], 95))
        for k in PHASES
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_url(parser)
    parser.add_argument("--calibration", type=Path, required=True)
    parser.add_argument("--queries", type=Path, required=True)
    parser.add_argument("--n", type=int, default=300, help="query texts per round")
    parser.add_argument("--rounds", type=int, default=3, help="passes over the texts")
    parser.add_argument(
        "--batch", type=int, default=20, help="texts one side runs before the other takes its turn"
    )
    parser.add_argument("--ref", default="main", help="the git ref to compare against")
    parser.add_argument(
        "--terms-plugin",
        default="1.5.0",
        help="the plugin version the calibration stands for when it recorded "
        "none ('': as recorded)",
    )
    parser.add_argument(
        "--clock",
        choices=sorted(CLOCKS),
        default="cpu",
        help="cpu: the thread's CPU time (default; steady on a loaded machine); wall: elapsed time",
    )
    parser.add_argument("--cold", type=int, default=0, help="MB written over before each search")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    add_out(parser, None)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return 0
    with tempfile.TemporaryDirectory(prefix="plan-time-") as tmp:
        this, ref = interleaved(args, _extract(args.ref, tmp))
    load = os.getloadavg()
    n = len(this.digests) // args.rounds
    differ = sum(a != b for a, b in zip(this.digests, ref.digests, strict=True))
    print(
        f"{this.info['index']}: {n} queries x {args.rounds} rounds per side, batches of "
        f"{args.batch} in turn, {args.clock} time, caches {'cold' if args.cold else 'warm'}, "
        f"engine_query {this.info['engine_query']} (ref: {ref.info['engine_query']}), "
        f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
    )
    print(f"ref esqlog: {ref.info['esqlog']}; this: {this.info['esqlog']}")
    got = {args.ref: _summary(ref.rows), "this": _summary(this.rows)}
    print(
        f"{'phase':8s} {args.ref + ' p50':>12s} {'this p50':>10s} {'ratio':>6s}   "
        f"{args.ref + ' p95':>12s} {'this p95':>10s} {'ratio':>6s}"
    )
    for k in PHASES:
        (a50, a95), (b50, b95) = got[args.ref][k], got["this"][k]
        print(
            f"{k:8s} {a50:12.3f} {b50:10.3f} {b50 / a50 if a50 else 0:6.2f}   "
            f"{a95:12.3f} {b95:10.3f} {b95 / a95 if a95 else 0:6.2f}"
        )
    requests = sum(row["requests"] for row in this.rows)
    print(f"esqlog's own requests during the timed searches (subtracted): {requests:.0f}")
    print(f"request bodies that differ from {args.ref}'s: {differ} of {len(this.digests)}")
    if args.out is not None:
        append_jsonl(
            args.out,
            {
                "index": this.info["index"],
                "ref": args.ref,
                "n": n,
                "clock": args.clock,
                "rounds": args.rounds,
                "load": load,
                "differ": differ,
                "phases": {name: {k: list(v) for k, v in s.items()} for name, s in got.items()},
            },
        )
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
