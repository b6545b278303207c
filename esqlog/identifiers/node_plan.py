"""The identifiers query planned on the node: ``esqlog_identifiers``, the words and their weights.

Why: on the client, choosing each word's compounds within the clause budget
(esqlog.identifiers.selection) and laying out their groups took most of the mode's Python
time per search (~0.5 ms of ~0.6 on Go 153K), and the ~300 chosen terms made an 8 KB body
the node parsed again. The esqlog-terms plugin (1.9.0 and later) chooses them itself: the
client sends each word of the query's split stream with its weight, and the coordinating
node reads the words' compound lists from the word-lists index calibrate wrote
(esqlog.identifiers.word_lists), runs the same budget and groups (WordPlan.java, the same
steps as choose and one_shard_groups), and rewrites the query into the ``esqlog_terms``
groups the client would have sent: the same terms, the same boosts, so the same hits and
scores (tests/engine/test_node_plan.py compares them on every engine).

Only the plugin's one-shard layout is planned there, and only without an ``and`` or
``minimum_should_match`` filter (its clauses list each token's chosen terms) and within
budgets the node's lists cover (under MULTI_SCAN); anything else is planned here as before.
"""

from __future__ import annotations

from typing import Any

from esqlog.identifiers.query import WeighedWords
from esqlog.identifiers.selection import MULTI_SCAN

#: the plugin's query name (WordsQueryBuilder), as both engines register it
QUERY_NAME = "esqlog_identifiers"
#: the first esqlog-terms release that plans select "all" (WholeWordQuery); an older node
#: refuses the value, and the wrapper plans on the client from then on (with "cover")
EVERY = "1.11.0"


def fits(budget: int, words: int, allowed: int, every: bool = False) -> bool:
    """Whether the node can plan this query: its budget within the lists the node keeps
    (each word's first MULTI_SCAN compounds) and its terms surely within ``allowed`` (a word
    sends its own term or its first compound, then picks from ``budget - words`` more);
    ``every`` (select "all"): at most two clauses a word, its own term and its whole group."""
    if every:
        return budget < MULTI_SCAN and 2 * words <= allowed
    return budget < MULTI_SCAN and max(budget, words) <= allowed


def node_clause(weighed: WeighedWords, field: str, lists: str, budget: int) -> dict[str, Any]:
    """The ``esqlog_identifiers`` clause of one match: what the node's plan reads of each
    word (WordPlan.Word), in the query's order."""
    # read once, not per word: a search builds this on a CPU cache the engine's work evicted
    # while the client waited (docs/benchmarks/identifiers.md, 2026-12-07)
    settings = weighed.settings
    rare_first, weight, common = settings.rare_first, weighed.weight, weighed.common
    engine_df, comps, every = weighed.engine_df, weighed.comps, weighed.every
    words = []
    for w in weighed.present:
        own = engine_df.get(w, 0) > 0
        size = comps[w].size
        apart = w in common
        entry: dict[str, Any] = {
            "word": w,
            "weight": weight[w],
            "first": not own and size > 0,  # WeighedWords.first
            "tier": 2.0 if rare_first and apart else 1.0,
            "own": own,
            "apart": apart,
        }
        if size < every[w].size:  # a cap, or common="own"
            entry["limit"] = int(size)
        words.append(entry)
    if not words:
        return {"match_none": {}}
    return {
        QUERY_NAME: {
            "field": field,
            "lists": lists,
            "budget": budget,
            # "auto" reaches here only where every node keeps whole words (engine_query);
            # a plain text too takes every compound there (WeighedWords.whole_words)
            "select": "all" if weighed.whole_words else settings.select,
            "words": words,
        }
    }
