"""Reading queries and judgments in BEIR, TREC and esqlog formats (esqlog.evaluation.judgments)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from esqlog.errors import UsageError
from esqlog.evaluation.judgments import Notes, judged_queries, read_qrels, read_queries


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_beir_qrels_with_header_graded_and_several_per_query(tmp_path: Path) -> None:
    path = _write(
        tmp_path, "test.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\td2\t1\nq2\td3\t1\n"
    )
    notes = Notes()
    assert read_qrels(path, notes) == {"q1": {"d1": 2, "d2": 1}, "q2": {"d3": 1}}
    assert notes.lines() == []


def test_beir_qrels_without_header(tmp_path: Path) -> None:
    path = _write(tmp_path, "test.tsv", "q1\td1\t1\n")
    assert read_qrels(path, Notes()) == {"q1": {"d1": 1}}


def test_trec_qrels_and_their_problems_counted_one_line_each(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "qrels.txt",
        "\n".join(
            [
                "401 0 FBIS3-1 1",
                "401 0 FBIS3-2 0",
                "401 0 FBIS3-3 2.0",
                "402 0 LA-1 -1",
                "broken line",
                "402 0 LA-2 high",
                "401 0 FBIS3-1 2",
                "403 0 X 1.5",
            ]
        )
        + "\n",
    )
    notes = Notes()
    qrels = read_qrels(path, notes)
    assert qrels == {"401": {"FBIS3-1": 2, "FBIS3-2": 0, "FBIS3-3": 2}, "402": {"LA-1": -1}}
    assert notes.lines() == [
        "3 malformed qrels lines skipped (first: line 5: expected 4 fields, got 2)",
        "1 repeated judgments (the last grade kept) (first: line 7)",
    ]


@pytest.mark.parametrize("text", ["", "\n\n", "a b\nc d\n"])
def test_qrels_without_a_valid_line_is_an_error(tmp_path: Path, text: str) -> None:
    with pytest.raises(UsageError, match="qrels file"):
        read_qrels(_write(tmp_path, "q.txt", text), Notes())


def test_beir_queries_jsonl(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "queries.jsonl",
        json.dumps({"_id": "q1", "text": "read file", "metadata": {}})
        + "\n"
        + json.dumps({"_id": 7, "text": "open socket"})
        + "\n",
    )
    found = read_queries(path, Notes())
    assert (found.ids, found.texts, found.gold, found.format) == (
        ["q1", "7"],
        ["read file", "open socket"],
        None,
        "BEIR queries",
    )


def test_esqlog_queries_carry_their_gold(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "q.jsonl",
        json.dumps({"qid": "a", "text": "t", "gold": "d9"})
        + "\n"
        + json.dumps({"qid": "b", "text": "u", "gold": ["d1", "d2"]})
        + "\n",
    )
    found = read_queries(path, Notes())
    assert found.gold == {"a": {"d9": 1}, "b": {"d1": 1, "d2": 1}}


def test_trec_topics_classic_and_xml(tmp_path: Path) -> None:
    classic = _write(
        tmp_path,
        "topics.401",
        """
<top>
<num> Number: 401
<title> foreign minorities, Germany

