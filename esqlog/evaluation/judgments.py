"""Queries and relevance judgments in the formats the field uses: BEIR, TREC, esqlog's JSONL.

Why one reader per kind of file, sniffed rather than chosen by a flag: a user holding a BEIR
``qrels/test.tsv`` or a TREC ``qrels.txt`` should not have to know which is which, and the two
are told apart by their first line with no ambiguity (a tab-separated header, or 4 fields).

Files are untrusted input: a malformed line is counted and skipped, never a traceback, and
what was skipped is said in one line per kind of problem (:class:`Notes`). Only a file with
nothing usable in it is an error (:class:`~esqlog.errors.UsageError`, exit 2).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from esqlog.atomic import read_regular_file
from esqlog.errors import UsageError
from esqlog.evaluation.trec import Qrels

#: Judgment and query files are read whole; 512 MB holds MS MARCO's qrels many times over.
MAX_BYTES = 512 * 1024 * 1024
MAX_QUERY_CHARS = 100 * 1024


@dataclass
class Notes:
    """Counted problems of an input, each kind reported once with its first example."""

    counts: dict[str, int] = field(default_factory=dict)
    examples: dict[str, str] = field(default_factory=dict)

    def add(self, kind: str, example: str, n: int = 1) -> None:
        if n <= 0:
            return
        self.counts[kind] = self.counts.get(kind, 0) + n
        self.examples.setdefault(kind, example)

    def lines(self) -> list[str]:
        """One line per kind: ``<count> <kind> (first: <example>)``."""
        return [f"{self.counts[k]:,} {k} (first: {self.examples[k]})" for k in self.counts]

    def extend(self, other: Notes) -> None:
        for kind, n in other.counts.items():
            self.add(kind, other.examples[kind], n)


def json_records(lines: Iterable[str], notes: Notes, what: str) -> Iterator[tuple[int, Any]]:
    """(line number, decoded value) of each JSON line; blank lines are skipped and lines
    that are not JSON are counted in ``notes`` (as "<what> lines that are not JSON
    skipped") with their line number, so one bad line never stops a whole file."""
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            yield lineno, json.loads(line)
        except (ValueError, RecursionError):
            notes.add(f"{what} lines that are not JSON skipped", f"line {lineno}")


@dataclass(frozen=True)
class Queries:
    """Query texts in file order, and the judgments the file itself carried (esqlog's
    ``gold`` field), if any."""

    ids: list[str]
    texts: list[str]
    gold: Qrels | None
    format: str


def _text_of(path: str | Path, what: str, fix: str) -> str:
    data = read_regular_file(path, MAX_BYTES, what, fix)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UsageError(
            f"{what} {str(path)!r} is not UTF-8 text (byte {exc.start})", fix
        ) from None


def _shown(text: str, limit: int = 50) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[: limit - 3] + "...")


# --------------------------------------------------------------------------- qrels

QRELS_FIX = "pass a BEIR qrels .tsv (query-id, corpus-id, score) or a TREC qrels file"


def read_qrels(path: str | Path, notes: Notes) -> Qrels:
    """Judgments from a BEIR qrels TSV (header optional) or a TREC qrels file.

    BEIR lines are ``query-id<TAB>corpus-id<TAB>score``; TREC lines are ``qid iteration
    doc-id relevance`` separated by any whitespace. The format is decided by the first line
    that is not blank: 3 tab-separated fields (or BEIR's header) mean BEIR. A judgment given
    twice keeps its last grade, as trec_eval does.
    """
    text = _text_of(path, "qrels file", QRELS_FIX)
    lines = [(n, line) for n, line in enumerate(text.splitlines(), start=1) if line.strip()]
    if not lines:
        raise UsageError(f"qrels file {str(path)!r} is empty", QRELS_FIX)
    first = lines[0][1]
    beir = first.count("\t") == 2 and len(first.split()) != 4
    if beir and first.lower().split("\t")[0].strip() in {"query-id", "query_id", "qid"}:
        lines = lines[1:]
    qrels: Qrels = {}
    for lineno, line in lines:
        parts = [p.strip() for p in line.split("\t")] if beir else line.split()
        want = 3 if beir else 4
        if len(parts) != want or not all(parts):
            notes.add(
                "malformed qrels lines skipped",
                f"line {lineno}: expected {want} fields, got {len(parts)}",
            )
            continue
        qid, doc_id, grade = (
            (parts[0], parts[1], parts[2]) if beir else (parts[0], parts[2], parts[3])
        )
        # "2" and "2.0" (some tools write floats) are grade 2; "2.5" is no grade
        grade_match = re.fullmatch(r"([-+]?\d{1,9})(\.0*)?", grade)
        if grade_match is None:
            notes.add(
                "malformed qrels lines skipped",
                f"line {lineno}: relevance {_shown(grade, 20)} is not an integer",
            )
            continue
        value = int(grade_match.group(1))
        judged = qrels.setdefault(qid, {})
        if doc_id in judged:
            notes.add("repeated judgments (the last grade kept)", f"line {lineno}")
        judged[doc_id] = value
    if not qrels:
        raise UsageError(f"qrels file {str(path)!r} holds no valid judgment line", QRELS_FIX)
    return qrels


