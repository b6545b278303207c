"""search_code's scope on real engines, on an index built by ``esqlog index``: prose out by
default, tests in or out or alone, path globs, languages; filters never change a score; a
dotted name pasted by an agent finds the function its last part names."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator

import pytest
from click.testing import CliRunner

from esqlog.agent.code_search import CodeSearch, search_kwargs
from esqlog.agent.scope import Scope
from esqlog.agent.tokens import default_counter
from esqlog.calibration.files import load_calibration
from esqlog.cli import main
from esqlog.engine.client import Engine
from tests.support.engines import ENGINE_URLS, call
from tests.support.repos import make_repo

CHANGELOG = "# Changes\n\nRewrote how ledger entries are reconciled with the journal.\n"
CODE = (
    "package ledger\n\n// Reconcile matches ledger entries with the journal.\n"
    "func Reconcile(entries []Entry, journal Journal) error {\n\treturn nil\n}\n"
)
TEST = (
    "package ledger\n\nfunc TestReconcile(t *testing.T) {\n"
    "\t// ledger entries to be reconciled with the journal\n\tReconcile(nil, Journal{})\n}\n"
)
#: (the test's comment does not quote QUESTION: a quotation would answer with it alone)


@pytest.fixture(scope="module")
def search(engine: Engine, tmp_path_factory: pytest.TempPathFactory) -> Iterator[CodeSearch]:
    repo = make_repo(tmp_path_factory.mktemp("scope") / "repo")
    (repo / "CHANGELOG.md").write_text(CHANGELOG, encoding="utf-8")
    (repo / "ledger").mkdir()
    (repo / "ledger" / "reconcile.go").write_text(CODE, encoding="utf-8")
    (repo / "ledger" / "reconcile_test.go").write_text(TEST, encoding="utf-8")
    index = f"esqlog-test-{uuid.uuid4().hex[:10]}"
    calibration = repo.parent / "code.qlog.json"
    try:
        result = CliRunner().invoke(
            main,
            [
                "index",
                str(repo),
                "--url",
                ENGINE_URLS[engine.flavor],
                "--index",
                index,
                "--calibrate",
                str(calibration),
            ],
        )
        assert result.exit_code == 0, result.output
        yield CodeSearch(engine, load_calibration(calibration), index, "content", default_counter())
    finally:
        call(engine, "DELETE", f"/{index}", ignore_unavailable="true")


def _paths(search: CodeSearch, query: str, scope: Scope) -> list[str]:
    listing = search.search(query, scope=scope).splitlines()
    return [entry[1] for line in listing if (entry := re.match(r"\d+\. ([^\s:]+):", line))]


QUESTION = "ledger entries reconciled with the journal"


def test_prose_is_out_by_default_and_in_when_asked(search: CodeSearch) -> None:
    assert "CHANGELOG.md" not in _paths(search, QUESTION, Scope())
    assert "CHANGELOG.md" in _paths(search, QUESTION, Scope(prose="include"))
    assert set(_paths(search, QUESTION, Scope(prose="only"))) == {"CHANGELOG.md"}


def test_tests_in_out_or_alone(search: CodeSearch) -> None:
    default = _paths(search, QUESTION, Scope())
    assert {"ledger/reconcile.go", "ledger/reconcile_test.go"} <= set(default)
    assert "ledger/reconcile_test.go" not in _paths(search, QUESTION, Scope(tests="exclude"))
    assert set(_paths(search, QUESTION, Scope(tests="only"))) == {"ledger/reconcile_test.go"}


def test_tests_after_draws_the_implementation_from_past_the_limit(search: CodeSearch) -> None:
    """Ranked together the test comes first and fills limit=1; ranked after (the default) the
    implementation is drawn from deeper than the limit, and the test is named as left out."""
    assert _paths(search, QUESTION + " tested", Scope(tests="include"))[0] == (
        "ledger/reconcile_test.go"
    )
    together = search.search(QUESTION + " tested", limit=1, scope=Scope(tests="include"))
    assert "ledger/reconcile.go" not in together
    after = search.search(QUESTION + " tested", limit=1).splitlines()
    assert re.match(r"1\. ledger/reconcile\.go:", after[0])
    assert "reconcile_test.go" not in "\n".join(after)
    assert re.search(r"; \d+ more past limit=1, 1 of them tests: raise limit", after[-1])


def test_globs_and_languages_keep_only_their_files(search: CodeSearch) -> None:
    assert set(_paths(search, "Reconcile func package", Scope(path="ledger/*.go"))) == {
        "ledger/reconcile.go",
        "ledger/reconcile_test.go",
    }
    assert set(_paths(search, "package", Scope(language="java"))) == {"OrderService.java"}
    assert _paths(search, "package", Scope(path="no/such/**")) == []


def test_filters_change_no_score(search: CodeSearch, engine: Engine) -> None:
    def scores(scope: Scope) -> dict[str, float]:
        found = search.client.search(
            **search_kwargs(engine.flavor, search.index, "content", QUESTION, 50, scope)
        )
        return {h["_id"]: h["_score"] for h in found["hits"]["hits"]}

    everything = scores(Scope(prose="include"))
    code_only = scores(Scope(tests="exclude"))
    assert code_only and set(code_only) < set(everything)
    for doc, score in code_only.items():
        assert score == pytest.approx(everything[doc], rel=1e-6)


def test_a_dotted_name_finds_the_function_of_its_last_part(
    search: CodeSearch, engine: Engine
) -> None:
    pasted = "ledger.Reconcile"  # the standard analyzer keeps it one token no document holds
    raw = search.client.search(
        **search_kwargs(engine.flavor, search.index, "content", pasted, 10, Scope())
    )
    assert raw["hits"]["hits"] == []
    assert _paths(search, pasted, Scope())[0] == "ledger/reconcile.go"


def test_an_unknown_field_value_finds_nothing_rather_than_failing(search: CodeSearch) -> None:
    text = search.search(QUESTION, scope=Scope(kind="no-such-kind"))
    assert text.startswith("no document has kind='no-such-kind'; this index has kind ")
    assert "function" in text.split("has kind ")[1].split(", ")


#: Lucene RegExp's operators, the optional ones (# @ & < > ~, enabled by the regexp query's
#: default flags) included; a path may hold any of them
SPECIALS = '#@&<>~.+|{}[]()"\\'


def test_each_regexp_operator_in_a_glob_is_literal_on_the_engine(engine: Engine) -> None:
    """A path holding each operator is found by its own glob and by nothing else: an
    unescaped ``@`` would match any text, ``#`` nothing, ``&`` or ``~`` another language,
    ``<1-9>`` a number range (node_modules/@types/, c#/, x<1-9>.go)."""
    from tests.support.engines import bulk_index, create_index

    paths = [f"d/x{c}y.go" for c in SPECIALS] + ["d/xy.go", "d/xzy.go", "d/x5y.go", "d/xy.gox"]
    index = create_index(
        engine,
        shards=1,
        mappings={"properties": {"path": {"type": "keyword"}, "content": {"type": "text"}}},
    )
    try:
        bulk_index(
            engine, index, [{"id": k, "path": p, "content": "code"} for k, p in enumerate(paths)]
        )
        for glob in [*(f"d/x{c}y.go" for c in SPECIALS), "d/x<1-9>y.go", "c#/"]:
            query = Scope(path=glob, prose="include").query({"match_all": {}})
            hits = call(engine, "POST", f"/{index}/_search", {"query": query, "size": 50})["hits"][
                "hits"
            ]
            want = [p for p in paths if p == glob]
            assert sorted(h["_source"]["path"] for h in hits) == want, glob
    finally:
        call(engine, "DELETE", f"/{index}", ignore_unavailable="true")
