"""TREC run and qrels files (the formats trec_eval and ir-measures read)."""

from __future__ import annotations

import io
from collections.abc import Iterable
from pathlib import Path

Run = dict[str, list[tuple[str, float]]]
"""qid -> hits in rank order as (doc_id, score); the list order is the ranking."""

Qrels = dict[str, dict[str, int]]
"""qid -> doc_id -> graded relevance; a doc is gold when its grade is > 0."""


def _check_trec_field(value: str, what: str) -> None:
    """TREC files are whitespace-separated: an id with whitespace would corrupt the file."""
    if not value or any(ch.isspace() for ch in value):
        raise ValueError(
            f"{what} {value!r} is empty or contains whitespace; TREC files cannot hold it"
        )


def write_trec_run(run: Run, path: str | Path, tag: str) -> Path:
    """Write ``qid Q0 doc_id rank score tag`` lines, rank from 1 in list order.

    The list order is kept even where scores tie, so the file reproduces the ranking the
    system returned (readers should sort by rank, not score; :func:`read_trec_run` does).
    """
    _check_trec_field(tag, "run tag")
    return _write_trec(
        path,
        (
            (qid, doc_id, f"{qid} Q0 {doc_id} {rank} {float(score)!r} {tag}")
            for qid, hits in run.items()
            for rank, (doc_id, score) in enumerate(hits, start=1)
        ),
    )


def read_trec_run(path: str | Path) -> Run:
    """Read a TREC run file back into a :data:`Run`, each query's hits sorted by rank."""
    ranked: dict[str, list[tuple[int, str, float]]] = {}
    for lineno, parts in _trec_lines(path):
        if len(parts) != 6:
            raise ValueError(f"{path}:{lineno}: expected 6 fields in a run line, got {len(parts)}")
        qid, _q0, doc_id, rank, score, _tag = parts
        try:
            ranked.setdefault(qid, []).append((int(rank), doc_id, float(score)))
        except ValueError:
            raise ValueError(f"{path}:{lineno}: rank or score is not a number") from None
    return {
        qid: [(doc_id, score) for _rank, doc_id, score in sorted(hits, key=lambda h: h[0])]
        for qid, hits in ranked.items()
    }


def write_trec_qrels(qrels: Qrels, path: str | Path) -> Path:
    """Write ``qid 0 doc_id relevance`` lines (the trec_eval qrels format)."""
    return _write_trec(
        path,
        (
            (qid, doc_id, f"{qid} 0 {doc_id} {int(rel)}")
            for qid, judged in qrels.items()
            for doc_id, rel in judged.items()
        ),
    )


def read_trec_qrels(path: str | Path) -> Qrels:
    """Read a trec_eval qrels file (``qid iteration doc_id relevance``)."""
    qrels: Qrels = {}
    for lineno, parts in _trec_lines(path):
        if len(parts) != 4:
            raise ValueError(
                f"{path}:{lineno}: expected 4 fields in a qrels line, got {len(parts)}"
            )
        qid, _iteration, doc_id, rel = parts
        try:
            qrels.setdefault(qid, {})[doc_id] = int(rel)
        except ValueError:
            raise ValueError(f"{path}:{lineno}: relevance {rel!r} is not an integer") from None
    return qrels


def _write_trec(path: str | Path, lines: Iterable[tuple[str, str, str]]) -> Path:
    """The one TREC writer: each (query id, doc id, line) checked, then the file written."""
    buf = io.StringIO()
    for qid, doc_id, line in lines:
        _check_trec_field(qid, "query id")
        _check_trec_field(doc_id, "doc id")
        buf.write(line + "\n")
    out = Path(path)
    out.write_text(buf.getvalue(), encoding="utf-8")
    return out


def _trec_lines(path: str | Path) -> Iterable[tuple[int, list[str]]]:
    """Non-blank lines of a TREC file split on whitespace, with 1-based line numbers."""
    text = Path(path).read_text(encoding="utf-8")
    for lineno, line in enumerate(text.splitlines(), start=1):
        parts = line.split()
        if parts:
            yield lineno, parts
