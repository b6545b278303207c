"""read_code(path=...) reads every chunk of a file, however many pages that takes.

It used to ask for one page of 1,000 documents: a file cut into more chunks lost its
later functions from a "whole file" read, and valid line ranges past them were refused.
One file of 1,203 one-line chunks (more than one default page) is read whole and by a
late range; a page size of 7 injected into CodeSearch makes the same reads take ~170
scroll pages, and a second file with the same path prefix must not leak in.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from esqlog.agent.code_search import CodeSearch
from esqlog.agent.reading import PATH_PAGE, numbered
from esqlog.agent.tokens import TokenCounter, estimate
from esqlog.calibration.calibrate import calibrate
from esqlog.engine.client import Engine
from tests.support.engines import bulk_index, call, create_index

N_CHUNKS = PATH_PAGE + 203


def _line(n: int) -> str:
    return f"func f{n}() int {{ return {n} }}"


@pytest.fixture(scope="module")
def indexed(engine: Engine) -> Iterator[tuple[str, Any]]:
    docs = [
        {
            "id": f"big-{n}",
            "content": _line(n) + "\n",
            "path": "pkg/big.go",
            "symbol": f"f{n}",
            "start_line": n,
            "end_line": n,
        }
        for n in range(1, N_CHUNKS + 1)
    ]
    docs.append(
        {
            "id": "other",
            "content": "package other\n",
            "path": "pkg/big.go.orig",
            "start_line": 1,
            "end_line": 1,
        }
    )
    index = create_index(
        engine,
        shards=2,
        mappings={
            "properties": {
                "content": {"type": "text"},
                "path": {"type": "keyword"},
                "symbol": {"type": "keyword"},
                "start_line": {"type": "integer"},
                "end_line": {"type": "integer"},
            }
        },
    )
    try:
        bulk_index(engine, index, docs)
        yield index, calibrate(engine, index, "content")
    finally:
        call(engine, "DELETE", f"/{index}")


@pytest.mark.parametrize("page_size", [PATH_PAGE, 7])
def test_whole_file_of_more_chunks_than_a_page(
    engine: Engine, indexed: Any, page_size: int
) -> None:
    index, calibration = indexed
    counter = TokenCounter("estimate", estimate)
    tool = CodeSearch(engine, calibration, index, "content", counter, page_size=page_size)
    whole = tool.read(None, "pkg/big.go", 1, N_CHUNKS)  # a range: the 20,000-token cap
    assert whole == numbered([(n, _line(n)) for n in range(1, N_CHUNKS + 1)])
    late = tool.read(None, "pkg/big.go", N_CHUNKS - 2, N_CHUNKS)
    assert late.splitlines() == [f"{n}\t{_line(n)}" for n in range(N_CHUNKS - 2, N_CHUNKS + 1)]


def test_scroll_contexts_are_released(
    engine: Engine, indexed: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each read clears its scroll: the id it paged with is gone from the engine after."""
    from esqlog.engine.steps import Request

    index, calibration = indexed
    tool = CodeSearch(
        engine, calibration, index, "content", TokenCounter("e", estimate), page_size=50
    )
    sent: list[Request] = []
    perform = engine.perform

    def recording(request: Request) -> Any:
        sent.append(request)
        return perform(request)

    monkeypatch.setattr(engine, "perform", recording)
    tool.read(None, "pkg/big.go", 1, 2)
    monkeypatch.undo()
    cleared = [r for r in sent if r.method == "DELETE" and "scroll" in r.path]
    pages = [r for r in sent if r.method == "POST" and r.path.endswith("/_search/scroll")]
    assert len(cleared) == 1 and len(pages) >= N_CHUNKS // 50
    scroll_id = cleared[0].body["scroll_id"][0]
    with pytest.raises(Exception) as gone:
        engine.perform(
            Request("POST", "/_search/scroll", body={"scroll": "1m", "scroll_id": scroll_id})
        )
    assert "404" in str(gone.value) or "search_context_missing" in str(gone.value)


def test_read_is_cut_at_the_token_cap_with_where_to_go_on(engine: Engine, indexed: Any) -> None:
    """A whole-file read is cut at WHOLE_READ_TOKENS (budgeted like a search), a ranged one at
    MAX_READ_TOKENS, the last line naming the start_line to go on from; that continuation
    starts exactly where the cut was."""
    from esqlog.agent.reading import MAX_READ_TOKENS, WHOLE_READ_TOKENS

    index, calibration = indexed
    counter = TokenCounter("words", lambda text: 20 * len(text.split()))  # 1,203 lines > cap
    tool = CodeSearch(engine, calibration, index, "content", counter)
    ranged = tool.read(None, "pkg/big.go", 1, N_CHUNKS)
    assert WHOLE_READ_TOKENS < counter.count(ranged) <= MAX_READ_TOKENS
    assert f"over {MAX_READ_TOKENS} tokens" in ranged.splitlines()[-1]
    first = tool.read(None, "pkg/big.go", None, None)
    assert counter.count(first) <= WHOLE_READ_TOKENS
    *shown, note = first.splitlines()
    last = int(shown[-1].split("\t")[0])
    assert 1 < last < N_CHUNKS
    assert note == (
        f"[lines {last + 1}-{N_CHUNKS} not shown: over {WHOLE_READ_TOKENS} tokens; "
        f"read_code(path='pkg/big.go', start_line={last + 1})]"
    )
    rest = tool.read(None, "pkg/big.go", last + 1, None)
    assert rest.splitlines()[0].lstrip().startswith(f"{last + 1}\t")
