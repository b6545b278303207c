"""Build CodeSearchNet-style code search corpora offline from Debian sources.

    python -m scripts.corpora.build --corpus go|go-std|java|python|ruby|man|rust|c|mix|all \
        --out data/corpora [--max-docs N] [--max-queries N] [--seed 42]
    python -m scripts.corpora.build --sample   # regenerate esqlog/data/sample_go_*

Query = first sentence of a function's doc comment; document = the function's
code without that comment; every function is a document. See README.md here.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from scripts.corpora import lang_go
from scripts.corpora.pipeline import (
    Func,
    assemble,
    subsample,
    summarize,
    write_corpus,
    write_gzip_jsonl,
    write_jsonl,
)

REPO = Path(__file__).resolve().parent.parent.parent
SAMPLE_DIR = REPO / "esqlog" / "data"
SAMPLE_DOCS = 5000
SAMPLE_QUERIES = 1000
SAMPLE_SEED = 42


def _extractor(name: str) -> Callable[[Path], Iterator[Func]]:
    """Map a corpus name to its extractor; imports lazily so one corpus needs
    only its own parser (tree-sitter is not needed to build `go`)."""
    if name == "go":
        return lang_go.extract_all
    if name == "go-std":
        return lang_go.extract_std
    if name == "java":
        from scripts.corpora import lang_java

        return lang_java.extract
    if name == "python":
        from scripts.corpora import lang_python

        return lang_python.extract
    if name == "ruby":
        from scripts.corpora import lang_ruby

        return lang_ruby.extract
    if name == "rust":
        from scripts.corpora import lang_rust

        return lang_rust.extract
    if name == "c":
        from scripts.corpora import lang_c

        return lang_c.extract
    if name == "man":
        from scripts.corpora import lang_man

        return lang_man.extract
    raise SystemExit(f"unknown corpus {name!r}")


CORPORA = ["go", "java", "python", "ruby", "man", "rust", "c"]


def build_one(
    name: str, out: Path, max_docs: int | None, max_queries: int | None, seed: int
) -> dict[str, object]:
    """Extract, assemble, subsample and write one corpus; return its summary."""
    print(f"[{name}] extracting", flush=True)
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix=f"corpora-{name}-") as tmp:
        corpus = assemble(_extractor(name)(Path(tmp)))
    full = {
        "docs": len(corpus.docs),
        "queries": len(corpus.queries),
        "queries_noname": len(corpus.queries_noname),
    }
    subsample(corpus, max_docs, max_queries, seed)
    summary = summarize(name, corpus, time.monotonic() - start)
    summary["before_sampling"] = full
    meta = {**summary, "seed": seed, "max_docs": max_docs, "max_queries": max_queries}
    write_corpus(corpus, out / name, meta)
    print(f"[{name}] " + json.dumps(summary), flush=True)
    return summary


def build_sample(seed: int = SAMPLE_SEED) -> dict[str, object]:
    """Regenerate the bundled Go standard-library sample deterministically."""
    print("[sample] extracting the Go standard library", flush=True)
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="corpora-sample-") as tmp:
        corpus = assemble(lang_go.extract_std(Path(tmp)))
    subsample(corpus, SAMPLE_DOCS, SAMPLE_QUERIES, seed)
    SAMPLE_DIR.mkdir(parents=True, exist_ok=True)
    write_gzip_jsonl(corpus.docs, SAMPLE_DIR / "sample_go_docs.jsonl.gz")
    write_jsonl(corpus.queries, SAMPLE_DIR / "sample_go_queries.jsonl")
    write_jsonl(corpus.queries_noname, SAMPLE_DIR / "sample_go_queries_noname.jsonl")
    summary = summarize("sample-go", corpus, time.monotonic() - start)
    print("[sample] " + json.dumps(summary), flush=True)
    return summary


def main(argv: list[str] | None = None) -> int:
    """Command line entry point."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default="all", choices=[*CORPORA, "go-std", "mix", "all"])
    ap.add_argument("--out", type=Path, default=REPO / "data" / "corpora")
    ap.add_argument("--max-docs", type=int, default=None, help="seeded doc subsample")
    ap.add_argument("--max-queries", type=int, default=2000, help="seeded query subsample")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--sample", action="store_true", help="regenerate esqlog/data sample")
    args = ap.parse_args(argv)
    if args.sample:
        build_sample(args.seed)
        return 0
    if args.corpus == "mix":
        from scripts.corpora.mix import build_mix

        build_mix(args.out, lambda n: build_one(n, args.out, None, args.max_queries, args.seed))
        return 0
    names = CORPORA if args.corpus == "all" else [args.corpus]
    summaries = [build_one(n, args.out, args.max_docs, args.max_queries, args.seed) for n in names]
    print("\ncorpus    docs     queries  noname   mean_tokens  seconds")
    for s in summaries:
        print(
            f"{s['corpus']:<9} {s['docs']:<8} {s['queries']:<8} {s['queries_noname']:<8} "
            f"{s['mean_doc_tokens']:<12} {s['build_seconds']}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
