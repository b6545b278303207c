"""The cases the plugin's node plan is checked against (WordPlanTest.java), made by the client.

The node's plan (plugins/esqlog-terms/lucene/src/esqlog/terms/WordPlan.java) must choose the
terms and boosts the client's does (esqlog.identifiers.selection.choose, then
groups.one_shard_groups), from the inputs the client sends (esqlog.identifiers.node_plan).
This module draws queries over small made-up lists, rich in what the steps must agree on
(compounds several words hold, equal df, a word the index lacks, common words, caps,
budgets below the word count, every ``select``), plans each on the client and writes the
inputs (as node_clause sends them) and the groups into word-plans.txt beside the Java test,
which plans them on the node and compares. The test here fails when that file is not what
the client plans today: regenerate it with ``python -m tests.unit.test_word_plan_cases``.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from esqlog.identifiers.groups import one_shard_groups
from esqlog.identifiers.node_plan import node_clause
from esqlog.identifiers.query import WeighedWords
from esqlog.identifiers.selection import choose
from esqlog.identifiers.settings import IdentifierSettings

CASES = Path(__file__).parents[2] / "plugins/esqlog-terms/lucene/test/esqlog/terms/word-plans.txt"
VOCABULARY = 120


@dataclass
class _Stats:
    """What choose and one_shard_groups read of the statistics."""

    df_engine: np.ndarray
    words: list[str]
    shards: int = 1


def _case(rng: np.random.Generator, stats: _Stats) -> tuple[str, list[str]]:
    n = int(rng.integers(1, 7))
    words = [f"w{k}" for k in range(n)]
    comps = {}
    for w in words:
        ids = rng.choice(VOCABULARY, size=int(rng.integers(0, 30)), replace=False)
        # most frequent first, as calibrate writes them (ties by id)
        comps[w] = ids[np.lexsort((ids, -stats.df_engine[ids].astype(np.int64)))].astype(np.int32)
    every = dict(comps)
    if rng.random() < 0.3:  # a cap, or common="own"
        w = words[int(rng.integers(n))]
        comps[w] = comps[w][: int(rng.integers(0, 5))]
    engine_df = {w: int(rng.choice([0, 3, 50])) for w in words}
    weight = {w: float(rng.choice([0.5, 1.25, rng.random() * 4])) for w in words}
    common = frozenset(w for w in words if engine_df[w] and rng.random() < 0.3)
    select = str(rng.choice(["cover", "words", "multi", "mass"]))
    settings = IdentifierSettings(
        budget=int(rng.choice([max(1, n - 1), n, n + 3, 12, 25, 300])),
        select=select,  # type: ignore[arg-type]
        rare_first=bool(rng.random() < 0.7),
        engine_query="plugin",
    )
    weighed = WeighedWords(
        tuple(words), {}, {}, engine_df, weight, every, comps, common, settings, (), 1.0, False, ""
    )
    assert settings.budget is not None
    sent = node_clause(weighed, "body", "esqlog-words-0000000000000000", settings.budget)
    chosen = choose(list(words), comps, weight, engine_df, stats, settings, set(common), 1)
    grouped = one_shard_groups(list(words), engine_df, chosen, stats, weight, set(common), False)
    lines = [f"case\t{settings.budget}\t{select}"]
    for entry in sent.get("esqlog_identifiers", {}).get("words", []):
        ids = every[entry["word"]]
        lines.append(
            "\t".join(
                [
                    "word",
                    entry["word"],
                    float(entry["weight"]).hex(),
                    str(int(entry["first"])),
                    repr(entry["tier"]),
                    str(entry.get("limit", -1)),
                    str(int(entry["own"])),
                    str(int(entry["apart"])),
                    ",".join(str(i) for i in ids.tolist()),
                    ",".join(str(d) for d in stats.df_engine[ids].tolist()),
                ]
            )
        )
    for groups, _ in grouped:
        for terms, boost in groups:
            lines.append(f"group\t{float(boost).hex()}\t{','.join(sorted(terms))}")
    return "\n".join(lines), [t for groups, _ in grouped for terms, _ in groups for t in terms]


def cases_text(count: int = 250, seed: int = 7) -> str:
    """The cases file: a header, then each case's inputs and expected groups."""
    rng = np.random.default_rng(seed)
    # few df values, so that equal masses are common; a fifth of the compounds gone (df 0)
    df = rng.choice([0, 1, 2, 3, 5, 8, 13, 40], size=VOCABULARY).astype(np.uint32)
    stats = _Stats(df, [f"c{i}" for i in range(VOCABULARY)])
    out = [
        "# made by tests/unit/test_word_plan_cases.py from the client's plan: do not edit",
        "# case budget select / word name weight first tier limit own apart ids df"
        " / group boost terms",
    ]
    out += [_case(rng, stats)[0] + "\nend" for _ in range(count)]
    return "\n".join(out) + "\n"


def test_the_cases_are_what_the_client_plans_today() -> None:
    assert CASES.read_text("utf-8") == cases_text(), (
        "the client's plan changed: python -m tests.unit.test_word_plan_cases, then run "
        "scripts/engines/test-plugin-java.sh (the node must plan the same)"
    )


def test_the_cases_cover_what_the_steps_must_agree_on() -> None:
    text = cases_text()
    words = [line.split("\t") for line in text.splitlines() if line.startswith("word\t")]
    assert any(w[3] == "1" for w in words)  # a first clause that is a compound
    assert any(w[4] == "2.0" for w in words)  # a common word's tier
    assert any(w[5] != "-1" for w in words)  # a cap
    assert any(w[7] == "1" for w in words)  # a word apart
    cases = text.split("\nend")
    assert sum("\tgroup" not in c and "\ngroup" not in c for c in cases) < len(cases) / 4
    assert all(s in text for s in ("\tcover", "\twords", "\tmulti", "\tmass"))


if __name__ == "__main__":
    CASES.write_text(cases_text(), "utf-8")
    sys.stdout.write(f"wrote {CASES}\n")
