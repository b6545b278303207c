"""Names as agents write them: where search_code lists the definition a name query names.

    python -m scripts.bench.agent_names --url http://127.0.0.1:19200 \
        --repo httpx=/tmp/an/encode+httpx --repo gin=/tmp/an/gin-gonic+gin

Each repository (a checkout: encode/httpx and gin-gonic/gin, the queries below) is indexed
with ``esqlog index --calibrate`` into a scratch index (deleted after); each query is sent
through search_code (esqlog.agent.code_search.CodeSearch, the MCP tool's logic) in the
boost and identifiers modes. Printed per query and mode: the rank of the listing line whose
symbol is the named definition (the gold symbol, named with the query below from the
repository's own source), the answer's tokens, and for names nothing defines the answer's
first line. The queries are the ones agents wrote in the trial the issue reports (``httpx.Client``
... ``RetryTransport``), not a sample: a regression check, not a rate.
"""

from __future__ import annotations

import argparse
import re
import sys

from esqlog.agent.code_search import CodeSearch
from esqlog.agent.tokens import default_counter
from scripts.bench.harness import add_url, engine_at, indexed_repo

#: repository -> [(query, the definition's symbol as esqlog index names it, or None)]
QUERIES = {
    "httpx": [
        ("httpx.Client", "Client"),
        ("httpx.Timeout", "Timeout"),
        ("httpx.Response", "Response"),
        ("httpx.get", "get"),
        ("httpx.AsyncClient", "AsyncClient"),
        ("Timeout.__init__", "Timeout.__init__"),
        ("RetryTransport", None),
    ],
    "gin": [
        ("binding.Default", "Default"),
        ("github.com/gin-gonic/gin.(*Context).Next", "Context.Next"),
        ("Context.ClientIP", "Context.ClientIP"),
        ("ServeHTTP", "Engine.ServeHTTP"),
        ("RetryTransport", None),
    ],
}


def rank(listing: str, symbol: str) -> int | None:
    ranked = [line for line in listing.splitlines() if re.match(r"^\s*\d+\. ", line)]
    return next(
        (k for k, line in enumerate(ranked, 1) if line.rstrip().endswith(" " + symbol)), None
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_url(parser)
    parser.add_argument("--repo", action="append", default=[], metavar="NAME=PATH")
    args = parser.parse_args()
    engine = engine_at(args.url)
    counter = default_counter()
    print(f"{'query':44} {'mode':11} {'rank':>4} {'tokens':>6}  note")
    for spec in args.repo:
        name, path = spec.split("=", 1)
        with indexed_repo(engine, args.url, path, "esqlog-bench-names") as (index, cal, field):
            for mode in ("boost", "identifiers"):
                search = CodeSearch(engine, cal, index, field, counter, mode=mode)
                for query, symbol in QUERIES[name]:
                    answer = search.search(query)
                    found = rank(answer, symbol) if symbol else None
                    note = answer.splitlines()[0][:60] if symbol is None else ""
                    print(
                        f"{query:44} {mode:11} {found or '-':>4} {counter.count(answer):>6}  {note}"
                    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
