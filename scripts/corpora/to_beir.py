"""Write a small BEIR folder from one of esqlog's corpora (docs.jsonl + queries.jsonl).

Why: ``esqlog bench-beir`` and ``esqlog eval --qrels`` read the BEIR layout (the one CoIR
ships); testing them on our own real code needs BEIR folders whose queries have several
relevant documents with grades. Our corpora have them where a language overloads: a Java
query's gold method is grade 2 and its overloads (same name, same file) are grade 1.

    python -m scripts.corpora.to_beir /work/data/corpora/java tests/data/beir-java \\
        --multi 40 --single 20 --docs 1500

Writes corpus.jsonl.gz (_id, title = the function's name, text), queries.jsonl (_id, text)
and qrels/test.tsv (query-id, corpus-id, score, with BEIR's header). Deterministic (--seed).
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
from collections import defaultdict
from pathlib import Path


def build(source: Path, out: Path, multi: int, single: int, docs: int, seed: int) -> dict:
    rng = random.Random(seed)
    corpus = {}
    siblings: dict[tuple[str, str], list[str]] = defaultdict(list)
    by_path: dict[str, list[str]] = defaultdict(list)
    with (source / "docs.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            d = json.loads(line)
            corpus[d["id"]] = d
            siblings[(d.get("path", ""), d.get("name", ""))].append(d["id"])
            by_path[d.get("path", "")].append(d["id"])
    queries = [json.loads(line) for line in (source / "queries.jsonl").open(encoding="utf-8")]
    queries = [q for q in queries if q["gold"] in corpus]
    rng.shuffle(queries)

    def group(q: dict) -> list[str]:
        g = corpus[q["gold"]]
        return siblings[(g.get("path", ""), g.get("name", ""))]

    chosen = [q for q in queries if len(group(q)) > 1][:multi]
    chosen += [q for q in queries if len(group(q)) == 1][:single]
    qrels = {q["qid"]: {d: (2 if d == q["gold"] else 1) for d in group(q)} for q in chosen}
    keep = dict.fromkeys(d for judged in qrels.values() for d in judged)
    for q in chosen:  # the other functions of the same files: the natural near misses
        for d in by_path[corpus[q["gold"]].get("path", "")][:30]:
            keep.setdefault(d)
    others = [d for d in corpus if d not in keep]
    rng.shuffle(others)
    for d in others[: max(0, docs - len(keep))]:
        keep.setdefault(d)
    (out / "qrels").mkdir(parents=True, exist_ok=True)
    with gzip.open(out / "corpus.jsonl.gz", "wt", encoding="utf-8") as handle:
        for d in sorted(keep):
            doc = corpus[d]
            handle.write(
                json.dumps({"_id": d, "title": doc.get("name", ""), "text": doc["text"]}) + "\n"
            )
    with (out / "queries.jsonl").open("w", encoding="utf-8") as handle:
        for q in chosen:
            handle.write(json.dumps({"_id": q["qid"], "text": q["text"]}) + "\n")
    with (out / "qrels" / "test.tsv").open("w", encoding="utf-8") as handle:
        handle.write("query-id\tcorpus-id\tscore\n")
        for qid, judged in qrels.items():
            for d, grade in judged.items():
                handle.write(f"{qid}\t{d}\t{grade}\n")
    return {
        "docs": len(keep),
        "queries": len(chosen),
        "judgments": sum(len(j) for j in qrels.values()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("source", type=Path, help="a corpus folder: docs.jsonl, queries.jsonl")
    parser.add_argument("out", type=Path, help="the BEIR folder to write")
    parser.add_argument(
        "--multi",
        type=int,
        default=40,
        help="queries whose gold has overloads (several relevant documents)",
    )
    parser.add_argument("--single", type=int, default=20, help="queries with one relevant doc")
    parser.add_argument("--docs", type=int, default=1500, help="documents in all")
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()
    print(json.dumps(build(args.source, args.out, args.multi, args.single, args.docs, args.seed)))


if __name__ == "__main__":
    main()
