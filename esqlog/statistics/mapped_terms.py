"""A list of distinct terms read in place from a file's arrays, with a term -> position index.

Why: a list of a million ``str`` and a dictionary over them are ~150 bytes a term of
private memory in every process that loads them, and seconds of decoding; N worker
processes serving one calibration held N copies. Here the terms stay the file's bytes
(newline-joined UTF-8, memory-mapped, shared by every process through the page cache),
with each term's start, the terms' 64-bit BLAKE2b hashes sorted and the positions in that
order: a lookup hashes one term, binary-searches the hashes and compares the bytes.
Nothing per term is created until a term is asked for.
"""

from __future__ import annotations

import codecs
from bisect import bisect_left
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, overload

import numpy as np

from esqlog.statistics.recent import MISSING, RecentMemory
from esqlog.statistics.term_table import TermTable, digest, same_bytes

NEWLINE = ord("\n")
#: MappedTerms.take: more ids than this are gathered by numpy (its calls cost more than a
#: loop over a few)
TAKE_LOOP = 16
CHUNK = 1 << 20  # bytes or entries checked at once: temporaries stay small, so the heap
#: a load leaves behind (private to each process) does too


class MappedTerms(Sequence[str]):
    """Terms ``0..n-1``: term k is ``blob[starts[k]:starts[k + 1] - 1]`` (a newline after
    each but the last); ``keys`` their BLAKE2b-64 hashes sorted, ``order`` the term at
    each of those hashes."""

    def __init__(
        self, blob: np.ndarray, starts: np.ndarray, keys: np.ndarray, order: np.ndarray
    ) -> None:
        self.blob, self.starts, self.keys, self.order = blob, starts, keys, order
        self._bytes = blob.data.cast("B") if blob.size else memoryview(b"")
        self._keys = keys.data.cast("B").cast("Q") if keys.size else ()
        self._order = order.data.cast("B").cast("i") if order.size else ()
        # the starts as a memoryview of machine ints: indexing one gives a Python int in
        # ~30 ns, where a numpy scalar and its int() cost ~4x that (a search decodes ~300)
        self._starts_array = _native_int64(starts)
        self._starts = self._starts_array.data.cast("B").cast("q")

    def __len__(self) -> int:
        return int(self.starts.size) - 1

    @overload
    def __getitem__(self, i: int) -> str: ...

    @overload
    def __getitem__(self, i: slice) -> list[str]: ...

    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        starts = self._starts
        n = len(starts) - 1
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(i)
        return str(self._bytes[starts[i] : starts[i + 1] - 1], "utf-8")

    def take(self, ids: Sequence[int] | np.ndarray) -> list[str]:
        """The terms at ``ids`` (each in ``0..n-1``), in that order: what an identifiers
        search asks for (~300 compound names), decoded at once with no per-term method
        call. Many ids (an array, or a list of more than TAKE_LOOP) are gathered by numpy:
        each term's bytes with the newline after it, in one fancy index of the blob
        (Go 153K: 0.09 -> 0.05 ms for a search's names); a few, by slicing each."""
        if len(ids) > TAKE_LOOP or isinstance(ids, np.ndarray):
            return self._gathered(np.asarray(ids, np.int64))
        starts, data, n = self._starts, self._bytes, len(self._starts) - 1
        if not ids:
            return []
        if min(ids) < 0 or max(ids) >= n:
            raise IndexError(min(ids) if min(ids) < 0 else max(ids))
        joined = b"\n".join([data[starts[i] : starts[i + 1] - 1] for i in ids])
        return str(joined, "utf-8").split("\n")

    def _gathered(self, ids: np.ndarray) -> list[str]:
        """:meth:`take` by one gather: term k's bytes and the separator after it are
        ``blob[starts[k]:starts[k + 1]]`` (for the last term the separator lies one past
        the blob: the gather clips it there, and every separator is then written as a
        newline). The starts are read as native int64 (a file's int32 or uint32 copied
        once, at load) and a position past the last term fails the gather of ``k + 1``."""
        if not ids.size:
            return []
        if int(ids.min()) < 0:
            raise IndexError(int(ids.min()))
        starts = self._starts_array
        end = starts[ids + 1]  # past the term's newline (IndexError past the last term)
        size = end - starts[ids]
        ends = np.cumsum(size)  # where each ends in the joined bytes
        places = np.repeat(end - ends, size)  # each byte's offset from its place there
        places += np.arange(places.size)
        joined = self.blob.take(places, mode="clip")
        joined[ends - 1] = NEWLINE
        return str(joined.tobytes(), "utf-8").split("\n")[:-1]

    def __iter__(self) -> Iterator[str]:
        return (self[k] for k in range(len(self)))

    def id_of(self, term: str) -> int | None:
        """The position of ``term``, or None: its hash's candidates, confirmed by bytes."""
        data = term.encode("utf-8", "surrogatepass")
        key = int.from_bytes(digest(data), "little")
        keys, n = self._keys, len(self._keys)
        at = bisect_left(keys, key)
        while at < n and keys[at] == key:
            k = self._order[at]
            if self._bytes[self._starts[k] : self._starts[k + 1] - 1] == data:
                return int(k)
            at += 1
        return None

    def ids_of(self, terms: Sequence[str]) -> np.ndarray:
        """The positions of ``terms`` (int64, -1 where absent), as :meth:`id_of` finds them
        one by one, with the hashes searched at once: a per-shard identifiers search looks
        up every term it lists (~180) in two tables, and one binary search each in Python
        cost more than the rest of its shard queries."""
        out = np.full(len(terms), -1, np.int64)
        if not len(terms) or not len(self._keys):
            return out
        data = [t.encode("utf-8", "surrogatepass") for t in terms]
        keys = np.fromiter(
            (int.from_bytes(digest(d), "little") for d in data), np.uint64, len(data)
        )
        at = np.searchsorted(self.keys, keys)
        hit = at < len(self._keys)
        hit[hit] = self.keys[at[hit]] == keys[hit]
        blob, starts, order = self._bytes, self._starts, self._order
        for i in np.flatnonzero(hit).tolist():
            k = order[int(at[i])]
            if blob[starts[k] : starts[k + 1] - 1] == data[i]:
                out[i] = k
            else:  # another term of the same hash first: the one-by-one walk decides
                out[i] = -1 if (found := self.id_of(terms[i])) is None else found
        return out

    def positions_in(self, other: MappedTerms) -> np.ndarray:
        """Where each of these terms is in ``other`` (int64, -1 where absent), all at once:
        the two tables' sorted hashes joined by one search, each match confirmed by its
        bytes. Why: looking every term up by name would hash each again (~1 us a term);
        this is a few numpy passes over arrays both files hold. When ``other``'s own hashes
        collide (odds ~2e-7 at three million terms) its lookups decide, term by term."""
        out = np.full(len(self), -1, np.int64)
        theirs = other.keys
        if not len(self) or not theirs.size:
            return out
        if bool(np.any(theirs[1:] == theirs[:-1])):  # a search would find one of the two
            return other.ids_of(list(self))
        at = np.minimum(np.searchsorted(theirs, self.keys), theirs.size - 1)
        hit = np.flatnonzero(theirs[at] == self.keys)
        mine = np.asarray(self.order, np.int64)[hit]
        found = np.asarray(other.order, np.int64)[at[hit]]
        same = same_bytes(
            self.blob,
            self._starts_array[mine],
            self._lengths(mine),
            other.blob,
            other._starts_array[found],
            other._lengths(found),
        )
        out[mine[same]] = found[same]
        return out

    def _lengths(self, ids: np.ndarray) -> np.ndarray:
        """The bytes of the terms at ``ids`` (the newline after each not counted)."""
        starts = self._starts_array
        lengths: np.ndarray = starts[ids + 1] - starts[ids] - 1
        return lengths


