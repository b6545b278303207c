"""Statistics files read in place: the arrays mapped from the file equal the ones written,
the words are looked up without a dictionary, and a file whose in-place index is forged
(with a checksum to match, so that only the bounds checks can tell) is refused in one line."""

from __future__ import annotations

import io
import json
import os
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from esqlog.errors import UsageError
from esqlog.identifiers.files import (
    FORMAT,
    LOCAL_INDEXED_FORMAT,
    WORD_ROWS,
    load_identifier_stats,
    load_shard_counts,
    save_identifier_stats,
)
from esqlog.identifiers.split_stats import IdentifierStats
from esqlog.statistics.mapped_terms import MappedTerms, TermIds, positions_in
from esqlog.statistics.npz import array_digest, npz_bytes, pieces_digest
from esqlog.statistics.term_keys import build_bloom, term_hash
from esqlog.statistics.vocabulary import Vocabulary, load_vocabulary, save_vocabulary
from tests.support.split_docs import build_per_shard


def stats_file(tmp_path: Path) -> tuple[IdentifierStats, Path]:
    stats = build_per_shard()  # with each shard's own statistics: terms of two or more shards
    path, _ = save_identifier_stats(stats, tmp_path / "x.idents.npz", "v")
    return stats, path


def rewritten(path: Path, change: Callable[[dict[str, np.ndarray], dict[str, Any]], None]) -> Path:
    """The file with ``change`` applied to its arrays and metadata and its own checksum
    recomputed: a forged file that only the checks after the checksum can refuse."""
    with np.load(path) as data:
        arrays = {k: data[k] for k in data.files}
    meta = json.loads(bytes(arrays.pop("meta")).decode())
    change(arrays, meta)
    # the format's own
    digest = pieces_digest if meta["format"] in (FORMAT, LOCAL_INDEXED_FORMAT) else array_digest
    meta["sha256"] = digest(
        {k: (a.dtype.str, a.shape, np.ascontiguousarray(a).data) for k, a in arrays.items()}
    )
    path.write_bytes(
        npz_bytes({"meta": np.frombuffer(json.dumps(meta).encode(), np.uint8), **arrays})
    )
    return path


def refused(path: Path, *words: str) -> str:
    with pytest.raises(UsageError) as info:
        load_identifier_stats(path, "v")
    message = str(info.value)
    assert "\n" not in message and "identifier statistics file" in message
    for word in words:
        assert word in message, message
    return message


def test_a_mapped_load_gives_the_arrays_and_words_written(tmp_path: Path) -> None:
    stats, path = stats_file(tmp_path)
    loaded = load_identifier_stats(path, "v")
    assert isinstance(loaded.words, MappedTerms)
    assert list(loaded.words) == list(stats.words) and len(loaded.words) == len(stats.words)
    assert loaded.words[-1] == stats.words[-1] and loaded.words[1:3] == list(stats.words[1:3])
    for key in (
        "df_engine",
        "df_split",
        "mask",
        "parts_ptr",
        "parts_idx",
        "comp_ptr",
        "comp_idx",
        "local_df",
        "shard_docs",
    ):
        assert np.array_equal(getattr(loaded, key), getattr(stats, key)), key
    assert not loaded.df_engine.flags.writeable  # read-only: mapped, not copied
    for k, word in enumerate(stats.words):
        assert loaded.word_id[word] == k and word in loaded.word_id
        assert loaded.parts_of(word) == stats.parts_of(word)
        assert loaded.compounds_of(word) == stats.compounds_of(word)
        assert loaded.split_df(word) == stats.split_df(word)
    assert loaded.word_id.get("notaword") is None and "notaword" not in loaded.word_id
    with pytest.raises(KeyError):
        loaded.word_id["notaword"]
    assert loaded.families(1.0) == stats.families(1.0)


def test_words_sharing_a_hash_are_told_apart_by_their_bytes() -> None:
    words = ["a", "b", "c"]
    blob = np.frombuffer(b"a\nb\nc", np.uint8)
    starts = np.array([0, 2, 4, 6], np.int64)
    keys = np.full(3, term_hash("b"), np.uint64)  # every word claims b's hash
    terms = MappedTerms(blob, starts, keys, np.array([0, 1, 2], np.int32))
    assert terms.id_of("b") == 1 and terms.id_of("a") is None  # a's own hash is not there
    assert list(terms) == words


