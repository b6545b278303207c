"""esqlog eval on BEIR and TREC input, against ir-measures and trec_eval, on real engines.

The data is tests/data/beir-java (scripts/corpora/to_beir.py): 60 real Java doc-comment
queries over 1,500 real methods, 40 of them with several relevant documents (the gold method
grade 2, its overloads grade 1). Everything a user sees runs as the real ``esqlog`` in its
own process (tests.support.private_nodes.run_esqlog).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from esqlog.engine.client import Engine
from tests.support.beir_data import BEIR, QUERIES, beir_docs
from tests.support.engines import ENGINE_URLS, bulk_index, call, create_index
from tests.support.esqlog_runs import one_line_error, run_esqlog

QRELS = BEIR / "qrels" / "test.tsv"


@pytest.fixture(scope="module")
def java(engine: Engine) -> Iterator[tuple[Engine, str]]:
    """The BEIR corpus in a 2-shard index: _id is the BEIR id, ``doc_id`` (keyword) is
    "K" + that id, ``title`` a text field, for the --id-field cases."""
    name = create_index(
        engine,
        shards=2,
        mappings={
            "properties": {
                "body": {"type": "text"},
                "doc_id": {"type": "keyword"},
                "title": {"type": "text"},
            }
        },
    )
    bulk_index(
        engine,
        name,
        [
            {
                "id": d["_id"],
                "body": f"{d['title']}\n{d['text']}",
                "doc_id": "K" + d["_id"],
                "title": d["title"],
            }
            for d in beir_docs()
        ],
    )
    yield engine, name
    call(engine, "DELETE", f"/{name}")


def _eval(engine: Engine, index: str, *extra: str) -> Any:
    return run_esqlog(
        "eval",
        "--url",
        ENGINE_URLS[engine.flavor],
        "--index",
        index,
        "--field",
        "body",
        *extra,
        timeout=300,
    )


def _trec_eval_means(run_file: Path, qrels_file: Path) -> dict[str, float]:
    """nDCG@10 and R@100 by trec_eval's own C code (pytrec_eval), over every judged query
    (a query the run misses scores 0, as trec_eval -c does)."""
    import pytrec_eval

    qrels: dict[str, dict[str, int]] = {}
    for line in qrels_file.read_text().splitlines():
        qid, _it, doc, rel = line.split()
        qrels.setdefault(qid, {})[doc] = int(rel)
    run: dict[str, dict[str, float]] = {}
    for line in run_file.read_text().splitlines():
        qid, _q0, doc, _rank, score, _tag = line.split()
        run.setdefault(qid, {})[doc] = float(score)
    per_query = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "recall.100"}).evaluate(run)
    return {
        "nDCG@10": sum(per_query.get(q, {}).get("ndcg_cut_10", 0.0) for q in qrels) / len(qrels),
        "R@100": sum(per_query.get(q, {}).get("recall_100", 0.0) for q in qrels) / len(qrels),
    }


def _ir_measures_per_query(
    run_file: Path, qrels_file: Path, names: list[str]
) -> dict[str, dict[str, float]]:
    import ir_measures

    qrels = list(ir_measures.read_trec_qrels(str(qrels_file)))
    run = list(ir_measures.read_trec_run(str(run_file)))
    measures = [ir_measures.parse_measure(n) for n in names]
    out: dict[str, dict[str, float]] = {}
    for m in ir_measures.iter_calc(measures, qrels, run):
        out.setdefault(m.query_id, {})[str(m.measure)] = m.value
    return out


def test_beir_input_gives_trec_eval_and_ir_measures_numbers(
    java: tuple[Engine, str], tmp_path: Path
) -> None:
    engine, index = java
    trec = tmp_path / "trec"
    result = _eval(
        engine,
        index,
        "--queries",
        str(QUERIES),
        "--qrels",
        str(QRELS),
        "--metric",
        "nDCG@10",
        "--metric",
        "R@100",
        "--metric",
        "RR@10",
        "--q",
        "1,0.5",
        "--resamples",
        "200",
        "--trec-dir",
        str(trec),
        "--json",
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["queries"] == 60 and data["format"] == "BEIR queries"
    assert data["metrics"] == ["nDCG@10", "R@100", "RR@10"]
    qrels_lines = (trec / "qrels.txt").read_text().splitlines()
    assert len(qrels_lines) == 160 and {line.split()[3] for line in qrels_lines} == {"1", "2"}
    for label, run_name in [("native", "native.run"), ("q=0.5", "qlog-q0.5.run")]:
        means = data["means"][label]
        by_trec_eval = _trec_eval_means(trec / run_name, trec / "qrels.txt")
        for metric in ("nDCG@10", "R@100"):
            assert means[metric] == pytest.approx(by_trec_eval[metric], abs=1e-12), (label, metric)
        per_query = _ir_measures_per_query(
            trec / run_name, trec / "qrels.txt", ["nDCG@10", "R@100", "RR@10"]
        )
        for metric in ("nDCG@10", "R@100", "RR@10"):
            mean = sum(per_query.get(q, {}).get(metric, 0.0) for q in data_qids(trec)) / 60
            assert means[metric] == pytest.approx(mean, abs=1e-12), (label, metric)
    # graded judgments matter: q-log and native differ, and q = 1 is native exactly
    assert data["means"]["q=1"]["nDCG@10"] == pytest.approx(data["means"]["native"]["nDCG@10"])
    assert data["means"]["q=0.5"]["nDCG@10"] != pytest.approx(
        data["means"]["native"]["nDCG@10"], abs=1e-3
    )


def data_qids(trec: Path) -> list[str]:
    return sorted({line.split()[0] for line in (trec / "qrels.txt").read_text().splitlines()})


def test_ids_in_a_field_and_trec_input_give_the_same_numbers(
    java: tuple[Engine, str], tmp_path: Path
) -> None:
    engine, index = java
    qrels = tmp_path / "qrels.trec"  # the same judgments, TREC format, "K" ids
    qrels.write_text(
        "".join(
            f"{q} 0 K{d} {g}\n"
            for q, d, g in (line.split("\t") for line in QRELS.read_text().splitlines()[1:])
        )
    )
    topics = tmp_path / "topics.txt"  # the same queries as TREC topics
    topics.write_text(
        "".join(
            f"<top>\n<num> Number: {r['_id']}\n<title> {r['text']}\n</top>\n"
            for r in map(json.loads, QUERIES.read_text().splitlines())
        )
    )
    by_id = _eval(
        engine,
        index,
        "--queries",
        str(QUERIES),
        "--qrels",
        str(QRELS),
        "--metric",
        "nDCG@10",
        "--q",
        "0.5",
        "--resamples",
        "100",
        "--json",
    )
    by_field = _eval(
        engine,
        index,
        "--queries",
        str(topics),
        "--qrels",
        str(qrels),
        "--id-field",
        "doc_id",
        "--metric",
        "nDCG@10",
        "--q",
        "0.5",
        "--resamples",
        "100",
        "--json",
    )
    assert by_id.returncode == 0 and by_field.returncode == 0, by_field.stderr
    a, b = json.loads(by_id.stdout), json.loads(by_field.stdout)
    assert b["format"] == "TREC topics"
    for label in ("native", "q=0.5"):
        assert b["means"][label]["nDCG@10"] == pytest.approx(a["means"][label]["nDCG@10"], abs=1e-9)


def test_bad_judgments_are_counted_one_line_each_and_never_a_traceback(
    java: tuple[Engine, str], tmp_path: Path
) -> None:
    engine, index = java
    good = QRELS.read_text().splitlines()
    qrels = tmp_path / "bad.tsv"
    qrels.write_text(
        "\n".join(
            [
                *good[:40],
                "q-broken\tonly-two",
                "qx\tdy\tnot-a-grade",
                *good[40:100],
                "qnope\tmissing-doc-1\t1",
                f"{good[1].split(chr(9))[0]}\tno-such-doc\t1",
            ]
        )
        + "\n"
    )
    # sentinel credentials in the URL: they must appear nowhere in the output
    url = ENGINE_URLS[engine.flavor].replace("http://", "http://esq-user:S3cret-XYZ@")
    result = run_esqlog(
        "eval",
        "--url",
        url,
        "--index",
        index,
        "--field",
        "body",
        "--queries",
        str(QUERIES),
        "--qrels",
        str(qrels),
        "--q",
        "0.6",
        "--resamples",
        "100",
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "S3cret" not in result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == 4, result.stderr
    text = "\n".join(warnings)
    assert "2 malformed qrels lines skipped (first: line 41: expected 3 fields, got 2)" in text
    assert "queries without judgments skipped" in text  # qrels cut short: queries lost theirs
    assert "1 judged query ids not in the queries file ignored (first: qnope)" in text
    assert "1 of " in text and "are not in the index (by _id" in text and "no-such-doc" in text


@pytest.mark.parametrize(
    "case",
    [
        "nothing valid",
        "no judged query",
        "bad metric",
        "text id field",
        "absent id field",
        "no judgments at all",
        "unwritable trec dir",
        "provider fails on these ids",
    ],
)
def test_eval_user_errors_are_one_line_exit_2(
    java: tuple[Engine, str], tmp_path: Path, case: str
) -> None:
    engine, index = java
    junk = tmp_path / "junk.tsv"
    junk.write_text("a\tb\nc\n")
    other = tmp_path / "other.tsv"
    other.write_text("query-id\tcorpus-id\tscore\nzz\td\t1\n")
    (tmp_path / "file").write_text("")
    base = ["--queries", str(QUERIES), "--q", "0.6", "--resamples", "50"]
    argv, expected = {
        "nothing valid": ([*base, "--qrels", str(junk)], "holds no valid judgment line"),
        "no judged query": ([*base, "--qrels", str(other)], "no query of the queries file"),
        "bad metric": (
            [*base, "--qrels", str(QRELS), "--metric", "nDCG@ten"],
            "unknown metric 'nDCG@ten' (--metric)",
        ),
        "text id field": ([*base, "--qrels", str(QRELS), "--id-field", "title"], "is a text field"),
        "absent id field": (
            [*base, "--qrels", str(QRELS), "--id-field", "nope"],
            "has no field 'nope'",
        ),
        "no judgments at all": (base, "carries no judgments; pass --qrels"),
        "unwritable trec dir": (
            [*base, "--qrels", str(QRELS), "--trec-dir", str(tmp_path / "file" / "sub")],
            "cannot create --trec-dir",
        ),
        # ERR@10 comes from gdeval (perl), which wants numeric query ids; BEIR's are not
        "provider fails on these ids": (
            [*base, "--qrels", str(QRELS), "--metric", "ERR@10"],
            "metric 'ERR@10' cannot be computed by the installed "
            "ir-measures providers on these ids",
        ),
    }[case]
    assert expected in one_line_error(_eval(engine, index, *argv), 2)
