"""Scale: esqlog's costs at 10K / 100K / 1M documents of one real corpus
(docs/benchmarks/scale.md).

    python -m scripts.bench.scale --url http://127.0.0.1:19360 \
        --corpus data/corpora/mix --sizes 10000,100000,1000000 --shards 3 \
        --out results/scale.jsonl --work results/scale

The sizes are nested subsets of the same corpus (build it with
`scripts/corpora/build.py --corpus mix`): documents are ranked once, seeded, with the
gold documents of `--gold` sampled queries first and every other document after them in
a seeded shuffle; size N is the first N of that ranking. So every size answers the same
queries, and each size contains the smaller ones (the 10K subset is 10% gold documents,
the larger ones are ever closer to the corpus itself).

Per size, on one index of `--shards` shards (created by this script, `esqlog-scale-<N>`,
reused when it already holds N documents):
  * `esqlog calibrate` sampled, `--exact`, `--vocabulary --install-script`, and
    `--vocabulary --identifiers` (up to --identifiers-max documents): wall time and the
    peak RSS of the esqlog process (GNU time);
  * the snapshot's size on disk (vocab + idents .npz) and in memory (scale_probe.py);
  * the RSS of a fresh process with the native client, and with a wrapper (boost,
    identifiers) after its first search; the cold start of that wrapper: spawn to first
    answered search;
  * latency of every mode against native and NDCG@10 (one gold per query): each query
    runs through native and every mode in a rotating order, so drift and the load of
    other processes on the machine hit all of them alike. Rewritten searches run with
    dfs_query_then_fetch on several shards (the wrapper's default), native without.
The load average is recorded with every step: the machine is shared. One JSON line per
size goes to --out (appended); a table is printed at the end.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from esqlog.engine.paths import index_path
from esqlog.engine.steps import Request
from esqlog.evaluation.corpus import bulk_index_docs, create_corpus_index, load_queries
from esqlog.identifiers.settings import IdentifierSettings
from esqlog.wrapper import wrap
from scripts.bench.harness import add_out, add_url, append_jsonl, engine_at, percentile

HERE = Path(__file__).resolve().parent
ESQLOG = Path(sys.executable).with_name("esqlog")
CALIBRATIONS = {
    "sampled": [],
    "exact": ["--exact"],
    "vocabulary": ["--vocabulary", "--install-script"],
    "identifiers": ["--vocabulary", "--identifiers"],
}
MODES = ["boost", "script", "rerank", "identifiers"]
#: the identifiers mode through the esqlog-terms engine plugin (needs it on the node)
PLUGIN = "identifiers-plugin"


def load() -> list[float]:
    """1, 5 and 15 minute load averages, rounded."""
    return [round(x, 2) for x in os.getloadavg()]


def ranking(corpus: Path, n_gold: int, seed: int) -> tuple[dict[str, int], list[Any]]:
    """Rank of every document id, gold documents of the sampled queries first; the queries."""
    ids = []
    with (corpus / "docs.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                ids.append(json.loads(line)["id"])
    present = set(ids)
    queries = [q for q in load_queries(corpus / "queries.jsonl") if q.gold in present]
    rng = random.Random(seed)
    chosen = rng.sample(queries, min(n_gold, len(queries)))
    gold = [q.gold for q in chosen]
    gold_set = set(gold)
    rest = [i for i in ids if i not in gold_set]
    rng.shuffle(rest)
    return {did: r for r, did in enumerate(gold + rest)}, chosen


def subset_docs(corpus: Path, rank: dict[str, int], size: int) -> Any:
    """Stream the documents of rank < size, in file order."""
    with (corpus / "docs.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                doc = json.loads(line)
                if rank[doc["id"]] < size:
                    yield doc


def ensure_index(
    engine: Any, corpus: Path, rank: dict[str, int], size: int, shards: int
) -> dict[str, Any]:
    """Index the subset unless the index already holds exactly it; timings and store size."""
    index = f"esqlog-scale-{size}"
    want = min(size, len(rank))
    seconds = 0.0
    try:
        have = engine.perform(Request("GET", index_path(index, "_count")))["count"]
    except Exception:  # absent
        have = -1
    if have != want:
        print(f"[{size}] indexing {want} documents into {index} ({shards} shards)", flush=True)
        started = time.perf_counter()
        create_corpus_index(engine, index, shards=shards, replace=True)
        bulk_index_docs(engine, index, subset_docs(corpus, rank, size), chunk=2000)
        engine.perform(Request("POST", index_path(index, "_forcemerge"), {"max_num_segments": 1}))
        seconds = time.perf_counter() - started
    stats = engine.perform(Request("GET", index_path(index, "_stats", "store,docs")))
    stats = stats["_all"]["primaries"]
    return {
        "index": index,
        "docs": stats["docs"]["count"],
        "index_seconds": round(seconds, 1),
        "store_bytes": stats["store"]["size_in_bytes"],
    }


def run_timed(cmd: list[str]) -> tuple[float, int, str]:
    """Wall seconds, peak RSS (bytes) and stdout of one child process.

    The peak comes from GNU time (``/usr/bin/time -f %M``), not from os.wait4 here: a
    child forked from this process (about 300 MB with the corpus ranking) starts its
    life with this process's pages, and the kernel's high-water mark keeps them even
    after exec, so wait4 would report this process's size for every small child.
    """
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as rss:
        started = time.perf_counter()
        proc = subprocess.run(
            ["/usr/bin/time", "-f", "%M", "-o", rss.name, *cmd],
            stdout=subprocess.PIPE,
            text=True,
            check=False,
        )
        seconds = time.perf_counter() - started
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(cmd[:4])} ... failed with exit code {proc.returncode}")
        peak_kib = int(rss.read().strip().splitlines()[-1])
    return seconds, peak_kib * 1024, proc.stdout


def calibrations(
    url: str, index: str, work: Path, kinds: list[str], timeout: float
) -> dict[str, Any]:
    """Each calibration kind: seconds, peak RSS, and (with a snapshot) its files' size."""
    out: dict[str, Any] = {}
    for kind in kinds:
        flags = CALIBRATIONS[kind]
        target = work / f"{index}.{kind}.json"
        cmd = [
            str(ESQLOG),
            "calibrate",
            "--url",
            url,
            "--index",
            index,
            "--field",
            "body",
            "--timeout",
            str(timeout),
            "--no-progress",
            "--json",
            "--out",
            str(target),
            *flags,
        ]
        print(f"  calibrate {kind}", flush=True)
        seconds, peak, _ = run_timed(cmd)
        row: dict[str, Any] = {"seconds": round(seconds, 2), "peak_rss_bytes": peak, "load": load()}
        if flags:
            prefix = target.name.removesuffix(".json")
            for part in ("vocab", "idents"):
                files = sorted(work.glob(f"{prefix}.{part}.*.npz"))
                if files:
                    row[f"{part}_file_bytes"] = files[-1].stat().st_size
        out[kind] = row
    return out


