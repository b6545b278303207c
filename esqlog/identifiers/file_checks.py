"""What a split-statistics file's arrays must hold (esqlog.identifiers.files reads them):
each check names what is wrong, or returns None.

Why apart: the file is untrusted input; these are its consistency rules, one per group of
members (the per-word arrays, the compounds of each word, each shard's own statistics, each
word's per-shard row), separate from how the file is laid out and read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from esqlog.identifiers.scan import MAX_SHARDS
from esqlog.statistics.mapped_terms import decreases

#: the per-word arrays every format holds, with their dtypes
ARRAYS = {
    "df_engine": np.uint32,
    "df_split": np.uint32,
    "mask": np.uint64,
    "parts_ptr": np.int64,
    "parts_idx": np.int32,
}
#: each word's row of local_df, -1 for none (format 6): what a per-shard query reads for
#: the compounds it lists, stored so that no process joins the two tables' hashes itself
WORD_ROWS = "local_row_of_word"


def array_problem(arrays: Mapping[str, np.ndarray], n_words: int, n_docs: int) -> str | None:
    """What is wrong with the arrays of a file, or None (a df above N would zero its weights)."""
    for key, dtype in ARRAYS.items():
        if arrays[key].dtype != dtype or arrays[key].ndim != 1:
            return f"{key} is not a {np.dtype(dtype).name} vector"
    for key in ("df_engine", "df_split", "mask"):
        if arrays[key].size != n_words:
            return f"{key} has {arrays[key].size} entries for {n_words} words"
    for key in ("df_engine", "df_split"):
        if arrays[key].size and int(arrays[key].max()) > n_docs:
            return f"{key} exceeds the document count {n_docs}"
    ptr, idx = arrays["parts_ptr"], arrays["parts_idx"]
    if ptr.size != n_words + 1 or ptr[0] != 0 or ptr[-1] != idx.size or decreases(ptr):
        return "parts_ptr is not a valid offset vector"
    if idx.size and (idx.min() < 0 or idx.max() >= n_words):
        return "parts_idx points outside the words"
    return None


def inverse_problem(inverse: Mapping[str, np.ndarray], parts: int, n_words: int) -> str | None:
    """What is wrong with a file's compounds of each word (format 4), or None."""
    if not inverse:
        return None
    ptr, idx = inverse["comp_ptr"], inverse["comp_idx"]
    if (
        ptr.size != n_words + 1
        or ptr[0] != 0
        or ptr[-1] != idx.size
        or idx.size != parts
        or (decreases(ptr))
    ):
        return "comp_ptr is not a valid offset vector"
    if idx.size and (idx.min() < 0 or idx.max() >= n_words):
        return "comp_idx points outside the words"
    return None


def rows_problem(rows: np.ndarray | None, n_words: int, n_local: int) -> str | None:
    """What is wrong with the words' per-shard rows of a file, or None."""
    if rows is None:
        return None
    if rows.dtype != np.int32 or rows.shape != (n_words,):
        return f"{WORD_ROWS} is not one int32 per word"
    if rows.size and (int(rows.min()) < -1 or int(rows.max()) >= n_local):
        return f"{WORD_ROWS} points outside the per-shard terms"
    return None


def local_problem(
    terms: Sequence[str], local_df: np.ndarray, shard_docs: np.ndarray, shards: object
) -> str | None:
    """What is wrong with a file's per-shard statistics, or None."""
    if not isinstance(shards, int) or not 1 <= shards <= MAX_SHARDS:
        return "shards is not a shard count"
    if (
        shard_docs.dtype != np.int64
        or shard_docs.ndim != 1
        or shard_docs.size not in (0, shards)
        or (shard_docs.size and (shard_docs.min() < 0 or shard_docs.sum() < 1))
    ):
        # all zero would give every shard N = 0: every query matches nothing
        return "shard_docs is not a document count per shard"
    if local_df.dtype != np.uint32 or local_df.shape != (len(terms), shards):
        return f"local_df is not a {len(terms)} x {shards} uint32 matrix"
    if shard_docs.size and local_df.size and np.any(local_df > shard_docs[None, :]):
        return "local_df exceeds a shard's document count"
    if not shard_docs.size and local_df.size:
        return "local_df without shard document counts"
    return None