def test_words_looked_up_at_once_are_found_as_one_by_one() -> None:
    """ids_of (a per-shard search's ~330 terms) gives id_of's answer for each, -1 for an
    absent one: words sharing a hash, a hash before the word's own, an empty index."""
    words = ["read", "", "fichier", "écrire", "z", "b"]
    blob = np.frombuffer("\n".join(words).encode(), np.uint8)
    starts = np.concatenate(([0], np.cumsum([len(w.encode()) + 1 for w in words])))
    own = np.array([term_hash(w) for w in words], np.uint64)
    asked = [*words, "zz", "a", "Read", "b", "read"]
    for keys in (own, np.where(np.arange(6) == 0, term_hash("b"), own)):  # read claims b's
        order = np.argsort(keys, kind="stable").astype(np.int32)
        terms = MappedTerms(blob, starts.astype(np.int64), keys[order], order)
        want = [-1 if (k := terms.id_of(t)) is None else k for t in asked]
        assert terms.ids_of(asked).tolist() == want
        assert TermIds(terms).ids_of(asked).tolist() == want
        assert want[5] == 5 and want[6:9] == [-1, -1, -1]
    empty = MappedTerms(np.zeros(0, np.uint8), np.zeros(1, np.int64), own[:0], order[:0])
    assert empty.ids_of(["a"]).tolist() == [-1] and terms.ids_of([]).tolist() == []


def test_words_taken_at_once_are_the_words_looked_up_one_by_one() -> None:
    """take (the identifiers search's gather of ~300 compound names) gives the words at
    those positions in that order, repeats included, as indexing one by one does; starts
    stored in another integer type read alike; a position out of range is an IndexError."""
    words = ["read", "", "fichier", "écrire", "z"]
    blob = np.frombuffer("\n".join(words).encode(), np.uint8)
    starts = np.concatenate(([0], np.cumsum([len(w.encode()) + 1 for w in words])))
    for kind in (np.int64, np.int32, np.uint32):
        terms = MappedTerms(
            blob, starts.astype(kind), np.zeros(5, np.uint64), np.arange(5, dtype=np.int32)
        )
        ids = [4, 0, 3, 3, 1, 2]
        assert terms.take(ids) == [words[i] for i in ids] == [terms[i] for i in ids]
        # many ids (numpy's gather), as an array or a list, the last word (no newline after
        # it in the blob) first, inside and last
        many = [4] + ids * 5 + [1, 4]
        assert terms.take(many) == [words[i] for i in many]
        assert terms.take(np.asarray(many, np.int32)) == [words[i] for i in many]
        assert terms.take(np.asarray([4])) == ["z"] and terms.take(np.asarray([1])) == [""]
        assert terms.take([]) == [] and terms[-1] == "z" and terms[-5] == "read"
        assert terms.take(np.zeros(0, np.int64)) == []
        assert list(terms) == words and len(terms) == 5
        for bad in ([5], [0, -1], [2, 9, 1], [0] * 20 + [5], [-1] + [0] * 20):
            with pytest.raises(IndexError):
                terms.take(bad)
            with pytest.raises(IndexError):
                terms.take(np.asarray(bad))
        for bad_one in (5, -6):
            with pytest.raises(IndexError):
                terms[bad_one]


