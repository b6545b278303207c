"""search_code's default listing and read_code's numbered lines, with no cluster.

The listing must say where each hit is in the form read_code takes (path:start-end), show
the signature and doc line a model decides by, never a long id for a located chunk, and
fit the budget as counted on the final text.
"""

from __future__ import annotations

import re

import pytest

from esqlog.agent.chunks import Chunk, chunk_of
from esqlog.agent.outline import MAX_LINE_CHARS, outline
from esqlog.agent.packing import listing_entry, pack_listing, pack_ranks
from esqlog.agent.reading import numbered
from esqlog.agent.tokens import TokenCounter, default_counter, estimate
from esqlog.cli.demo_cmd import sample_path
from esqlog.evaluation.corpus import read_jsonl

COUNTERS = [TokenCounter("estimate", estimate), default_counter()]
ENTRY = re.compile(r"^(\d+)\. (\S+):(\d+)-(\d+)(?: (\S+))?$", re.M)


def located(
    id: str, text: str, path: str = "a/b.go", start: int = 10, symbol: str | None = "T.f"
) -> Chunk:
    return Chunk(id=id, text=text, path=path, symbol=symbol, start_line=start, lines_known=True)


@pytest.mark.parametrize(
    ("text", "signature", "doc"),
    [
        (
            "// WriteRune appends the UTF-8 encoding of r\n// to b.\n"
            "func (b *Builder) WriteRune(r rune) (int, error) {\n\treturn 0, nil\n}\n",
            "func (b *Builder) WriteRune(r rune) (int, error) {",
            "WriteRune appends the UTF-8 encoding of r",
        ),
        (
            "    @property\n    def end_line(self) -> int:\n"
            '        """Last line.\n\n        More.\n        """\n        return 1\n',
            "def end_line(self) -> int:",
            "Last line.",
        ),
        (
            "def scroll(\n    index: str,\n    body: dict,\n) -> None:\n    '''Pages.'''\n",
            "def scroll(index: str, body: dict,) -> None:",
            "Pages.",
        ),
        (
            "/**\n * Returns the thing.\n */\n@Override\npublic int thing() {\n  return 1;\n}\n",
            "public int thing() {",
            "Returns the thing.",
        ),
        (
            '"""Module doc.\n\nMore."""\n\nfrom __future__ import annotations\n\n'
            "from x import (\n    a,\n    b,\n)\n\nLIMIT = 3\n",
            "LIMIT = 3",
            "Module doc.",
        ),
        ("#include <stdio.h>\n#include <string.h>\n", "#include <stdio.h>", None),
        (
            "#include <stdio.h>\n/* Entry point. */\nint main(void) {\n",
            "int main(void) {",
            "Entry point.",
        ),
        ("   \n\n", None, None),
    ],
)
def test_outline_finds_signature_and_doc(text: str, signature: str | None, doc: str | None) -> None:
    assert outline(text) == (signature, doc)


def test_outline_cuts_long_lines() -> None:
    params = ", ".join(f"a{i}" for i in range(99))
    signature, doc = outline(f"# {'word ' * 100}\ndef f({params}):\n")
    assert signature is not None and doc is not None
    assert len(signature) == len(doc) == MAX_LINE_CHARS and signature.endswith("…")


def test_listing_entry_names_what_read_code_takes_and_no_id() -> None:
    chunk = located("0123456789abcdef0123", "// Run runs.\nfunc (t T) f() {\n}\n", start=40)
    entry = listing_entry(chunk, 3)
    assert entry.splitlines() == ["3. a/b.go:40-42 T.f", "   func (t T) f() {", "   Run runs."]
    assert "0123456789abcdef0123" not in entry


def test_listing_entry_of_a_document_without_lines_keeps_its_id() -> None:
    chunk = chunk_of({"_id": "abc", "_source": {"content": "x = 1\n", "path": "p.py"}}, "content")
    assert not chunk.located
    assert listing_entry(chunk, 1).splitlines()[0] == "1. id=abc p.py lines 1-1"
    assert "id=abc" in chunk.header(1)
    assert "id=" not in located("abc", "x\n").header(1)


def _sample(n: int) -> list[Chunk]:
    """n real Go functions of at least 5 lines (the sample starts with one-liners)."""
    records = [
        r for r in read_jsonl(sample_path("sample_go_docs.jsonl.gz")) if r["text"].count("\n") >= 4
    ][:n]
    return [
        located(r["id"], r["text"], r["path"], 1 + 10 * i, r["name"]) for i, r in enumerate(records)
    ]


