"""How far the fallback token estimate (characters / CHARS_PER_TOKEN) is from o200k_base.

esqlog mcp counts budgets with o200k_base (rs-bpe, the ``mcp`` extra); without rs-bpe it
falls back to an estimate. This prints, per corpus, the measured characters per token and
the estimate's relative error per document (median, 5th/95th percentile, share of
documents it under-counts, i.e. where a budget could be exceeded).

    .venv/bin/python -m scripts.bench.token_estimate [corpus docs.jsonl ...]

Without arguments: the bundled Go sample, plus /work/data/corpora/*/docs.jsonl if present.
"""

from __future__ import annotations

import argparse
import itertools
from pathlib import Path

import numpy as np

from esqlog.agent.tokens import CHARS_PER_TOKEN, estimate
from esqlog.cli.demo_cmd import sample_path
from esqlog.evaluation.corpus import read_jsonl

LIMIT = 20_000


def main(paths: list[Path]) -> None:
    from rs_bpe.bpe import openai

    bpe = openai.o200k_base()
    print(
        f"estimate = ceil(chars / {CHARS_PER_TOKEN:g}); reference o200k_base; "
        f"first {LIMIT:,} documents of each"
    )
    print(
        f"{'corpus':<40} {'docs':>6} {'chars/tok':>9} {'err p5':>7} {'median':>7} "
        f"{'p95':>7} {'under':>6}"
    )
    for path in paths:
        texts = [d["text"] for d in itertools.islice(read_jsonl(path), LIMIT) if d["text"]]
        real = np.array([bpe.count(t) for t in texts], dtype=float)
        guess = np.array([estimate(t) for t in texts], dtype=float)
        chars = sum(len(t) for t in texts)
        error = (guess - real) / real
        p5, p50, p95 = np.percentile(error, [5, 50, 95])
        print(
            f"{str(path)[-40:]:<40} {len(texts):>6} {chars / real.sum():>9.2f} "
            f"{p5:>+7.1%} {p50:>+7.1%} {p95:>+7.1%} {np.mean(error < 0):>6.1%}"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("docs", nargs="*", type=Path, help="corpus docs.jsonl files")
    given = parser.parse_args().docs
    main(
        given
        or [
            sample_path("sample_go_docs.jsonl.gz"),
            *sorted(Path("/work/data/corpora").glob("*/docs.jsonl")),
        ]
    )