# --------------------------------------------------------------------------- queries

QUERIES_FIX = (
    "pass BEIR queries.jsonl (_id, text), esqlog JSONL (qid, text, gold), "
    "TREC topics, or qid<TAB>text lines"
)


def read_queries(path: str | Path, notes: Notes, plain_lines: bool = False) -> Queries:
    """Queries from BEIR ``queries.jsonl``, esqlog's JSONL, TREC topics or ``qid<TAB>text``.

    Sniffed from the first character that is not blank: ``{`` JSON lines, ``<`` TREC topics
    (the classic ``<top><num>..<title>`` form or the XML ``<topic number=..><query>``
    form; the title or query is the text, as in the TREC ad hoc runs), else TSV. With
    ``plain_lines`` (a query log) a file without any tab is one query per line, named by
    its line number.
    """
    text = _text_of(path, "queries file", QUERIES_FIX)
    head = text.lstrip()[:1]
    if not head:
        raise UsageError(f"queries file {str(path)!r} is empty", QUERIES_FIX)
    if head == "{":
        found, kind = _jsonl_queries(text, notes)
    elif head == "<":
        found, kind = list(_trec_topics(text)), "TREC topics"
    elif plain_lines and "\t" not in text:
        found = [
            (f"line{n}", line.strip(), [])
            for n, line in enumerate(text.splitlines(), start=1)
            if line.strip()
        ]
        kind = "one query per line"
    else:
        found, kind = list(_tsv_queries(text, notes)), "qid<TAB>text"
    ids: list[str] = []
    texts: list[str] = []
    gold: Qrels = {}
    seen: set[str] = set()
    for qid, query, golds in found:
        if qid in seen:
            notes.add("repeated query ids (the first kept)", qid)
            continue
        if not query.strip():
            notes.add("queries with empty text skipped", qid)
            continue
        if len(query) > MAX_QUERY_CHARS:
            notes.add("queries longer than 100K characters skipped", qid)
            continue
        seen.add(qid)
        ids.append(qid)
        texts.append(query)
        if golds:
            gold[qid] = dict.fromkeys(golds, 1)
    if not ids:
        why = f" ({'; '.join(notes.lines())})" if notes.counts else ""
        raise UsageError(f"queries file {str(path)!r} holds no usable query{why}", QUERIES_FIX)
    return Queries(ids, texts, gold or None, kind)


Found = tuple[str, str, list[str]]


def _jsonl_queries(text: str, notes: Notes) -> tuple[list[Found], str]:
    out: list[Found] = []
    kinds: set[str] = set()
    for lineno, record in json_records(text.splitlines(), notes, "query"):
        qid = record.get("_id", record.get("qid")) if isinstance(record, dict) else None
        query = record.get("text") if isinstance(record, dict) else None
        if not isinstance(qid, str | int) or isinstance(qid, bool) or not isinstance(query, str):
            notes.add(
                "query records without an id (_id or qid) and a text skipped", f"line {lineno}"
            )
            continue
        kinds.add("BEIR" if "_id" in record else "esqlog")
        raw = record.get("gold")
        golds = (
            [
                str(g)
                for g in (raw if isinstance(raw, list) else [raw])
                if isinstance(g, str | int) and not isinstance(g, bool)
            ]
            if raw
            else []
        )
        out.append((str(qid), query, golds))
    return out, "BEIR queries" if kinds == {"BEIR"} else "esqlog JSONL"