@pytest.mark.parametrize("counter", COUNTERS, ids=lambda c: c.name)
@pytest.mark.parametrize("budget", [200, 500, 2000, 20_000])
def test_listing_fits_the_budget_in_rank_order(counter: TokenCounter, budget: int) -> None:
    chunks = _sample(60)
    text, shown = pack_listing(chunks, budget, counter)
    assert counter.count(text) <= budget
    entries = [(int(m.group(1)), m.group(2), int(m.group(3))) for m in ENTRY.finditer(text)]
    assert [rank for rank, _, _ in entries] == shown == list(range(1, len(shown) + 1))
    for rank, path, start in entries:
        assert (path, start) == (chunks[rank - 1].path, chunks[rank - 1].start_line)
    assert ENTRY.match(text.splitlines()[0]) if shown else True  # the hits first
    summary = text.splitlines()[-1]
    assert summary.startswith(
        f"{len(shown)} of 60 hits shown; {60 - len(shown)} left out "
        f"for the budget of {budget} tokens"
        if len(shown) < 60
        else "60 hits shown; code: read_code("
    )
    if budget >= 2000:
        assert len(shown) >= 20  # a listing is a few dozen tokens a hit


def test_default_listing_costs_a_fraction_of_the_code() -> None:
    """20 hits: the listing within 2,000 tokens, the same hits as code need several times
    more (the reason the listing is the default)."""
    counter = default_counter()
    chunks = _sample(20)
    listing, shown = pack_listing(chunks, 2000, counter)
    code, _ = pack_ranks(chunks, 20_000, counter)
    assert len(shown) == 20
    assert counter.count(listing) * 3 < counter.count(code)


@pytest.mark.parametrize("counter", COUNTERS, ids=lambda c: c.name)
def test_alternating_hits_never_exceed_the_budget(counter: TokenCounter) -> None:
    """200 hits alternating tiny and large: the final text, as sent, stays in budget."""
    small = "func a() {}\n"
    big = "\n".join(f'\tx{i} := strings.Repeat("é字", {i})' for i in range(300)) + "\n"
    chunks = [located(f"c{i}", small if i % 2 else big, f"p{i}.go", 1 + i) for i in range(200)]
    for packer in (pack_listing, pack_ranks):
        text, shown = packer(chunks, 2000, counter)
        assert counter.count(text) <= 2000 and shown, packer.__name__


def test_numbered_lines_are_right_aligned() -> None:
    assert numbered([(9, "a"), (10, ""), (11, "  b")]) == " 9\ta\n10\t\n11\t  b"
    assert numbered([]) == ""


def test_doc_after_a_signature_longer_than_the_cut() -> None:
    params = "".join(f"    argument_number_{i}: int,\n" for i in range(12))
    signature, doc = outline(f'def f(\n{params}) -> None:\n    """Does f."""\n')
    assert signature is not None and signature.startswith("def f(argument_number_0: int,")
    assert doc == "Does f."


def test_past_the_outlined_hits_an_entry_is_one_line() -> None:
    from esqlog.agent.packing import OUTLINED

    chunks = [
        located(
            f"id{k}", f"// F{k} does k.\nfunc F{k}() {{\n}}\n", start=10 * k + 1, symbol=f"F{k}"
        )
        for k in range(OUTLINED + 5)
    ]
    text, shown = pack_listing(chunks, 20_000, default_counter())
    assert shown == list(range(1, OUTLINED + 6))
    body = text.splitlines()[:-1]
    heads = [i for i, line in enumerate(body) if ENTRY.match(line)]
    assert len(heads) == OUTLINED + 5
    assert all(body[i + 1] == f"   func F{k}() {{" for k, i in enumerate(heads[:OUTLINED]))
    assert body[heads[OUTLINED] :] == [
        f"{k + 1}. a/b.go:{10 * k + 1}-{10 * k + 3} F{k}" for k in range(OUTLINED, OUTLINED + 5)
    ]


@pytest.mark.parametrize("counter", COUNTERS, ids=lambda c: c.name)
def test_a_listing_keeps_room_for_its_summary_at_every_budget(counter: TokenCounter) -> None:
    """Each entry is listed only when it fits with SUMMARY_RESERVE tokens left for the summary
    line: an entry past that point is never shown, whatever the final text would count."""
    from esqlog.agent.packing import SUMMARY_RESERVE

    chunks = [
        located(
            f"c{k}",
            f"def handler_{k}(request):\n    '''Serve {k}.'''\n",
            path=f"pkg/mod{k}.py",
            start=k + 1,
            symbol=f"handler_{k}",
        )
        for k in range(30)
    ]
    for budget in range(SUMMARY_RESERVE, 900, 7):
        _, shown = pack_listing(chunks, budget, counter)
        cost = sum(counter.count(listing_entry(chunks[r - 1], r, outlined=r <= 10)) for r in shown)
        assert cost + SUMMARY_RESERVE <= budget, (budget, shown)
        assert shown == list(range(1, len(shown) + 1))  # best first, no gap


def test_the_summary_names_every_hit_left_out_the_last_included() -> None:
    counter = COUNTERS[0]
    chunks = [
        located(
            f"c{k}",
            f"def handler_{k}(request):\n    '''Serve {k}.'''\n",
            path=f"pkg/mod{k}.py",
            start=k + 1,
            symbol=f"handler_{k}",
        )
        for k in range(30)
    ]
    text, shown = pack_listing(chunks, 300, counter)
    assert 0 < len(shown) < 30
    assert f"{30 - len(shown)} left out" in text.splitlines()[-1]
    assert f"(ranks {len(shown) + 1}-30)" in text.splitlines()[-1]