def ids_of(index: Mapping[str, int], terms: Sequence[str]) -> np.ndarray:
    """The positions of ``terms`` in ``index`` (int64, -1 where absent): at once where the
    index can (a file's words read in place), else one lookup each."""
    batch = getattr(index, "ids_of", None)
    if batch is not None:
        found: np.ndarray = batch(terms)
        return found
    return np.fromiter((index.get(t, -1) for t in terms), np.int64, len(terms))


def positions_in(
    terms: Sequence[str], other: Sequence[str], other_index: Mapping[str, int]
) -> np.ndarray:
    """Where each of ``terms`` is in ``other`` (int64, -1 where absent; ``other_index`` its
    term -> position map): joined by hashes when both are read from a file
    (:meth:`MappedTerms.positions_in`) or both hashed by calibrate (TermTable.index_of),
    else looked up one by one."""
    if not len(other):  # a one-shard index's per-shard terms: no term decoded for nothing
        return np.full(len(terms), -1, np.int64)
    if isinstance(terms, MappedTerms) and isinstance(other, MappedTerms):
        return terms.positions_in(other)
    if isinstance(terms, TermTable) and isinstance(other, TermTable):  # calibrate's tables
        return other.index_of(terms)
    return ids_of(other_index, list(terms))


def remember_positions(index: Mapping[str, int], terms: Sequence[str], ids: np.ndarray) -> None:
    """Tell ``index`` the positions of ``terms`` just found by position (a plan's compounds,
    gathered by id), when it keeps a memory of lookups (:class:`TermIds`): a lookup of the
    same terms by name soon after then hashes none of them."""
    remember = getattr(index, "remember", None)
    if remember is not None:
        remember(terms, ids)


