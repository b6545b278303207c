"""esqlog bench-beir and esqlog compare, end to end on real engines, as a user runs them.

bench-beir gets tests/data/beir-java (a BEIR folder written from our Java corpus by
scripts/corpora/to_beir.py: 60 queries, 40 with overloads as extra relevant documents);
compare gets a query log of those queries over an index the test made and calibrated.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from esqlog.engine.client import Engine
from tests.support.beir_data import BEIR, QUERIES, beir_docs
from tests.support.engines import ENGINE_URLS, bulk_index, call, create_index, found
from tests.support.esqlog_runs import one_line_error, run_esqlog


def _exists(engine: Engine, index: str) -> bool:
    """Whether the index exists; absent only on the engine's 404 (any other error raises)."""
    return found(engine, "GET", f"/{index}/_mapping") is not None


def test_bench_beir_on_a_folder_from_our_corpus(engine: Engine, tmp_path: Path) -> None:
    index = f"esqlog-bench-test-{engine.flavor}"
    out = tmp_path / "out"
    result = run_esqlog(
        "bench-beir",
        str(BEIR),
        "--url",
        ENGINE_URLS[engine.flavor],
        "--index",
        index,
        "--out-dir",
        str(out),
        "--resamples",
        "500",
        "--json",
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    assert f"esqlog writes only to its scratch index {index!r}" in result.stderr
    report = json.loads(result.stdout)
    assert (report["documents"], report["queries"]) == (1500, 60)
    means = report["means"]
    assert {"native", "boost", "boost+joins", "rerank", "identifiers"} <= set(means)
    if "script" in means:  # the same scores as boost, by construction
        assert means["script"]["nDCG@10"] == pytest.approx(means["boost"]["nDCG@10"], abs=1e-6)
    else:
        assert "script" in report["skipped"]
    for system in set(means) - {"native"}:
        diff = report["diffs"][system]["nDCG@10"]
        assert diff["low"] <= diff["mean_diff"] <= diff["high"]
        assert diff["mean_diff"] == pytest.approx(
            means[system]["nDCG@10"] - means["native"]["nDCG@10"], abs=1e-9
        )
    # q-log helps on real Java code with several relevant methods per query
    assert report["diffs"]["boost"]["nDCG@10"]["low"] > 0
    assert report["latency_ms"]["native"]["median"] > 0
    for name in [
        "calibration.json",
        "qrels.txt",
        "native.run",
        "boost-joins.run",
        "identifiers.run",
        "results.json",
    ]:
        assert (out / name).stat().st_size > 0, name
    assert (out / "bench.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not _exists(engine, index)  # the scratch index is dropped at the end


def test_bench_beir_never_writes_to_an_index_it_did_not_create(
    engine: Engine, tmp_path: Path
) -> None:
    from tests.support.engines_state import snapshot as _snapshot

    name = create_index(engine, shards=1)
    try:
        bulk_index(engine, name, [{"id": 1, "body": "a user's own document"}])
        before = _snapshot(engine, name)
        result = run_esqlog(
            "bench-beir",
            str(BEIR),
            "--url",
            ENGINE_URLS[engine.flavor],
            "--index",
            name,
            "--out-dir",
            str(tmp_path),
        )
        assert "exists and esqlog did not create it" in one_line_error(result, 2)
        assert _snapshot(engine, name) == before
    finally:
        call(engine, "DELETE", f"/{name}")


# --- compare ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def calibrated(
    engine: Engine, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Engine, str, Path]]:
    """The Java corpus in a 2-shard index, calibrated with --vocabulary --identifiers."""
    name = create_index(engine, shards=2)
    bulk_index(
        engine, name, [{"id": d["_id"], "body": f"{d['title']}\n{d['text']}"} for d in beir_docs()]
    )
    folder = tmp_path_factory.mktemp("cal")
    done = run_esqlog(
        "calibrate",
        "--url",
        ENGINE_URLS[engine.flavor],
        "--index",
        name,
        "--field",
        "body",
        "--vocabulary",
        "--identifiers",
        "--out",
        str(folder / "cal.json"),
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    yield engine, name, folder / "cal.json"
    call(engine, "DELETE", f"/{name}")


def _log(tmp_path: Path) -> Path:
    texts = [json.loads(line)["text"] for line in QUERIES.read_text().splitlines()]
    log = tmp_path / "log.txt"
    log.write_text("\n".join([*texts[:30], "", "parse [bold]json[/bold] a[i]"]) + "\n")
    return log


def _compare(engine: Engine, index: str, cal: Path, log: Path, *extra: str) -> Any:
    return run_esqlog(
        "compare",
        "--url",
        ENGINE_URLS[engine.flavor],
        "--index",
        index,
        "--queries",
        str(log),
        "--calibration",
        str(cal),
        *extra,
        timeout=300,
    )


def test_compare_reports_changes_and_only_reads(
    calibrated: tuple[Engine, str, Path], tmp_path: Path
) -> None:
    from tests.support.engines_state import snapshot as _snapshot

    engine, index, cal = calibrated
    before = _snapshot(engine, index)
    result = _compare(engine, index, cal, _log(tmp_path), "--json", "--show", "5")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    summary = data["summary"]
    assert summary["queries"] == 31 and summary["k"] == 10
    assert 0 < summary["first_changed"] < 31  # q-log moves some first results, not all
    assert 0.0 < summary["mean_rbo"] < 1.0 and 0.0 < summary["mean_overlap"] < 1.0
    rows = data["queries"]
    assert summary["first_changed"] == sum(r["first_changed"] for r in rows)
    assert summary["mean_rbo"] == pytest.approx(sum(r["rbo"] for r in rows) / 31)
    lowest = sorted(rows, key=lambda r: (r["rbo"], r["overlap"], r["qid"]))[:5]
    assert data["most_changed"] == [r["qid"] for r in lowest]
    assert all(r["native_ms"] > 0 and r["esqlog_ms"] > 0 for r in rows)
    assert _snapshot(engine, index) == before


def test_compare_at_q_1_changes_nothing(
    calibrated: tuple[Engine, str, Path], tmp_path: Path
) -> None:
    """q = 1 is native BM25 exactly: every ranking agrees (RBO 1, no first result moves)."""
    engine, index, cal = calibrated
    record = json.loads(cal.read_text())
    record["q"] = 1.0
    same = cal.with_name("q1.json")
    same.write_text(json.dumps(record))
    result = _compare(engine, index, same, _log(tmp_path), "--json", "--mode", "boost")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)["summary"]
    assert summary["first_changed"] == 0
    assert summary["mean_rbo"] == pytest.approx(1.0, abs=1e-9)
    assert summary["mean_overlap"] == pytest.approx(1.0)


def test_compare_readable_summary_prints_user_text_literally(
    calibrated: tuple[Engine, str, Path], tmp_path: Path
) -> None:
    engine, index, cal = calibrated
    result = _compare(engine, index, cal, _log(tmp_path), "--show", "100")
    assert result.returncode == 0, result.stderr
    assert "would show a different first result" in result.stdout
    assert "Rank-biased overlap (p = 0.9)" in result.stdout
    assert "[bold]json[/bold] a[i]" in result.stdout  # not eaten as rich markup


def test_compare_user_errors_are_one_line(
    calibrated: tuple[Engine, str, Path], tmp_path: Path
) -> None:
    engine, index, cal = calibrated
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n")
    assert "is empty" in one_line_error(_compare(engine, index, cal, empty), 2)
    log = _log(tmp_path)
    wrong = _compare(engine, index, cal, log, "--field", "other")
    assert "the calibration is for field 'body'" in one_line_error(wrong, 2)
    joins = _compare(engine, index, cal, log, "--mode", "rerank", "--joins")
    assert "--joins works with --mode boost" in one_line_error(joins, 2)
