"""Turn extracted functions into docs/queries files: ids, dedup, sampling, output.

Every language module yields `Func` records in a deterministic order; this
module owns everything that must be identical across languages so that the
corpora are comparable and rebuilds are byte-identical for the same seed.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import random
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from scripts.corpora.text import delete_name, normalize_space, token_count, usable_query

T = TypeVar("T")


@dataclass(frozen=True)
class Func:
    """One function (or man page) as extracted, before ids and dedup."""

    path: str  # stable, install-location-independent path ("go-1.19/src/io/io.go")
    qualname: str  # display name and id key ("Reader.Read")
    code: str  # the document text, without its doc comment
    query: str = ""  # cleaned first sentence of the doc comment, "" when none
    names: tuple[str, ...] = ()  # identifiers deleted for the no-name query set


@dataclass
class Corpus:
    """Docs and both query sets of one corpus, ready to write."""

    docs: list[dict[str, str]] = field(default_factory=list)
    queries: list[dict[str, str]] = field(default_factory=list)
    queries_noname: list[dict[str, str]] = field(default_factory=list)
    stats: dict[str, int] = field(default_factory=dict)


def doc_id(path: str, qualname: str, ordinal: int) -> str:
    """Stable id from path, name and the n-th occurrence of that pair in the file.

    The ordinal separates overloads (Java) and same-named methods in one file;
    hashing keeps ids short and independent of the order of other files.
    """
    key = f"{path}\0{qualname}\0{ordinal}".encode()
    return hashlib.sha1(key).hexdigest()[:16]


def assemble(funcs: Iterable[Func]) -> Corpus:
    """Assign ids, drop exact-duplicate documents and derive both query sets.

    Dropped: empty documents; documents whose text equals an earlier one (and
    their queries, so every gold is unambiguous); queries under MIN_QUERY_WORDS;
    queries whose text (case-insensitively) is shared by several functions,
    since no system could tell their golds apart. The same rules apply to the
    no-name set independently.
    """
    corpus = Corpus()
    ordinals: Counter[tuple[str, str]] = Counter()
    seen_code: set[str] = set()
    candidates: list[tuple[str, str, tuple[str, ...]]] = []
    stats: Counter[str] = Counter()
    for f in funcs:
        stats["functions"] += 1
        key = (f.path, f.qualname)
        ordinal = ordinals[key]
        ordinals[key] += 1
        code = f.code.strip("\n")
        if not code.strip():
            stats["dropped_empty"] += 1
            continue
        if code in seen_code:
            stats["dropped_duplicate_docs"] += 1
            continue
        seen_code.add(code)
        did = doc_id(f.path, f.qualname, ordinal)
        corpus.docs.append({"id": did, "text": code, "name": f.qualname, "path": f.path})
        query = normalize_space(f.query)
        if query:
            stats["documented"] += 1
            if usable_query(query):
                candidates.append((did, query, f.names))
            else:
                stats["dropped_short_queries"] += 1
    corpus.queries = _unique_queries([(d, q) for d, q, _ in candidates], stats, "queries")
    noname = []
    for did, query, names in candidates:
        stripped = delete_name(query, names)
        if usable_query(stripped):
            noname.append((did, stripped))
        else:
            stats["dropped_short_noname"] += 1
    corpus.queries_noname = _unique_queries(noname, stats, "noname")
    corpus.stats = dict(stats)
    return corpus


def _unique_queries(
    pairs: list[tuple[str, str]], stats: Counter[str], label: str
) -> list[dict[str, str]]:
    """Keep queries whose text is unique; qid is derived from the gold doc id."""
    counts = Counter(q.lower() for _, q in pairs)
    out = []
    for did, query in pairs:
        if counts[query.lower()] > 1:
            stats[f"dropped_ambiguous_{label}"] += 1
            continue
        out.append({"qid": f"q{did}", "text": query, "gold": did})
    return out


def subsample(corpus: Corpus, max_docs: int | None, max_queries: int | None, seed: int) -> None:
    """Seeded uniform subsample of docs, then of queries, keeping golds consistent.

    Queries whose gold fell out of the doc sample are dropped; the no-name set
    is restricted to the sampled qids so both sets stay paired.
    """
    rng = random.Random(seed)
    if max_docs is not None and len(corpus.docs) > max_docs:
        keep = set(rng.sample(range(len(corpus.docs)), max_docs))
        corpus.docs = [d for i, d in enumerate(corpus.docs) if i in keep]
    doc_ids = {d["id"] for d in corpus.docs}
    queries = [q for q in corpus.queries if q["gold"] in doc_ids]
    if max_queries is not None and len(queries) > max_queries:
        keep = set(rng.sample(range(len(queries)), max_queries))
        queries = [q for i, q in enumerate(queries) if i in keep]
    corpus.queries = queries
    qids = {q["qid"] for q in queries}
    corpus.queries_noname = [q for q in corpus.queries_noname if q["qid"] in qids]


def _jsonl(rows: list[dict[str, str]]) -> bytes:
    """Serialize rows as UTF-8 JSON lines with a fixed key order."""
    buf = io.StringIO()
    for row in rows:
        buf.write(json.dumps(row, ensure_ascii=False))
        buf.write("\n")
    return buf.getvalue().encode("utf-8")


def write_corpus(corpus: Corpus, out_dir: Path, meta: dict[str, object]) -> None:
    """Write docs.jsonl, queries.jsonl, queries_noname.jsonl and meta.json."""
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "docs.jsonl").write_bytes(_jsonl(corpus.docs))
    (out_dir / "queries.jsonl").write_bytes(_jsonl(corpus.queries))
    (out_dir / "queries_noname.jsonl").write_bytes(_jsonl(corpus.queries_noname))
    (out_dir / "meta.json").write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")


def write_gzip_jsonl(rows: list[dict[str, str]], path: Path) -> None:
    """Gzip with mtime 0 and no file name so the bytes are reproducible."""
    with (
        path.open("wb") as raw,
        gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as gz,
    ):
        gz.write(_jsonl(rows))


def write_jsonl(rows: list[dict[str, str]], path: Path) -> None:
    """Plain JSON lines, for the small bundled query files."""
    path.write_bytes(_jsonl(rows))


def summarize(name: str, corpus: Corpus, seconds: float) -> dict[str, object]:
    """Counts and mean document length in identifier-like tokens."""
    n = len(corpus.docs)
    mean_len = sum(token_count(d["text"]) for d in corpus.docs) / n if n else 0.0
    return {
        "corpus": name,
        "docs": n,
        "queries": len(corpus.queries),
        "queries_noname": len(corpus.queries_noname),
        "mean_doc_tokens": round(mean_len, 1),
        "build_seconds": round(seconds, 1),
        **{f"extract_{k}": v for k, v in sorted(corpus.stats.items())},
    }


class Progress:
    """Minimal progress printer: a line every `every` items and at the end."""

    def __init__(self, label: str, total: int, every: int = 2000) -> None:
        self.label, self.total, self.every = label, total, every
        self.done = 0
        self.start = time.monotonic()

    def step(self, n: int = 1) -> None:
        """Advance and print when a multiple of `every` is crossed."""
        before = self.done // self.every
        self.done += n
        if self.done // self.every != before or self.done == self.total:
            rate = self.done / max(time.monotonic() - self.start, 1e-6)
            print(f"  {self.label}: {self.done}/{self.total} files ({rate:.0f}/s)", flush=True)


def pooled_extract(
    label: str, items: Sequence[T], parse: Callable[[T], list[Func]], chunksize: int = 64
) -> Iterator[Func]:
    """Functions parsed from ``items`` by two worker processes, in ``items`` order.

    The one loop the file-based languages (Python, Ruby) share: ``parse`` must be a
    module-level function (it is pickled to the workers).
    """
    from multiprocessing import Pool

    prog = Progress(label, len(items))
    with Pool(2) as pool:
        for funcs in pool.imap(parse, items, chunksize=chunksize):
            prog.step()
            yield from funcs