<desc> Description:
What language and cultural differences impede the integration?
</top>
<top>
<num> Number: 402 <title> behavioral genetics
<desc> Description: ...
</top>
""",
    )
    found = read_queries(classic, Notes())
    assert found.ids == ["401", "402"]
    assert found.texts == ["foreign minorities, Germany", "behavioral genetics"]
    xml = _write(
        tmp_path,
        "topics.xml",
        '<webtrack2013><topic number="201" type="single">'
        "<query>raspberry pi &amp; arduino</query><description>x</description>"
        "</topic></webtrack2013>",
    )
    assert read_queries(xml, Notes()).texts == ["raspberry pi & arduino"]


def test_trec_topics_pair_each_opening_with_the_first_close(tmp_path: Path) -> None:
    """As a non-greedy pattern pairs them: a second opening before the close is content."""
    xml = _write(
        tmp_path,
        "t.xml",
        '<topic number="1"><topic number="2"><query>a  b</query>'
        '</topic><topic number="3"><query>c</query><query>d</query></TOPIC>'
        '</topic><topic number="4"><query>never closed</topic>',
    )
    found = read_queries(xml, Notes())
    assert (found.ids, found.texts) == (["1", "3"], ["a b", "c"])


def test_a_megabyte_of_unclosed_topic_tags_parses_in_one_pass(tmp_path: Path) -> None:
    """Every opening of an unclosed tag used to scan to the end of the text: 128 KB took 7 s
    and each doubling four times that, so this megabyte would take minutes (and time out)."""
    unclosed = (
        "<topic number=9><query>q</query>" * (1 << 15)
        + "<top><num>8 <title>t"
        + "<query>" * (1 << 17)
    )
    path = _write(
        tmp_path,
        "big.xml",
        '<top><num> 5 <title> five\n</top><topic number="6"><query>six</query></topic>' + unclosed,
    )
    assert path.stat().st_size > 1 << 20
    found = read_queries(path, Notes())
    assert (found.ids, found.texts) == (["5", "6"], ["five", "six"])


def test_tsv_and_plain_query_logs(tmp_path: Path) -> None:
    tsv = _write(tmp_path, "q.tsv", "1\tread file\nno tab here\n2\topen socket\n")
    notes = Notes()
    assert read_queries(tsv, notes).ids == ["1", "2"]
    assert notes.lines() == ["1 query lines without qid<TAB>text skipped (first: line 2)"]
    log = _write(tmp_path, "log.txt", "read file\n\nparse json [i]\n")
    found = read_queries(log, Notes(), plain_lines=True)
    assert (found.ids, found.texts) == (["line1", "line3"], ["read file", "parse json [i]"])


def test_bad_query_records_are_counted_and_a_file_of_nothing_else_refused(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "q.jsonl",
        '{"_id": "a", "text": "x"}\n{not json\n[1,2]\n'
        '{"_id": "a", "text": "again"}\n{"_id": "b", "text": "  "}\n',
    )
    notes = Notes()
    assert read_queries(path, notes).ids == ["a"]
    assert len(notes.lines()) == 4 and all(line[0].isdigit() for line in notes.lines())
    with pytest.raises(UsageError, match="holds no usable query"):
        read_queries(_write(tmp_path, "bad.jsonl", "[1,2]\n"), Notes())
    with pytest.raises(UsageError, match="not UTF-8"):
        (tmp_path / "latin1.tsv").write_bytes(b"1\tcaf\xe9\n")
        read_queries(tmp_path / "latin1.tsv", Notes())


def test_judged_queries_skips_and_counts(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "q.jsonl",
        "".join(json.dumps({"_id": q, "text": q}) + "\n" for q in ["q1", "q2", "q3"]),
    )
    queries = read_queries(path, Notes())
    notes = Notes()
    keep, judged = judged_queries(queries, {"q1": {"d": 1}, "q3": {"d": 0}, "q9": {"d": 1}}, notes)
    assert keep == [0] and judged == {"q1": {"d": 1}}
    assert notes.lines() == [
        "1 queries without judgments skipped (first: q2)",
        "1 queries whose judgments hold no relevant document skipped (first: q3)",
        "1 judged query ids not in the queries file ignored (first: q9)",
    ]
    with pytest.raises(UsageError, match="no query of the queries file"):
        judged_queries(queries, {"zz": {"d": 1}}, Notes())


def test_beir_corpus_reader_shares_the_line_rules(tmp_path: Path) -> None:
    """Blank lines skipped; a line that is not JSON and a record without text are each
    counted once with the first line number; the good records come through."""
    from esqlog.evaluation.beir import read_corpus

    path = _write(
        tmp_path,
        "corpus.jsonl",
        '{"_id": "d1", "text": "a"}\n\n{oops\n'
        '{"_id": "d2", "title": "T", "text": "b"}\n{"_id": "d3"}\n',
    )
    notes = Notes()
    docs = list(read_corpus(path, notes))
    assert [d["id"] for d in docs] == ["d1", "d2"] and docs[1]["text"] == "T\nb"
    assert notes.counts == {
        "corpus lines that are not JSON skipped": 1,
        "corpus records without _id and text skipped": 1,
    }
    assert notes.examples["corpus lines that are not JSON skipped"] == "line 3"
