"""The code/prose rule of mode="auto" (esqlog.identifiers.code_rule), measured on corpora.

Prints one row per corpus: the share of tokens that split on all sampled documents (what
the rule read before: every document), the rule's share on the documents it keeps (the
code documents by the language field, else the ones that look like code), and the
decision. Two kinds of corpus:

* ``--jsonl NAME=PATH``: a corpus file of {"text": ...} lines (gzip or not); the rule runs
  on a seeded sample of its texts without a language field, as on an index without one;
* ``--index NAME=INDEX``: an index written by ``esqlog index`` on --url; the rule runs as
  calibrate runs it (code_share_plan: the language field's filter, one sampled search).

    .venv/bin/python -m scripts.bench.code_rule --url http://127.0.0.1:19200 \\
        --jsonl go-sample=esqlog/data/sample_go_docs.jsonl.gz \\
        --index click=ad-repo-click
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import sys
from pathlib import Path

from esqlog.identifiers.code_rule import (
    CODE_DOC_FLOOR,
    CODE_DOC_SHARE,
    CODE_SHARE,
    SAMPLE_DOCS,
    code_share_plan,
    share_of,
    split_counts,
)


def _open(path: Path):  # type: ignore[no-untyped-def]
    return (
        gzip.open(path, "rt", encoding="utf-8")
        if path.suffix == ".gz"
        else path.open(encoding="utf-8")
    )


def jsonl_texts(path: Path, size: int, seed: int) -> list[str]:
    with _open(path) as lines:
        texts = [str(json.loads(line).get("text") or "") for line in lines if line.strip()]
    random.Random(seed).shuffle(texts)
    return texts[:size]


def overall(texts: list[str]) -> float:
    counts = [split_counts(t) for t in texts]
    total = sum(n for _, n in counts)
    return sum(s for s, _ in counts) / total if total else 0.0


def index_texts(engine, index: str, field: str, size: int, seed: int) -> list[str]:  # type: ignore[no-untyped-def]
    body = {
        "size": size,
        "_source": [field],
        "query": {
            "function_score": {
                "query": {"exists": {"field": field}},
                "boost_mode": "replace",
                "random_score": {"seed": seed, "field": "_seq_no"},
            }
        },
    }
    answer = engine.client.search(index=index, body=body)
    return [str(h["_source"].get(field) or "") for h in answer["hits"]["hits"]]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--url", default="http://127.0.0.1:19200")
    parser.add_argument("--field", default="content", help="text field of --index corpora")
    parser.add_argument("--jsonl", action="append", default=[], metavar="NAME=PATH")
    parser.add_argument("--index", action="append", default=[], metavar="NAME=INDEX")
    parser.add_argument("--sample", type=int, default=SAMPLE_DOCS)
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()
    rows = []
    for item in args.jsonl:
        name, path = item.split("=", 1)
        texts = jsonl_texts(Path(path), args.sample, args.seed)
        found = share_of(texts, has_language=False)
        rows.append((name, "jsonl, no language field", overall(texts), found))
    if args.index:
        from esqlog.engine.connection import ConnectionSettings, connect

        engine = connect(ConnectionSettings(url=args.url))
        for item in args.index:
            name, index = item.split("=", 1)
            found = engine.run(code_share_plan(index, args.field, args.seed, args.sample))
            everything = overall(index_texts(engine, index, args.field, args.sample, args.seed))
            rows.append((name, f"index {index}", everything, found))
    print(
        f"rule: identifiers where >= {CODE_SHARE:.0%} of the code documents' tokens split; "
        f"without a language field a document looks like code at >= {CODE_DOC_SHARE:.0%} "
        f"and those must hold >= {CODE_DOC_FLOOR:.0%} of the tokens; sample {args.sample}"
    )
    print("| corpus | source | share, all documents | share, code documents | decision |")
    print("| --- | --- | --- | --- | --- |")
    for name, source, everything, found in rows:
        decision = "identifiers" if found.applies else "boost"
        print(
            f"| {name} | {source} | {everything:.1%} | {found.share:.1%} ({found.basis}) "
            f"| {decision} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
