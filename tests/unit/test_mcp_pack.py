"""I/O-free checks of search_code's packing and of the token counters (no cluster)."""

from __future__ import annotations

import pytest

from esqlog.agent.chunks import Chunk, chunk_of
from esqlog.agent.packing import pack
from esqlog.agent.tokens import CHARS_PER_TOKEN, TokenCounter, default_counter, estimate
from esqlog.cli.demo_cmd import sample_path
from esqlog.evaluation.corpus import read_jsonl

CHUNKS = [
    Chunk(id=d["id"], text=d["text"], path=d["path"], symbol=d["name"], start_line=1)
    for d in list(read_jsonl(sample_path("sample_go_docs.jsonl.gz")))[:60]
]
COUNTERS = [TokenCounter("estimate", estimate), default_counter()]


@pytest.mark.parametrize("counter", COUNTERS, ids=lambda c: c.name)
@pytest.mark.parametrize("budget", [200, 500, 2000, 8000, 50_000])
def test_pack_fits_the_whole_answer_and_keeps_order(counter: TokenCounter, budget: int) -> None:
    text, shown = pack(CHUNKS, budget, counter)
    assert counter.count(text) <= budget
    ids = [
        line.split(" id=")[1].split()[0] for line in text.splitlines() if line.startswith("--- [")
    ]
    assert len(ids) == shown
    order = [c.id for c in CHUNKS]
    assert [order.index(i) for i in ids] == sorted(order.index(i) for i in ids)
    for chunk_id in ids:  # whole chunks only
        assert next(c.text for c in CHUNKS if c.id == chunk_id) in text
    summary = text.splitlines()[-1]
    left = len(CHUNKS) - shown
    assert summary.startswith(
        f"{shown} of {len(CHUNKS)} hits shown; {left} left out for the budget of {budget} tokens"
        if left
        else f"{shown} hits shown"
    )
    if shown:
        assert text.startswith("--- [")  # the hits first, the summary after them


def test_left_out_ranks_are_compressed() -> None:
    small = Chunk(id="a", text="x\n", path=None, symbol=None, start_line=1)
    big = Chunk(id="b", text="word " * 5000, path=None, symbol=None, start_line=1)
    text, shown = pack([small, big, big, big, small], 300, COUNTERS[0])
    assert shown == 2 and "3 left out for the budget of 300 tokens (ranks 2-4)" in text


def test_estimate_rounds_up() -> None:
    assert estimate("") == 0
    assert estimate("x") == 1
    assert estimate("x" * 10) == pytest.approx(10 / CHARS_PER_TOKEN, abs=1)


def test_chunk_of_tolerates_missing_and_odd_fields() -> None:
    chunk = chunk_of(
        {"_id": 7, "_source": {"content": "a\nb\nc", "start_line": "9", "symbol": 3, "name": "f"}},
        "content",
    )
    assert (chunk.id, chunk.path, chunk.symbol, chunk.start_line, chunk.end_line) == (
        "7",
        None,
        "f",
        1,
        3,
    )
    assert chunk_of({"_id": "x"}, "content").text == ""


def test_mcp_command_bad_calibration_is_one_line(tmp_path) -> None:
    """Start-up problems are the CLI's usual one-line errors (exit 2), before any request."""
    from click.testing import CliRunner

    from esqlog.cli import main

    broken = tmp_path / "cal.json"
    broken.write_text("{not json", encoding="utf-8")
    for path in (tmp_path / "missing.json", broken):
        result = CliRunner().invoke(
            main,
            ["mcp", "--url", "http://127.0.0.1:9", "--index", "code", "--calibration", str(path)],
        )
        assert result.exit_code == 2, result.output
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error:") and str(path) in lines[0]
        assert "Traceback" not in result.output