def _native_int64(values: np.ndarray) -> np.ndarray:
    """``values`` as contiguous native int64 (itself when it is: a file's array stays
    mapped), so that a memoryview can cast it to machine ints."""
    if values.dtype == np.dtype(np.int64) and values.flags.c_contiguous:
        return values
    return np.ascontiguousarray(values, dtype=np.int64)


#: lookups TermIds remembers (a few hundred KB): a search asks for each of its words'
#: position three times (its split, its compounds, its df) and queries share most words
RECENT_IDS = 4096
#: the positions looked up many at once (a per-shard search's ~180 listed terms) that
#: TermIds remembers apart from the words': the next page of a search asks them again,
#: and they would push the words out of RECENT_IDS every twenty searches
RECENT_LISTED = 4096


class TermIds(Mapping[str, int]):
    """term -> its position in a MappedTerms, without a dictionary of every term: only
    the RECENT_IDS most recently asked (absent ones too, in two generations), and the
    RECENT_LISTED most recently asked many at once (:meth:`ids_of`)."""

    def __init__(self, terms: MappedTerms) -> None:
        self._terms = terms
        self._recent: RecentMemory[str, int | None] = RecentMemory(RECENT_IDS)
        self._listed: RecentMemory[str, int | None] = RecentMemory(RECENT_LISTED)

    def get(self, key: str, default: Any = None) -> Any:
        if not isinstance(key, str):
            return default
        # one dict operation to read (None: asked, and absent): the searches of several
        # threads share this memory (esqlog.statistics.recent)
        found = self._recent.get(key, MISSING)
        if found is MISSING and (found := self._recent.recall(key)) is MISSING:
            found = self._terms.id_of(key)
            self._recent.remember(key, found)
        return default if found is None else found

    def __getitem__(self, key: str) -> int:
        found = self.get(key)
        if found is None:
            raise KeyError(key)
        return int(found)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.get(key) is not None

    def ids_of(self, terms: Sequence[str]) -> np.ndarray:
        """The positions of many terms at once (-1 where absent): those asked recently from
        memory, the rest hashed and searched together, then remembered apart from the
        words (the next page of a search, or a retry, asks the same terms again)."""
        recent, listed = self._recent, self._listed
        found = [
            known if (known := recent.get(t, MISSING)) is not MISSING else listed.get(t, MISSING)
            for t in terms
        ]
        missed = [i for i, f in enumerate(found) if f is MISSING]
        out = np.fromiter(
            (-1 if f is None or f is MISSING else f for f in found), np.int64, len(found)
        )
        if missed:
            asked = [terms[i] for i in missed]
            got = self._terms.ids_of(asked)
            out[missed] = got
            for term, k in zip(asked, got.tolist(), strict=True):
                listed.remember(term, None if k < 0 else k)
        return out

    def remember(self, terms: Sequence[str], ids: np.ndarray) -> None:
        """Keep the positions ``ids`` (each a term's, found by position) of ``terms`` among
        those looked up many at once, for :meth:`ids_of`: the per-shard identifiers queries
        look up the compounds their plan gathered by id a moment before (~250 a search on
        three shards, ~0.3 ms to hash them again)."""
        self._listed.remember_all(terms, ids.tolist())

    def __iter__(self) -> Iterator[str]:
        return iter(self._terms)

    def __len__(self) -> int:
        return len(self._terms)


