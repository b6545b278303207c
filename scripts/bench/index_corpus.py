"""Index a benchmark corpus as the quality benchmark does (standard analyzer, force-merged).

    python -m scripts.bench.index_corpus --url http://127.0.0.1:19200 \
        --corpus data/corpora/go --index esqlog-bench-go-full-standard-3s --shards 3

Reuses scripts/bench/quality.py's ``ensure_index`` (an index already holding exactly the
corpus is kept), so latency and quality runs search the same index layout.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from esqlog.evaluation.corpus import read_jsonl
from scripts.bench.harness import add_url, engine_at
from scripts.bench.quality import ensure_index


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_url(parser)
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--index", required=True)
    parser.add_argument("--shards", type=int, default=1)
    parser.add_argument("--analyzer", default="standard")
    args = parser.parse_args()
    engine = engine_at(args.url, timeout=600)
    docs = list(read_jsonl(args.corpus / "docs.jsonl"))
    seconds = ensure_index(engine, args.index, docs, args.analyzer, shards=args.shards)
    print(f"{args.index}: {len(docs)} documents, {args.shards} shards, {seconds:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