def probes(
    url: str, index: str, calibration: Path, query: str, repeats: int, wrappers: list[str]
) -> dict[str, Any]:
    """Fresh processes: snapshot in memory, RSS of native and wrapped clients, cold starts.

    Each probe runs ``repeats`` times, interleaved (native, snapshot, boost, identifiers,
    native, ...); the median of each figure is kept, since one start on a loaded machine
    can wait on the scheduler for seconds.
    """
    runs: dict[str, list[dict[str, Any]]] = {}
    for _ in range(repeats):
        for what in ("native", "snapshot", *wrappers):
            cmd = [
                sys.executable,
                str(HERE / "scale_probe.py"),
                "--what",
                what,
                "--url",
                url,
                "--index",
                index,
                "--calibration",
                str(calibration),
                "--query",
                query,
            ]
            seconds, peak, stdout = run_timed(cmd)
            row = json.loads(stdout.strip().splitlines()[-1])
            row.update({"cold_start_seconds": round(seconds, 3), "peak_rss_bytes": peak})
            runs.setdefault(what, []).append(row)
    return {
        what: {
            key: (
                statistics.median(r[key] for r in rows)
                if isinstance(rows[0][key], (int, float))
                else rows[0][key]
            )
            for key in rows[0]
        }
        | {"repeats": len(rows)}
        for what, rows in runs.items()
    }


def ndcg10(hits: list[dict[str, Any]], gold: str) -> float:
    """NDCG@10 with one relevant document: 1/log2(rank+1) when it is in the top 10."""
    for rank, hit in enumerate(hits[:10], start=1):
        if hit["_id"] == gold:
            return 1.0 / math.log2(rank + 1)
    return 0.0