#: Tags of the two topic forms. An element is found by pairing tags in one left-to-right
#: pass, never by a ``<top>(.*?)</top>`` pattern: on an unclosed tag such a pattern scans to
#: the end of the text from every opening, quadratic in the file (128 KB of unclosed
#: ``<topic>`` took 7 s). Attributes stop at the next ``<`` for the same reason.
_CLASSIC_TAG = re.compile(r"<(/?)top>", re.I)
_XML_TAG = re.compile(r"<(/?)topic\b([^<>]*)>", re.I)
_QUERY_TAG = re.compile(r"<(/?)query>", re.I)
_NUM = re.compile(r"<num>\s*(?:Number:)?\s*(\S+)", re.I)
_TITLE = re.compile(r"<title>\s*(?:Topic:)?(.*?)(?=<[a-z/]|\Z)", re.S | re.I)
_NUMBER_ATTR = re.compile(r"""number\s*=\s*["']?([^"'\s>]+)""", re.I)


def _elements(text: str, tag: re.Pattern[str]) -> Iterator[tuple[str, str]]:
    """(attributes, content) of each element: an opening tag paired with the first closing
    tag after it (later openings before that close are content), as a non-greedy
    ``<t>(.*?)</t>`` would pair them, in one pass over the tags."""
    opened: re.Match[str] | None = None
    for found in tag.finditer(text):
        closing = found.group(1) == "/"
        if opened is None and not closing:
            opened = found
        elif opened is not None and closing:
            attrs = opened.group(2) if tag.groups > 1 else ""
            yield attrs or "", text[opened.end() : found.start()]
            opened = None


def _first_element(text: str, tag: re.Pattern[str]) -> str | None:
    return next((content for _, content in _elements(text, tag)), None)


def _trec_topics(text: str) -> Iterator[Found]:
    """TREC topics in either form; a topic without a number or text is left out silently
    only by never matching. Linear in the text (see _CLASSIC_TAG)."""
    import html

    for _, block in _elements(text, _CLASSIC_TAG):
        num, title = _NUM.search(block), _TITLE.search(block)
        if num and title:
            yield num.group(1), " ".join(title.group(1).split()), []
    for attrs, body in _elements(text, _XML_TAG):
        num, query = _NUMBER_ATTR.search(attrs), _first_element(body, _QUERY_TAG)
        if num and query is not None:
            yield num.group(1), html.unescape(" ".join(query.split())), []


def _tsv_queries(text: str, notes: Notes) -> Iterator[Found]:
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        qid, sep, query = line.partition("\t")
        if not sep or not qid.strip():
            notes.add("query lines without qid<TAB>text skipped", f"line {lineno}")
            continue
        yield qid.strip(), query.strip(), []


# --------------------------------------------------------------------------- joining


def judged_queries(queries: Queries, qrels: Qrels, notes: Notes) -> tuple[list[int], Qrels]:
    """Positions of the queries that can be evaluated, and their judgments.

    A query needs at least one judged document with a grade above 0: without one every
    metric is 0 or undefined, and averaging it in (or not) would change the mean silently.
    Judgments for queries the file does not have are counted and ignored.
    """
    keep: list[int] = []
    used: Qrels = {}
    for i, qid in enumerate(queries.ids):
        judged = qrels.get(qid)
        if judged is None:
            notes.add("queries without judgments skipped", qid)
        elif not any(grade > 0 for grade in judged.values()):
            notes.add("queries whose judgments hold no relevant document skipped", qid)
        else:
            keep.append(i)
            used[qid] = judged
    asked = set(queries.ids)
    orphans = [qid for qid in qrels if qid not in asked]
    if orphans:
        notes.add("judged query ids not in the queries file ignored", orphans[0], len(orphans))
    if not keep:
        raise UsageError(
            "no query of the queries file has a relevant judgment",
            "check that both files use the same query ids",
        )
    return keep, used
