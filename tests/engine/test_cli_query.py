"""esqlog search and esqlog explain through the real CLI against both engines.

Scores printed by ``search`` are checked against the independent pure-Python BM25 oracle,
``explain``'s numbers against esqlog.scoring.qlog on statistics fetched separately, and every bad
input must end in exit code 2 with a single ``error:`` line and no traceback.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from esqlog.calibration.calibrate import calibrate
from esqlog.calibration.files import save_calibration
from esqlog.calibration.record import Calibration
from esqlog.cli import main
from esqlog.engine.client import Engine
from esqlog.engine.failures import error_status
from esqlog.scoring.qlog import boost_weight, idf, idf_lucene
from esqlog.statistics.terms import shard_routings_plan, text_stats_plan
from tests.support.code_snippets import SNIPPETS
from tests.support.engines import ENGINE_URLS, bulk_index, call
from tests.support.lucene_bm25 import bm25_doc

ROOT = Path(__file__).resolve().parents[2]
#: Documents that make "config error" rank differently under q-log IDF: the rare term wins.
EXTRA = {
    "hot": "error error error error error error nil return error",
    "rare1": "func LoadConfig(path string) (*Config, error) { parse the config file at path and "
    "validate every section of it before returning it to the caller }",
    "rare2": "config defaults",
}


@dataclasses.dataclass(frozen=True)
class Corpus:
    engine: Engine
    index: str
    calibration: Calibration
    path: Path
    tokens: dict[str, list[str]]

    @property
    def url(self) -> str:
        return ENGINE_URLS[self.engine.flavor]


@pytest.fixture(scope="module")
def corpus(engine: Engine, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Corpus]:
    """Snippets plus EXTRA on 2 shards, English stop words, ``name`` on EXTRA docs only."""
    index = f"esqlog-test-cli-{os.urandom(4).hex()}"
    call(
        engine,
        "PUT",
        f"/{index}",
        {
            "settings": {
                "number_of_shards": 2,
                "number_of_replicas": 0,
                "analysis": {
                    "analyzer": {"default": {"type": "standard", "stopwords": "_english_"}}
                },
            },
            "mappings": {"properties": {"body": {"type": "text"}, "name": {"type": "keyword"}}},
        },
    )
    docs = [{"id": f"s{i}", "body": s} for i, s in enumerate(SNIPPETS)]
    docs += [{"id": k, "body": v, "name": k.upper()} for k, v in EXTRA.items()]
    bulk_index(engine, index, docs)
    record = calibrate(engine, index, "body")
    path = save_calibration(record, tmp_path_factory.mktemp("cal") / f"{engine.flavor}.json")
    tokens = {str(d["id"]): _analyze(engine, index, str(d["body"])) for d in docs}
    yield Corpus(engine, index, record, path, tokens)
    call(engine, "DELETE", f"/{index}")


def _analyze(engine: Engine, index: str, text: str) -> list[str]:
    found = call(engine, "POST", f"/{index}/_analyze", {"field": "body", "text": text})
    return [t["token"] for t in found["tokens"]]


def _run(corpus: Corpus, command: str, *args: str, calibration: Path | None = None) -> Result:
    argv = [
        command,
        "--url",
        corpus.url,
        corpus.index,
        *args,
        "--calibration",
        str(calibration or corpus.path),
    ]
    return CliRunner().invoke(main, argv)


def _ok(result: Result) -> Result:
    assert result.exit_code == 0, (result.output, result.exception)
    return result


def _one_line_error(result: Result, code: int = 2) -> str:
    assert result.exit_code == code, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.output
    return lines[0]


def _oracle_scores(corpus: Corpus, query: str, q: float) -> dict[str, float]:
    """q-log BM25 of every matching document by the independent pure-Python formula."""
    terms = _analyze(corpus.engine, corpus.index, query)
    N = len(corpus.tokens)
    avgdl = sum(len(t) for t in corpus.tokens.values()) / N
    df = {t: sum(1 for toks in corpus.tokens.values() if t in toks) for t in terms}
    out = {}
    for doc_id, toks in corpus.tokens.items():
        tf = {t: toks.count(t) for t in terms}
        score = bm25_doc(
            terms,
            tf,
            len(toks),
            avgdl,
            df,
            N,
            q,
            k1_plus_one=corpus.engine.flavor == "elasticsearch",
        )
        if score:
            out[doc_id] = score
    return out


def _native_ids(corpus: Corpus, query: str, size: int) -> list[str]:
    found = call(
        corpus.engine,
        "POST",
        f"/{corpus.index}/_search",
        {"query": {"match": {"body": query}}, "size": size},
        search_type="dfs_query_then_fetch",
    )
    return [h["_id"] for h in found["hits"]["hits"]]


# --- search ---------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["boost", "rerank"])
def test_search_scores_are_qlog_bm25(corpus: Corpus, mode: str) -> None:
    result = _ok(_run(corpus, "search", "config error", "--json", "--mode", mode, "--size", "30"))
    out = json.loads(result.stdout)
    assert out["q"] == corpus.calibration.q and out["terms"] == ["config", "error"]
    expected = _oracle_scores(corpus, "config error", corpus.calibration.q)
    got = {h["id"]: h["score"] for h in out["hits"]}
    assert got.keys() == expected.keys()
    for doc_id, score in expected.items():
        assert got[doc_id] == pytest.approx(score, rel=1e-4), doc_id
    assert [h["rank"] for h in out["hits"]] == list(range(1, len(out["hits"]) + 1))


def test_search_table_shows_ids_scores_and_labels(corpus: Corpus) -> None:
    out = _ok(_run(corpus, "search", "config error", "--size", "5")).stdout
    lines = out.splitlines()
    assert f"q={corpus.calibration.q:g}" in lines[0] and "mode boost" in lines[0]
    assert lines[1].split()[:2] == ["1", "rare2"] and lines[1].endswith("RARE2")
    assert any(line.split()[1] == "rare1" and line.endswith("RARE1") for line in lines[1:])
    assert any(line.split()[1] == "hot" for line in lines[1:])
    assert len(lines) == 6
    snippet = next(line for line in lines[1:] if line.split()[1].startswith("s"))
    assert "..." in snippet or len(snippet) < 120  # first 80 characters of the body


def test_search_compare_shows_both_rankings_and_marks_moves(corpus: Corpus) -> None:
    out = _ok(_run(corpus, "search", "config error", "--compare", "--size", "5")).stdout
    header = out.splitlines()[1]
    assert "native id" in header and "q-log id" in header and "moved" in header
    rows = [line.split("|") for line in out.splitlines()[2:]]
    native = [r[0].split()[1] for r in rows]
    qlog = [r[1].split()[0] for r in rows]
    assert native == _native_ids(corpus, "config error", 5)
    assert native[:2] == ["rare1", "rare2"] and qlog[:2] == ["rare2", "rare1"]
    assert rows[0][1].split()[-2:] == ["up", "1"] and rows[1][1].split()[-2:] == ["down", "1"]
    assert len(rows[2][1].split()) == 2  # unmoved: id and score only

    data = json.loads(
        _ok(_run(corpus, "search", "config error", "--compare", "--json", "--size", "5")).stdout
    )
    assert [h["id"] for h in data["native"]] == native
    assert [h["id"] for h in data["hits"]] == qlog


def test_search_accepts_tab_and_newline(corpus: Corpus) -> None:
    out = json.loads(_ok(_run(corpus, "search", "config\terror\n", "--json")).stdout)
    assert out["hits"][0]["id"] == "rare2"


def test_search_warns_on_a_stale_calibration(corpus: Corpus, tmp_path: Path) -> None:
    stale = dataclasses.replace(corpus.calibration, live_docs=corpus.calibration.live_docs * 3)
    path = save_calibration(stale, tmp_path / "stale.json")
    result = _ok(_run(corpus, "search", "config error", calibration=path))
    assert result.stderr.startswith("warning: the index changed by")
    assert "rare2" in result.stdout


def test_script_mode_on_elasticsearch_without_painless(corpus: Corpus) -> None:
    if corpus.engine.flavor != "elasticsearch":
        pytest.skip("OpenSearch runs Painless")
    # Script mode scripts only terms in at most 1% of the documents (the rest get boosts of
    # the same weight, which need no Painless). The wrapper asks for the stored script first,
    # so a query without any rare term ("config error" on these 23 documents) fails the same
    # way as one with a rare term: the outcome does not depend on the query.
    for text in ("config error", "config error zzznothere"):
        line = _one_line_error(_run(corpus, "search", text, "--mode", "script"))
        assert "script mode cannot run on this cluster: this cluster has no Painless" in line
        assert "--mode boost" in line and "--install-script" not in line, text
        # auto never asks for the script: boost here (no identifiers statistics)
        result = _ok(_run(corpus, "search", text, "--mode", "auto", "--json"))
        assert json.loads(result.stdout)["mode"] == "boost", text
        assert json.loads(result.stdout)["hits"][0]["id"] == "rare2", text
    table = _ok(_run(corpus, "search", "config error"))  # auto, the default, names its choice
    assert "mode boost)" in table.stdout and not table.stderr


# --- explain --------------------------------------------------------------------------------


def test_explain_numbers_equal_qlog_on_the_statistics(corpus: Corpus) -> None:
    text = "Config error, ERROR and zzznothere"
    out = json.loads(_ok(_run(corpus, "explain", text, "--json")).stdout)
    cal = corpus.calibration
    assert out["q"] == cal.q and out["predictor"] == f"{cal.predictor} v{cal.predictor_version}"
    assert out["engine"] == corpus.engine.label
    routings = corpus.engine.run(shard_routings_plan(corpus.index, cal.shards))
    stats = corpus.engine.run(text_stats_plan(corpus.index, "body", text, routings))
    assert [r["term"] for r in out["terms"]] == ["config", "error", "zzznothere"]
    assert [r["occurrences"] for r in out["terms"]] == [1, 2, 1]
    for row in out["terms"]:
        n, N = stats.df[row["term"]], stats.field.doc_count
        assert (
            (row["n"], row["N"])
            == (n, N)
            == (sum(1 for t in corpus.tokens.values() if row["term"] in t), len(corpus.tokens))
        )
        assert row["idf"] == pytest.approx(float(idf_lucene(n, N)), rel=1e-12)
        assert row["idf_q"] == pytest.approx(float(idf(n, N, cal.q, cal.idf_form)), rel=1e-12)
        assert row["weight"] == pytest.approx(float(boost_weight(n, N, cal.q)), rel=1e-12)


def test_explain_table(corpus: Corpus) -> None:
    out = _ok(_run(corpus, "explain", "config error zzznothere")).stdout.splitlines()
    assert f"q {corpus.calibration.q:g}" in out[0] and f"{corpus.calibration.predictor} v" in out[0]
    assert corpus.engine.flavor in out[0]
    assert out[1].split() == ["term", "n", "N", "idf", "idf_q", "weight"]
    assert out[2].split()[0] == "config" and out[4].endswith("(not in the index)")


# --- bad input: exit 2, one line, no traceback ---------------------------------------------

BAD_TEXT = {
    "": "query text is empty; pass the words to search for",
    "   \t\n ": "query text is empty; pass the words to search for",
    "... !!! ?? ---": "analyzes to no terms",
    "the and of a": "analyzes to no terms",  # English stop words only
    "read\x07file": "control character (U+0007",
    "read\x1b[31mfile": "control character (U+001B",
    "read\rfile": "control character (U+000D",
    "read\x00": "control character (U+0000",
    "caf\udcc3\udca9 read": "not valid UTF-8 (byte 0xc3",
    "word " * 21_000: "more than the 102,400 esqlog accepts",
}


@pytest.mark.parametrize("command", ["search", "explain"])
@pytest.mark.parametrize("text", list(BAD_TEXT), ids=lambda t: repr(t[:12]))
def test_bad_query_text(corpus: Corpus, command: str, text: str) -> None:
    line = _one_line_error(_run(corpus, command, text))
    assert BAD_TEXT[text] in line


def _engine_refuses_clauses(corpus: Corpus, clauses: int) -> bool:
    """Whether the engine itself refuses a query of this many term clauses on the index
    (its clause limit: OpenSearch's is 1,024, Elasticsearch 8's grows with its heap)."""
    body = {
        "size": 0,
        "query": {"bool": {"should": [{"term": {"body": f"w{i}"}} for i in range(clauses)]}},
    }
    try:
        answer = call(corpus.engine, "POST", f"/{corpus.index}/_search", body)
    except Exception as exc:
        if error_status(exc) == 400:
            return True
        raise
    return bool(answer["_shards"]["failed"])


def test_too_many_distinct_terms_is_bad_input_where_the_engine_refuses_them(corpus: Corpus) -> None:
    """Where the engine refuses that many clauses (asked directly, beside esqlog) the
    search is one line naming the count; where it accepts them, esqlog runs the search
    rather than refusing what the cluster would answer."""
    text = " ".join(f"w{i}" for i in range(12_000))
    result = _run(corpus, "search", text)
    refused = _engine_refuses_clauses(corpus, 12_000)
    assert refused or corpus.engine.flavor == "elasticsearch"  # OpenSearch: 1,024 at most
    if refused:
        assert "12,000 distinct terms" in _one_line_error(result)
    else:
        _ok(result)
        assert "error" not in result.stderr


def test_calibration_of_another_index_is_refused(corpus: Corpus, tmp_path: Path) -> None:
    other = dataclasses.replace(corpus.calibration, index_uuid="someOtherUuid")
    path = save_calibration(other, tmp_path / "other.json")
    for command in ("search", "explain"):
        line = _one_line_error(_run(corpus, command, "config", calibration=path))
        assert "the calibration is for index" in line and "run esqlog calibrate" in line


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--field", "name"], "the calibration is for field 'body', not 'name'"),
        (["--size", "0"], "Invalid value for '--size'"),
        (["--mode", "fast"], "Invalid value for '--mode'"),
    ],
)
def test_bad_options(corpus: Corpus, args: list[str], message: str) -> None:
    result = _run(corpus, "search", "config", *args)
    assert result.exit_code == 2 and message in result.stderr
    assert "Traceback" not in result.output


def test_bad_calibration_files(corpus: Corpus, tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"index": "x", ', encoding="utf-8")
    assert "truncated or corrupt" in _one_line_error(
        _run(corpus, "search", "config", calibration=broken)
    )
    assert "does not exist" in _one_line_error(
        _run(corpus, "explain", "config", calibration=tmp_path / "missing.json")
    )


def test_unknown_index(corpus: Corpus) -> None:
    result = CliRunner().invoke(
        main,
        [
            "search",
            "--url",
            corpus.url,
            "esqlog-no-such-index",
            "config",
            "--calibration",
            str(corpus.path),
        ],
    )
    assert "no index or alias named" in _one_line_error(result)


# --- a real process -------------------------------------------------------------------------


def test_end_to_end_subprocess(corpus: Corpus) -> None:
    exe = ROOT / ".venv" / "bin" / "esqlog"
    base = [str(exe), "search", "--url", corpus.url, corpus.index]
    done = subprocess.run(
        [*base, "config error", "--calibration", str(corpus.path), "--compare", "--size", "3"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "native id" in done.stdout and "rare2" in done.stdout and "up 1" in done.stdout
    # Invalid UTF-8 straight from argv bytes, as a shell would pass it.
    bad = subprocess.run(
        [*[a.encode() for a in base], b"caf\xc3 read", b"--calibration", str(corpus.path).encode()],
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert bad.returncode == 2
    assert bad.stderr.decode().strip().splitlines() == [
        "error: query text is not valid UTF-8 (byte 0xc3 at character 3); pass the query as "
        "UTF-8 text (check the terminal's or file's encoding)"
    ]