def latency_quality(
    client: Any, index: str, calibration: Path, queries: list[Any], warm: int, modes: list[str]
) -> dict[str, Any]:
    """Native and every mode per query, interleaved; p50/p95 ms, ratios, NDCG@10."""
    systems: dict[str, Any] = {"native": client}
    for mode in modes:
        systems[mode] = (
            wrap(
                client,
                calibration,
                mode="identifiers",
                identifiers=IdentifierSettings(engine_query="plugin"),
            )
            if mode == PLUGIN
            else wrap(client, calibration, mode=mode)
        )
    names = list(systems)
    times: dict[str, list[float]] = {n: [] for n in names}
    gains: dict[str, list[float]] = {n: [] for n in names}
    load_before = load()
    for i, q in enumerate(queries):
        body = {"query": {"match": {"body": q.text}}, "size": 10, "_source": False}
        for name in names[i % len(names) :] + names[: i % len(names)]:
            started = time.perf_counter()
            hits = systems[name].search(index=index, body=body)["hits"]["hits"]
            elapsed = (time.perf_counter() - started) * 1000.0
            if i >= warm:
                times[name].append(elapsed)
                gains[name].append(ndcg10(hits, q.gold))
    base50 = statistics.median(times["native"])
    base95 = percentile(times["native"], 95)
    rows = {}
    for name in names:
        p50, p95 = statistics.median(times[name]), percentile(times[name], 95)
        rows[name] = {
            "p50_ms": round(p50, 2),
            "p95_ms": round(p95, 2),
            "p50_ratio": round(p50 / base50, 3),
            "p95_ratio": round(p95 / base95, 3),
            "ndcg10": round(statistics.fmean(gains[name]), 4),
        }
    return {
        "queries": len(queries) - warm,
        "load_before": load_before,
        "load_after": load(),
        "systems": rows,
    }


