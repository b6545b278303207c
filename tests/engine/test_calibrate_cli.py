"""esqlog calibrate through click's CliRunner on both real engines (3 shards, deletions):
the report, --json, --out, --vocabulary, and h_tok checked against a brute-force count."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from esqlog.calibration.files import load_calibration
from esqlog.cli import main
from esqlog.engine.client import Engine
from esqlog.statistics.terms import shard_routings_plan, term_stats_plan
from esqlog.statistics.vocabulary import load_vocabulary
from tests.support.code_snippets import SNIPPETS
from tests.support.engines import ENGINE_URLS, bulk_index, call
from tests.support.esqlog_runs import assert_vocabulary_needs_out as _assert_needs_out


def brute_force_h_tok(engine: Engine, index: str, live_ids: list[str]) -> float:
    """Hapax tokens / all tokens over live documents, df as Lucene counts it."""
    vectors = {}
    for doc_id in live_ids:
        tv = call(
            engine,
            "GET",
            f"/{index}/_termvectors/{doc_id}",
            fields="body",
            positions="false",
            offsets="false",
        )
        terms_of = tv["term_vectors"]["body"]["terms"]
        vectors[doc_id] = {t: v["term_freq"] for t, v in terms_of.items()}
    terms = sorted({t for tf in vectors.values() for t in tf})
    routings = engine.run(shard_routings_plan(index, 3))
    _, df = engine.run(term_stats_plan(index, "body", terms, routings))
    hapax = sum(n for tf in vectors.values() for t, n in tf.items() if df[t] == 1)
    total = sum(n for tf in vectors.values() for n in tf.values())
    return float(hapax / total)


def test_calibrate_report_json_and_file(engine: Engine, fresh_index: str, tmp_path: Path) -> None:
    docs = [{"id": f"{c}{i}", "body": s} for c in ("a", "b") for i, s in enumerate(SNIPPETS)]
    docs += [{"id": f"u{i}", "body": f"unique{i}word appears once here"} for i in range(10)]
    bulk_index(engine, fresh_index, docs)
    for doc_id in ("a0", "u3"):
        call(engine, "DELETE", f"/{fresh_index}/_doc/{doc_id}")
    call(engine, "POST", f"/{fresh_index}/_refresh")
    live = [d["id"] for d in docs if d["id"] not in ("a0", "u3")]
    expected = brute_force_h_tok(engine, fresh_index, live)
    url = ENGINE_URLS[engine.flavor]
    runner = CliRunner()

    out = tmp_path / "cal.json"
    result = runner.invoke(
        main,
        [
            "calibrate",
            "--url",
            url,
            "--index",
            fresh_index,
            "--field",
            "body",
            "--exact",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    for line in ("engine", "index", "documents", "avgdl", "h_tok", "q", "regime"):
        assert line in result.output
    assert f"N = {len(docs):,} with the field ({len(live):,} live)" in result.output
    record = load_calibration(out)
    assert record.h_tok == pytest.approx(expected, abs=1e-12)
    assert record.h_tok_method == "exact" and record.doc_count == len(docs)
    assert record.predictor == "esqlog-linear"
    assert record.q == pytest.approx(min(1.0, max(0.0, 0.76 - 1.50 * expected)), abs=1e-4)

    as_json = runner.invoke(
        main,
        [
            "calibrate",
            "--url",
            url,
            "--index",
            fresh_index,
            "--field",
            "body",
            "--json",
            "--predictor",
            "paper-linear",
        ],
    )
    assert as_json.exit_code == 0, as_json.output
    data = json.loads(as_json.output)
    # the sample covers every live document, so it equals the exact value with no width
    assert data["h_tok"] == pytest.approx(expected, abs=1e-12)
    assert data["h_tok_low"] == pytest.approx(data["h_tok_high"], abs=1e-12)
    assert data["predictor"] == "paper-linear"
    assert data["q"] == pytest.approx(min(1.0, max(0.0, 1 - 7.28 * expected)), abs=1e-4)
    assert data["index_uuid"] == record.index_uuid and "regime" in data


def test_calibrate_vocabulary_writes_both_files(
    engine: Engine, fresh_index: str, tmp_path: Path
) -> None:
    docs = [{"id": f"{c}{i}", "body": s} for c in ("a", "b") for i, s in enumerate(SNIPPETS)]
    docs += [{"id": f"u{i}", "body": f"unique{i}word appears once here"} for i in range(10)]
    bulk_index(engine, fresh_index, docs)
    expected = brute_force_h_tok(engine, fresh_index, [d["id"] for d in docs])
    url = ENGINE_URLS[engine.flavor]
    runner = CliRunner()

    out = tmp_path / "cal.json"
    result = runner.invoke(
        main,
        [
            "calibrate",
            "--url",
            url,
            "--index",
            fresh_index,
            "--field",
            "body",
            "--vocabulary",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    record = load_calibration(out)
    assert record.vocabulary_sha256 is not None
    snapshot = tmp_path / f"cal.vocab.{record.vocabulary_sha256[:16]}.npz"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cal.json", snapshot.name]
    vocab = load_vocabulary(record.vocabulary_path() or "", record.vocabulary_sha256)
    assert record.vocabulary == snapshot.name and record.vocabulary_path() == snapshot
    assert record.vocabulary_terms == len(vocab) > 0
    assert (
        f"vocabulary   {len(vocab):,} terms in live documents (snapshot {snapshot.name})"
        in result.output
    )
    assert f"vocabulary snapshot written to {snapshot}" in result.output
    assert record.h_tok_method == "exact"
    assert record.h_tok == pytest.approx(expected, abs=1e-12)

    terms = sorted(
        {
            t["token"]
            for d in docs
            for t in call(
                engine, "POST", f"/{fresh_index}/_analyze", {"field": "body", "text": d["body"]}
            )["tokens"]
        }
    )
    assert len(terms) == len(vocab)  # every term of the field, and only those
    routings = engine.run(shard_routings_plan(fresh_index, 3))
    _, df = engine.run(term_stats_plan(fresh_index, "body", terms, routings))
    assert vocab.df_of(terms) == df

    as_json = runner.invoke(
        main,
        [
            "calibrate",
            "--url",
            url,
            "--index",
            fresh_index,
            "--field",
            "body",
            "--vocabulary",
            "--json",
            "--out",
            str(tmp_path / "again.json"),
        ],
    )
    assert as_json.exit_code == 0, as_json.output
    data = json.loads(as_json.output)
    again = tmp_path / f"again.vocab.{data['vocabulary_sha256'][:16]}.npz"
    assert data["vocabulary"] == again.name and data["vocabulary_terms"] == len(vocab)
    assert data["vocabulary_sha256"] == hashlib.sha256(again.read_bytes()).hexdigest()


def test_calibrate_vocabulary_needs_out(engine: Engine) -> None:
    _assert_needs_out(ENGINE_URLS[engine.flavor])
