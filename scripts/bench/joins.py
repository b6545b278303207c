"""Identifier joins, measured: native, q-log, q-log + joins (several w), and the
identifier-aware reindex (native and q-log), per corpus, on a real engine.

    python -m scripts.bench.joins --corpora go,java,python,ruby,man --weights 0.25,0.5,0.75

Needs the indices that scripts/bench/quality.py builds (esqlog-bench-<corpus>-full-standard
and -code). q is the calibrated q of each index (default predictor). Prints NDCG@10 and
Recall@100 with paired-bootstrap 95% intervals of joins minus q-log alone, and how much of the
gap between q-log on the standard index and the identifier-aware index the joins close.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from esqlog.calibration.calibrate import calibrate
from esqlog.evaluation.corpus import load_queries
from esqlog.evaluation.metrics import compare, mean_metrics, per_query_metrics
from esqlog.evaluation.sweeps import QuerySet, msearch_run, native_query, resolve_all, sweep
from scripts.bench.harness import add_out, add_url, append_jsonl, engine_at


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_url(parser)
    parser.add_argument("--data", type=Path, default=Path("data/corpora"))
    parser.add_argument("--corpora", default="go,java,python,ruby,man")
    parser.add_argument("--weights", default="0.25,0.5,0.75")
    parser.add_argument("--max-queries", type=int, default=1000)
    parser.add_argument("--resamples", type=int, default=10_000)
    add_out(parser, "results/joins.jsonl")
    args = parser.parse_args()
    engine = engine_at(args.url, timeout=300)
    weights = [float(w) for w in args.weights.split(",")]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    for corpus in args.corpora.split(","):
        loaded = load_queries(args.data / corpus / "queries.jsonl")[: args.max_queries]
        qs = QuerySet([q.qid for q in loaded], [q.text for q in loaded], [q.gold for q in loaded])
        row: dict[str, object] = {"corpus": corpus, "queries": len(loaded)}
        per_query = {}
        for analyzer in ("standard", "code"):
            index = f"esqlog-bench-{corpus}-full-{analyzer}"
            q = calibrate(engine, index, "body").q
            stats = resolve_all(engine, index, "body", qs.texts, 1, joins=analyzer == "standard")
            native, _ = msearch_run(
                engine, index, qs.ids, [native_query("body", t) for t in qs.texts]
            )
            per_query[f"{analyzer} native"] = per_query_metrics(native, qs.qrels)
            per_query[f"{analyzer} q-log"] = per_query_metrics(
                sweep(engine, index, "body", qs, stats, [q])[q], qs.qrels
            )
            row[f"{analyzer} q"] = q
            if analyzer == "standard":
                for w in weights:
                    run = sweep(engine, index, "body", qs, stats, [q], join_weight=w)[q]
                    per_query[f"joins w={w:g}"] = per_query_metrics(run, qs.qrels)
        means = {k: mean_metrics(v) for k, v in per_query.items()}
        row["means"] = means
        base = per_query["standard q-log"]
        for w in weights:
            diff = compare(
                base,
                per_query[f"joins w={w:g}"],
                ["NDCG@10", "Recall@100"],
                n_resamples=args.resamples,
            )
            row[f"joins w={w:g} diff"] = {m: r.__dict__ for m, r in diff.items()}
            gap = means["code q-log"]["NDCG@10"] - means["standard q-log"]["NDCG@10"]
            closed = means[f"joins w={w:g}"]["NDCG@10"] - means["standard q-log"]["NDCG@10"]
            print(
                f"{corpus:7s} w={w:<4g} NDCG@10 {means['standard native']['NDCG@10']:.4f} "
                f"-> q-log {means['standard q-log']['NDCG@10']:.4f} -> joins "
                f"{means[f'joins w={w:g}']['NDCG@10']:.4f} "
                f"(diff {diff['NDCG@10'].mean_diff:+.4f} [{diff['NDCG@10'].low:+.4f}, "
                f"{diff['NDCG@10'].high:+.4f}]); code analyzer native "
                f"{means['code native']['NDCG@10']:.4f} "
                f"q-log {means['code q-log']['NDCG@10']:.4f}; "
                + (f"gap closed {closed / gap:.0%}" if gap > 0 else "no gap"),
                flush=True,
            )
        append_jsonl(args.out, row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