def index_arrays(words: Sequence[str]) -> dict[str, np.ndarray]:
    """The arrays a file stores beside the newline-joined words so that they can be read
    as MappedTerms: each word's start, the sorted hashes and the positions in that order."""
    table = words if isinstance(words, TermTable) else TermTable.of(words, checksums=False)
    n = len(table)
    starts = table.offsets + np.arange(n + 1, dtype=np.int64)  # a separator before each next
    order = np.argsort(table.keys, kind="stable")
    return {
        "word_starts": starts.astype(np.int64),
        "word_keys": table.keys[order],
        "word_order": order.astype(np.int32),
    }


def check_utf8(data: memoryview) -> None:
    """Raise UnicodeDecodeError unless ``data`` is UTF-8, decoding a piece at a time."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    for at in range(0, data.nbytes, CHUNK):
        decoder.decode(data[at : at + CHUNK])
    decoder.decode(b"", final=True)


def _newlines(blob: np.ndarray) -> int:
    return sum(
        int(np.count_nonzero(blob[at : at + CHUNK] == NEWLINE)) for at in range(0, blob.size, CHUNK)
    )


def index_problem(
    blob: np.ndarray, starts: np.ndarray, keys: np.ndarray, order: np.ndarray
) -> str | None:
    """What makes these arrays no MappedTerms (bounds a reader relies on), or None.

    A wrong hash only hides its word from lookups (the file's own checksum tells damage
    from a good file); starts and positions out of bounds would read past the words.
    Every pass goes CHUNK entries at a time: a temporary the size of a million-word
    array, once freed, stays in each process's heap (the allocator keeps it)."""
    n = starts.size - 1
    if n < 0 or starts[0] != 0 or starts[-1] != (blob.size + 1 if n else 0):
        return "word_starts does not span the words"
    if n and (
        decreases(starts, strict=True)
        or _newlines(blob) != n - 1
        or not _newline_before_each(blob, starts)
    ):
        return "word_starts are not the words' starts"
    if keys.size != n or order.size != n:
        return f"{keys.size:,} hashes and {order.size:,} positions for {n:,} words"
    if n and (int(order.min()) < 0 or int(order.max()) >= n or not _covers(order, n)):
        return "word_order is not a permutation of the words"
    if n > 1 and decreases(keys):
        return "word_keys are not sorted"
    return None


def decreases(values: np.ndarray, strict: bool = False) -> bool:
    """Whether a value is below the one before it (``strict``: or equal to it), read
    CHUNK entries at a time (no temporary the size of ``values``)."""
    for at in range(0, max(values.size - 1, 0), CHUNK):
        piece = values[at : at + CHUNK + 1]
        after, before = piece[1:], piece[:-1]
        if bool(np.any(after <= before) if strict else np.any(after < before)):
            return True
    return False


def _newline_before_each(blob: np.ndarray, starts: np.ndarray) -> bool:
    """Whether a newline precedes every word but the first (starts within the blob)."""
    for at in range(1, starts.size - 1, CHUNK):
        if bool(np.any(blob[starts[at : min(at + CHUNK, starts.size - 1)] - 1] != NEWLINE)):
            return False
    return True


def _covers(order: np.ndarray, n: int) -> bool:
    """Whether ``order`` (n entries, each in 0..n-1) holds every position: a permutation."""
    seen = np.zeros(n, dtype=bool)
    for at in range(0, order.size, CHUNK):
        seen[order[at : at + CHUNK]] = True
    return bool(seen.all())