def test_term_ids_remember_recent_lookups_within_their_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A position asked again (a search asks each word's three times) is not hashed and
    searched again, absent terms included; past the bound the memory starts afresh and
    every answer stays right."""
    import esqlog.statistics.mapped_terms as mapped_terms

    monkeypatch.setattr(mapped_terms, "RECENT_IDS", 3)
    words = ["read", "file", "readfile", "write"]
    arrays = mapped_terms.index_arrays(words)
    blob = np.frombuffer("\n".join(words).encode(), np.uint8)
    terms = MappedTerms(blob, arrays["word_starts"], arrays["word_keys"], arrays["word_order"])
    looked: list[str] = []
    real = terms.id_of
    monkeypatch.setattr(terms, "id_of", lambda t: looked.append(t) or real(t))
    ids = TermIds(terms)
    assert [ids.get("file"), ids.get("file"), ids.get("nope"), ids.get("nope")] == [
        1,
        1,
        None,
        None,
    ]
    assert "file" in ids and "nope" not in ids and ids.get(3) is None
    assert looked == ["file", "nope"]
    for _ in range(2):
        assert [ids.get(w) for w in (*words, "nope")] == [0, 1, 2, 3, None]
        assert ids["write"] == 3 and ids.get("absent", -1) == -1
    assert len(ids._recent) <= 3 and len(looked) > 2
    # a full memory keeps what it held as its previous generation: asked again, not looked up
    turned = TermIds(terms)
    for w in words:  # the fourth turns the memory of three
        turned.get(w)
    looked.clear()
    assert [turned.get("read"), turned.get("file"), turned.get("write")] == [0, 1, 3]
    assert looked == []
    # many at once: the remembered from memory, the rest searched together and remembered
    batches: list[list[str]] = []
    real_many = terms.ids_of
    monkeypatch.setattr(terms, "ids_of", lambda ts: batches.append(list(ts)) or real_many(ts))
    fresh = TermIds(terms)
    assert fresh.get("file") == 1
    assert fresh.ids_of(["readfile", "file", "nope"]).tolist() == [2, 1, -1]
    assert fresh.ids_of(["nope", "readfile"]).tolist() == [-1, 2]
    assert batches == [["readfile", "nope"]]
    # remembered apart: the words' memory holds only what was asked one at a time
    assert set(fresh._recent) == {"file"} and set(fresh._listed) == {"readfile", "nope"}


def _mapped(words: list[str], keys: np.ndarray | None = None) -> MappedTerms:
    """``words`` as a file holds them, with their own hashes unless ``keys`` (by word)."""
    blob = np.frombuffer("\n".join(words).encode(), np.uint8)
    starts = np.concatenate(([0], np.cumsum([len(w.encode()) + 1 for w in words])))
    own = np.array([term_hash(w) for w in words], np.uint64) if keys is None else keys
    order = np.argsort(own, kind="stable").astype(np.int32)
    return MappedTerms(blob, starts.astype(np.int64), own[order], order)


def test_a_table_is_joined_into_another_as_each_term_looked_up_there() -> None:
    """positions_in (each word's per-shard row, joined once) gives what looking each term
    up by name in the other table gives: absent terms, an empty term, multi-byte ones; a
    hash shared with another term (by the other table's own terms, or by one of ours)
    is told apart by the bytes."""
    words = ["read", "", "fichier", "écrire", "z", "readfile", "zz"]
    local = ["x", "zz", "écrire", "read", "", "readfiles"]  # x first: see the collision
    want = [local.index(w) if w in local else -1 for w in words]
    assert _mapped(words).positions_in(_mapped(local)).tolist() == want
    # "readfile" claims the hash of "readfiles" (which the other table holds): not it
    claims = np.array([term_hash("readfiles" if w == "readfile" else w) for w in words])
    assert _mapped(words, claims).positions_in(_mapped(local)).tolist() == want
    # the other table's own hashes collide (x claims zz's, ahead of it: one search would
    # find x and miss zz): its lookups decide, term by term
    shared = np.array([term_hash("zz" if t == "x" else t) for t in local], np.uint64)
    assert _mapped(words).positions_in(_mapped(local, shared)).tolist() == want
    nothing = _mapped(["a"])
    assert nothing.positions_in(_mapped([], np.zeros(0, np.uint64))).tolist() == [-1]


def test_positions_gathered_by_id_are_remembered_for_lookups_by_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """TermIds.remember (a plan's compounds, gathered by id just before the per-shard
    queries look them up by name): those lookups hash none of them; the memory stays
    within its bound and a batch larger than it keeps its last terms."""
    import esqlog.statistics.mapped_terms as mapped_terms

    monkeypatch.setattr(mapped_terms, "RECENT_LISTED", 4)
    terms = _mapped(["read", "file", "readfile", "write", "readwrite"])
    ids = TermIds(terms)
    batches: list[list[str]] = []
    real_many = terms.ids_of
    monkeypatch.setattr(terms, "ids_of", lambda ts: batches.append(list(ts)) or real_many(ts))
    ids.remember(["readfile", "write"], np.array([2, 3]))
    assert ids.ids_of(["write", "readfile"]).tolist() == [3, 2] and batches == []
    assert ids.ids_of(["readwrite", "read"]).tolist() == [4, 0] and batches == [
        ["readwrite", "read"]
    ]
    ids.remember(["file"], np.array([1]))  # 4 held: emptied, then stored
    assert set(ids._listed) == {"file"}
    ids.remember(["read", "file", "readfile", "write", "readwrite"], np.arange(5))
    assert ids._listed == {"file": 1, "readfile": 2, "write": 3, "readwrite": 4}
    plain: dict[str, int] = {"read": 0}
    mapped_terms.remember_positions(plain, ["file"], np.array([1]))  # no memory: nothing
    assert plain == {"read": 0}


def test_each_word_finds_its_per_shard_row_as_by_its_name(tmp_path: Path) -> None:
    """IdentifierStats.local_row_of_word, read from the file calibrate wrote (the tables
    joined by their hashes there) and built in memory (looked up by name), is each word's
    local_df row, -1 for a word on one shard."""
    stats, path = stats_file(tmp_path)
    loaded = load_identifier_stats(path, "v")
    assert isinstance(loaded.words, MappedTerms)
    assert WORD_ROWS in loaded.__dict__  # read from the file, not joined by this process
    for held in (stats, loaded):
        rows = held.local_row_of_word
        want = [-1 if (r := held.local_row.get(w)) is None else r for w in held.words]
        assert rows.tolist() == want and rows.dtype == np.int32
    assert (loaded.local_row_of_word >= 0).sum() >= 3
    assert np.array_equal(loaded.local_row_of_word, stats.local_row_of_word)


def test_words_against_no_per_shard_terms_are_not_decoded() -> None:
    """A one-shard index has no per-shard terms (calibrate gives an empty list): every
    word's row is -1 without a word decoded (2.9 million of them on the largest index)."""

    class Undecodable(list[str]):
        def __iter__(self):  # type: ignore[no-untyped-def]
            raise AssertionError("a word decoded")

    words = Undecodable(["read", "file"])
    assert positions_in(words, [], {}).tolist() == [-1, -1]


LOCAL_INDEX = ("local_word_starts", "local_word_keys", "local_word_order")


@pytest.mark.parametrize(
    ("version", "dropped"),
    [
        (
            3,
            (
                "word_starts",
                "word_keys",
                "word_order",
                "comp_ptr",
                "comp_idx",
                *LOCAL_INDEX,
                WORD_ROWS,
            ),
        ),
        (4, (*LOCAL_INDEX, WORD_ROWS)),
        (5, (WORD_ROWS,)),
    ],
)
def test_an_older_file_without_the_word_index_still_loads(
    tmp_path: Path, version: int, dropped: tuple[str, ...]
) -> None:
    stats, path = stats_file(tmp_path)

    def older(arrays: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
        for key in dropped:
            del arrays[key]
        meta["format"] = f"esqlog-identifiers/{version}"

    loaded = load_identifier_stats(rewritten(path, older), "v")
    assert isinstance(loaded.words, list if version == 3 else MappedTerms)
    assert list(loaded.words) == list(stats.words)
    assert np.array_equal(loaded.comp_idx, stats.comp_idx)
    assert loaded.word_id["read"] == stats.word_id["read"]
    if version < 5:
        assert isinstance(loaded.local_terms, list) and loaded.local_terms  # decoded, as before
    assert dict(loaded.local_row) == dict(stats.local_row)
    assert WORD_ROWS not in loaded.__dict__  # joined only when first asked
    assert np.array_equal(loaded.local_row_of_word, stats.local_row_of_word)
    assert dict(load_shard_counts(path, "v").local_row) == dict(stats.local_row)


def test_a_file_without_every_index_member_of_its_format_is_refused(tmp_path: Path) -> None:
    """A format-5 file lacking its per-shard terms' index is no file esqlog wrote."""
    _, path = stats_file(tmp_path)
    refused(rewritten(path, lambda arrays, meta: arrays.pop("local_word_order")), "unknown format")


def test_the_per_shard_terms_are_read_in_place(tmp_path: Path) -> None:
    stats, path = stats_file(tmp_path)
    for loaded in (load_identifier_stats(path, "v"), load_shard_counts(path, "v")):
        terms = getattr(loaded, "local_terms", None)
        assert terms is None or (
            isinstance(terms, MappedTerms) and list(terms) == list(stats.local_terms)
        )
        assert isinstance(loaded.local_row, TermIds) and len(stats.local_row) > 3
        assert dict(loaded.local_row) == dict(stats.local_row)
        for term, row in stats.local_row.items():
            assert loaded.local_row.get(term) == row and term in loaded.local_row
        assert loaded.local_row.get("notaterm") is None
        assert np.array_equal(loaded.local_df, stats.local_df)


def _set(
    key: str, value: Callable[[np.ndarray], np.ndarray]
) -> Callable[[dict[str, np.ndarray], dict[str, Any]], None]:
    def change(arrays: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
        arrays[key] = value(arrays[key])

    return change


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (_set("word_order", lambda a: a + 1), ("word_order",)),
        (_set("word_order", lambda a: np.zeros_like(a)), ("word_order",)),
        (_set("word_starts", lambda a: a * 2), ("word_starts",)),
        (
            _set("word_starts", lambda a: np.concatenate((a[:1], a[2:3], a[1:2], a[3:]))),
            ("word_starts",),
        ),
        (_set("word_keys", lambda a: a[::-1].copy()), ("word_keys",)),
        (_set("word_keys", lambda a: a[1:]), ("hashes",)),
        (_set("comp_idx", lambda a: a + 10_000), ("comp_idx",)),
        (_set("comp_ptr", lambda a: a[::-1].copy()), ("comp_ptr",)),
        (_set("words", lambda a: np.where(a == ord("r"), 0xFF, a).astype(np.uint8)), ("UTF-8",)),
        (_set("word_order", lambda a: a.astype(np.int64)), ("damaged",)),  # wrong dtype
        (_set("words", lambda a: np.concatenate((a[:-1], [0xC3])).astype(np.uint8)), ("UTF-8",)),
        (
            lambda arrays, meta: arrays.update(
                comp_idx=np.full_like(arrays["comp_idx"], arrays["word_order"].size)
            ),
            ("comp_idx",),
        ),  # one past the end
        (_set(WORD_ROWS, lambda a: a + 1), (WORD_ROWS, "outside")),  # past the last row
        (_set(WORD_ROWS, lambda a: a - 1), (WORD_ROWS, "outside")),  # -2
        (_set(WORD_ROWS, lambda a: a[1:]), (WORD_ROWS, "per word")),
        (_set(WORD_ROWS, lambda a: a.astype(np.int64)), ("damaged",)),  # wrong dtype
        (_set("local_word_order", lambda a: a + 1), ("local_word_order",)),
        (_set("local_word_starts", lambda a: a * 2), ("local_word_starts",)),
        (_set("local_word_keys", lambda a: a[::-1].copy()), ("local_word_keys",)),
        (
            _set("local_words", lambda a: np.concatenate((a[:-1], [0xC3])).astype(np.uint8)),
            ("UTF-8",),
        ),
    ],
)
def test_a_forged_word_index_is_refused_in_one_line(
    tmp_path: Path,
    change: Callable[[dict[str, np.ndarray], dict[str, Any]], None],
    words: tuple[str, ...],
) -> None:
    _, path = stats_file(tmp_path)
    refused(rewritten(path, change), *words)


def test_a_member_running_past_the_end_is_refused(tmp_path: Path) -> None:
    _, path = stats_file(tmp_path)
    path.write_bytes(path.read_bytes()[:-2000])
    refused(path, "damaged")


def test_a_compressed_file_is_refused_in_one_line(tmp_path: Path) -> None:
    _, path = stats_file(tmp_path)
    with np.load(path) as data:
        arrays = {k: data[k] for k in data.files}
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    path.write_bytes(buffer.getvalue())
    assert zipfile.ZipFile(path).infolist()[0].compress_type == zipfile.ZIP_DEFLATED
    refused(path, "compressed", "recalibrate")


def test_a_symlink_to_the_file_loads_and_one_to_a_device_is_refused(tmp_path: Path) -> None:
    stats, path = stats_file(tmp_path)
    link = tmp_path / "link.idents.npz"
    os.symlink(path, link)
    assert list(load_identifier_stats(link, "v").words) == list(stats.words)
    device = tmp_path / "dev.idents.npz"
    os.symlink("/dev/zero", device)
    refused(device, "not a regular file")


def test_a_mapped_snapshot_equals_the_one_written(tmp_path: Path) -> None:
    terms = [f"t{k}" for k in range(500)]
    keys = np.array(sorted({term_hash(t) for t in terms}), np.uint64)
    vocab = Vocabulary(
        "i",
        "u",
        "body",
        600,
        5000,
        600,
        "now",
        keys,
        np.arange(1, keys.size + 1, dtype=np.uint32),
        build_bloom(terms),
    )
    path, digest = save_vocabulary(vocab, tmp_path / "x.vocab.npz")
    loaded = load_vocabulary(path, digest)
    assert np.array_equal(loaded.hashes, vocab.hashes) and np.array_equal(loaded.df, vocab.df)
    assert loaded.bloom is not None and vocab.bloom is not None
    assert np.array_equal(loaded.bloom, vocab.bloom) and not loaded.df.flags.writeable
    asked = [*terms[:50], "absent"]
    assert loaded.df_of(asked) == vocab.df_of(asked)
    assert all(loaded.might_hold(t) for t in terms)
    unchecked = load_vocabulary(path)  # no checksum: read (CRC-checked), not mapped
    assert np.array_equal(unchecked.df, vocab.df)
