"""How often an identifiers query's groups recur in later queries: the hit rate a cache of
each group's merged postings would see.

    python -m scripts.bench.group_repeats --calibration results/go.json \
        --queries data/corpora/go/queries.jsonl --n 2000

Why: scoring a group (a disjunction of its terms' postings) is most of the node's time with
the plugin (docs/benchmarks/identifiers.md, "Where the node's time goes"); a per-segment
cache of a group's merged postings would pay only when the same group (the same terms) is
asked again. This plans the first ``--n`` texts as the client does (the plugin's one-shard
layout, the shipped budget) and prints the share of groups, of groups of two or more terms,
and of words that an earlier text of the run already had.
"""

from __future__ import annotations

import argparse
from collections import Counter

from esqlog.evaluation.corpus import load_queries
from esqlog.identifiers.query import plan_identifier_query
from esqlog.identifiers.settings import IdentifierSettings
from scripts.bench.harness import identifier_inputs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calibration", required=True)
    parser.add_argument("--queries", required=True)
    parser.add_argument("--n", type=int, default=2000)
    args = parser.parse_args()
    cal, stats, vocab, budget = identifier_inputs(args.calibration)
    settings = IdentifierSettings(engine_query="plugin", budget=budget)
    groups: Counter[tuple[str, ...]] = Counter()
    words: Counter[str] = Counter()
    counts = Counter[str]()
    texts = load_queries(args.queries)[: args.n]
    for query in texts:
        plan = plan_identifier_query(query.text, stats, vocab.df_of, settings)
        for word in plan.words:
            counts["words"] += 1
            counts["words seen"] += words[word.word] > 0
            words[word.word] += 1
            for terms, _boost in word.groups:
                key = tuple(sorted(terms))
                several = len(terms) > 1
                counts["groups"] += 1
                counts["groups seen"] += groups[key] > 0
                counts["several"] += several
                counts["several seen"] += several and groups[key] > 0
                groups[key] += 1
    print(f"{cal.index}: {len(texts)} texts, budget {budget}")
    for name in ("groups", "several", "words"):
        label = {"several": "groups of 2+ terms"}.get(name, name)
        share = counts[f"{name} seen"] / max(counts[name], 1)
        print(f"{label:20} {counts[name]:7,}  seen in an earlier text {share:.0%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