def measure(
    args: argparse.Namespace,
    engine: Any,
    client: Any,
    rank: dict[str, int],
    queries: list[Any],
    size: int,
) -> dict[str, Any]:
    """Every figure at one size."""
    row: dict[str, Any] = {
        "size": size,
        "shards": args.shards,
        "load_start": load(),
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    row.update(ensure_index(engine, args.corpus, rank, size, args.shards))
    index = row["index"]
    idents = args.identifiers_max is None or size <= args.identifiers_max
    modes = args.modes if idents else [m for m in args.modes if not m.startswith("identifiers")]
    if not idents:
        row["skipped"] = (
            f"identifiers calibration and mode (size above --identifiers-max "
            f"{args.identifiers_max})"
        )
    kinds = [k for k in args.kinds.split(",") if idents or k != "identifiers"]
    row["calibrate"] = calibrations(args.url, index, args.work, kinds, args.timeout)
    cal = args.work / f"{index}.{'identifiers' if idents else 'vocabulary'}.json"
    wrappers = ["boost", "identifiers"] if idents else ["boost"]
    row["probes"] = probes(args.url, index, cal, queries[0].text, args.repeats, wrappers)
    print("  latency and NDCG@10", flush=True)
    row["search"] = latency_quality(
        client, index, cal, queries[: args.queries + args.warm], args.warm, modes
    )
    row["load_end"] = load()
    return row


def _get(row: dict[str, Any], path: str) -> Any:
    """row["a"]["b"]... for the dotted path "a.b...", None when a part is missing."""
    value: Any = row
    for key in path.split("."):
        value = value.get(key) if isinstance(value, dict) else None
    return value


MIB = 1024 * 1024
#: (label, dotted path into a size's row, divisor, format) of each line of the table
TABLE = [
    ("documents", "docs", 1, ",.0f"),
    ("index store MiB", "store_bytes", MIB, ".0f"),
    *[
        line
        for kind in CALIBRATIONS
        for line in (
            (f"calibrate {kind} s", f"calibrate.{kind}.seconds", 1, ".1f"),
            ("  peak RSS MiB", f"calibrate.{kind}.peak_rss_bytes", MIB, ".0f"),
        )
    ],
    ("vocab file MiB", "calibrate.vocabulary.vocab_file_bytes", MIB, ".2f"),
    ("idents file MiB", "calibrate.identifiers.idents_file_bytes", MIB, ".2f"),
    ("vocab in memory MiB", "probes.snapshot.vocabulary_rss_bytes", MIB, ".1f"),
    ("idents in memory MiB", "probes.snapshot.identifier_rss_bytes", MIB, ".1f"),
    ("vocab+idents in memory MiB", "probes.snapshot.snapshot_rss_bytes", MIB, ".1f"),
    *[
        (f"RSS {w} client MiB", f"probes.{w}.rss_bytes", MIB, ".0f")
        for w in ("native", "boost", "identifiers")
    ],
    *[
        (f"cold start {w} s", f"probes.{w}.cold_start_seconds", 1, ".2f")
        for w in ("native", "boost", "identifiers")
    ],
    *[
        line
        for name in ["native", *MODES, PLUGIN]
        for line in (
            (f"{name} p50 ms", f"search.systems.{name}.p50_ms", 1, ".1f"),
            ("  p50 / native", f"search.systems.{name}.p50_ratio", 1, ".2f"),
            ("  p95 / native", f"search.systems.{name}.p95_ratio", 1, ".2f"),
        )
    ],
    *[
        (f"{name} NDCG@10", f"search.systems.{name}.ndcg10", 1, ".4f")
        for name in ["native", *MODES, PLUGIN]
    ],
]


def table(rows: list[dict[str, Any]]) -> None:
    """The figures of every size side by side, with the load average at the end."""
    for label, path, div, fmt in TABLE:
        cells = [_get(r, path) for r in rows]
        print(
            f"{label:28s}"
            + "".join(f"{'-' if c is None else format(c / div, fmt):>16s}" for c in cells)
        )
    print(
        f"{'load avg 1/5/15 min (end)':28s}"
        + "".join(f"{'/'.join(f'{x:.1f}' for x in r['load_end']):>16s}" for r in rows)
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_url(ap, "http://127.0.0.1:19360")
    ap.add_argument("--corpus", type=Path, default=Path("data/corpora/mix"))
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--shards", type=int, default=3)
    ap.add_argument("--gold", type=int, default=1000, help="sampled queries whose gold leads")
    ap.add_argument("--queries", type=int, default=400, help="timed and judged queries")
    ap.add_argument("--warm", type=int, default=20, help="untimed queries first")
    ap.add_argument(
        "--identifiers-max",
        type=int,
        default=None,
        help="largest size that runs calibrate --identifiers and the mode "
        "(its peak memory grew ~5x from 10K to 100K: 1 GB)",
    )
    ap.add_argument(
        "--kinds",
        default=",".join(CALIBRATIONS),
        help="calibrations to run (identifiers and vocabulary feed the searches)",
    )
    ap.add_argument(
        "--timeout",
        type=float,
        default=900.0,
        help="calibrate's per-request timeout (a loaded node can be slow)",
    )
    ap.add_argument("--repeats", type=int, default=3, help="runs of each fresh-process probe")
    ap.add_argument(
        "--modes",
        type=lambda v: v.split(","),
        default=MODES,
        help=f"the modes timed and judged beside native (also {PLUGIN}: the "
        "identifiers mode through the esqlog-terms plugin)",
    )
    ap.add_argument("--seed", type=int, default=42)
    add_out(ap, "results/scale.jsonl")
    ap.add_argument("--work", type=Path, default=Path("results/scale"))
    ap.add_argument(
        "--report",
        action="store_true",
        help="only print the table of --out (last line per size), measure nothing",
    )
    args = ap.parse_args()
    if args.report:
        rows = [json.loads(x) for x in args.out.read_text().splitlines() if x.strip()]
        table(sorted({r["size"]: r for r in rows}.values(), key=lambda r: r["size"]))
        return 0

    from opensearchpy import OpenSearch

    args.work.mkdir(parents=True, exist_ok=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    engine = engine_at(args.url, timeout=600.0)
    client = OpenSearch(hosts=[args.url], timeout=120)
    rank, queries = ranking(args.corpus, args.gold, args.seed)
    print(
        f"corpus {args.corpus}: {len(rank):,} documents, {len(queries)} sampled queries", flush=True
    )
    rows = []
    for size in [int(s) for s in args.sizes.split(",")]:
        row = measure(args, engine, client, rank, queries, size)
        rows.append(row)
        append_jsonl(args.out, row)
        table(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
