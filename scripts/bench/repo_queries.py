"""Queries for a repository indexed by ``esqlog index``: Go doc-comment first sentences.

    python -m scripts.bench.repo_queries --url U --index I --out-dir results/recall/repo

Reads the index (search_after; nothing is written to it) and, for every Go function or
method chunk that starts with a ``//`` doc comment, takes the comment's first sentence the
way scripts/corpora does (go_query: directives and doc links dropped) as a query whose gold
is that chunk's ``_id``; a second file has the function's name removed (delete_name). A
sentence shared by several chunks is dropped (no single gold). Writes queries.jsonl and
queries_noname.jsonl ({qid, text, gold}) for scripts/bench/token_recall.py --index.

Unlike the corpora (whose documents have their doc comment removed), ``esqlog index`` keeps
a function's doc comment in its chunk, so the gold chunk contains the query's sentence: the
figures measure how often the agent gets the function a description points at, the easy
end of code search, and say so where they are reported.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from esqlog.engine.client import Engine
from esqlog.engine.paths import index_path
from esqlog.engine.steps import Request
from scripts.bench.harness import add_url, engine_at
from scripts.corpora.lang_go import go_query
from scripts.corpora.text import delete_name, usable_query

ROOT = Path(__file__).resolve().parents[2]


def chunks(engine: Engine, index: str) -> Any:
    """Every Go function/method chunk of the index: (_id, symbol, content)."""
    after: list[Any] | None = None
    while True:
        body: dict[str, Any] = {
            "size": 1000,
            "sort": [{"path": "asc"}, {"chunk": "asc"}],
            "query": {
                "bool": {
                    "filter": [
                        {"term": {"language": "go"}},
                        {"terms": {"kind": ["function", "method"]}},
                    ]
                }
            },
            "_source": ["symbol", "content"],
            "track_total_hits": False,
        }
        if after is not None:
            body["search_after"] = after
        hits = engine.perform(Request("POST", index_path(index, "_search"), body=body))["hits"][
            "hits"
        ]
        if not hits:
            return
        for hit in hits:
            source = hit.get("_source") or {}
            yield hit["_id"], str(source.get("symbol") or ""), str(source.get("content") or "")
        after = hits[-1]["sort"]


def doc_comment(content: str) -> str:
    """The ``//`` lines a chunk starts with (its doc comment), '' when it has none."""
    lines = []
    for line in content.split("\n"):
        if not line.lstrip().startswith("//"):
            break
        lines.append(line.strip())
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_url(parser)
    parser.add_argument("--index", required=True)
    parser.add_argument("--out-dir", type=Path, required=True)
    parser.add_argument("--max-queries", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()
    engine = engine_at(args.url, timeout=300)
    found: list[tuple[str, str, str]] = []
    total = 0
    for _id, symbol, content in chunks(engine, args.index):
        total += 1
        query = go_query(doc_comment(content))
        if usable_query(query):
            found.append((_id, symbol, query))
    repeated = Counter(q for _, _, q in found)
    unique = [row for row in found if repeated[row[2]] == 1]
    random.Random(args.seed).shuffle(unique)
    picked = unique[: args.max_queries]
    args.out_dir.mkdir(parents=True, exist_ok=True)
    with (
        (args.out_dir / "queries.jsonl").open("w", encoding="utf-8") as named,
        (args.out_dir / "queries_noname.jsonl").open("w", encoding="utf-8") as noname,
    ):
        for _id, symbol, query in picked:
            named.write(json.dumps({"qid": f"q{_id}", "text": query, "gold": _id}) + "\n")
            names = [symbol, symbol.rsplit(".", 1)[-1]]
            stripped = delete_name(query, names)
            if usable_query(stripped):
                noname.write(json.dumps({"qid": f"q{_id}", "text": stripped, "gold": _id}) + "\n")
    print(
        f"{total} Go function chunks, {len(found)} with a usable first sentence, "
        f"{len(unique)} unambiguous, {len(picked)} written to {args.out_dir}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
