"""A calibration on disk: the JSON record and the vocabulary snapshot it names, as one pair.

Why a module of its own: the files are where a calibration meets the outside world. They
are read back as untrusted input (hand-edited, truncated, a FIFO in their place), so loading
gives a one-line error for each way one can be wrong; and the record and its snapshot are
replaced so that a run killed at any moment leaves a whole pair, old or new. Computing a
calibration (esqlog.calibration.calibrate) and checking it against the live index
(esqlog.calibration.freshness) never touch a file.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from esqlog.atomic import (
    DuplicateKeyError,
    atomic_write,
    output_target,
    read_regular_file,
    unique_keys,
)
from esqlog.calibration.record import Calibration
from esqlog.errors import UsageError
from esqlog.statistics.vocabulary import Vocabulary, snapshot_payload

MAX_CALIBRATION_BYTES = 1 << 20  # a record is ~1 KB; anything near this is not one


def save_calibration(calibration: Calibration, path: str | Path) -> Path:
    """Write the record as JSON atomically (esqlog.atomic): old file or new, never partial."""
    payload = json.dumps(calibration.to_json(), indent=2, sort_keys=True) + "\n"
    return atomic_write(path, payload.encode("utf-8"), "calibration file")


def load_calibration(path: str | Path) -> Calibration:
    """Read a calibration file with a one-line error for every way it can be wrong.

    The file is read as a bounded regular file (esqlog.atomic.read_regular_file): a path
    to a FIFO or device is refused instead of blocking or filling memory.
    """
    source = Path(path)
    what = "calibration file"
    payload = read_regular_file(
        source, MAX_CALIBRATION_BYTES, what, "pass the file esqlog calibrate --out FILE wrote"
    )
    try:
        data = json.loads(payload.decode("utf-8"), object_pairs_hook=unique_keys)
    except DuplicateKeyError as exc:
        raise UsageError(
            f"calibration file {str(source)!r} is not a calibration esqlog wrote ({exc})",
            "re-run esqlog calibrate",
        ) from None
    except UnicodeDecodeError:
        raise UsageError(
            f"calibration file {str(source)!r} is not UTF-8 text", "re-run esqlog calibrate"
        ) from None
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"calibration file {str(source)!r} is truncated or corrupt (line {exc.lineno})",
            "re-run esqlog calibrate",
        ) from None
    except RecursionError:
        raise UsageError(
            f"calibration file {str(source)!r} is not a calibration (nested too deeply to read)",
            "re-run esqlog calibrate",
        ) from None
    except ValueError:  # an integer of more digits than Python converts (int_max_str_digits)
        raise UsageError(
            f"calibration file {str(source)!r} is not a calibration (a number too long to read)",
            "re-run esqlog calibrate",
        ) from None
    record = Calibration.from_json(data, f"calibration file {str(source)!r}")
    # The folder of the file itself, not of a symlink to it: the snapshot is written beside
    # the real file (esqlog.atomic follows links), so that is where it is found.
    return replace(record, location=os.path.dirname(os.path.realpath(source)))


def save_with_vocabulary(
    record: Calibration,
    vocab: Vocabulary,
    path: str | Path,
    companions: Callable[[Path, str], None] | None = None,
) -> Calibration:
    """Replace the pair (calibration, snapshot) so that a kill at any point leaves a whole pair.

    Three steps, each atomic: (1) the snapshot is written under a new, content-addressed
    name (``NAME.vocab.<sha256 prefix>.npz``) beside the calibration's real file, touching
    nothing the current calibration names; (2) the calibration is renamed into place naming
    it with its checksum: the pair switches here, all at once; (3) the snapshots no
    calibration names any more are deleted. Killed before (2): the old pair is intact (plus
    an unnamed snapshot the next run deletes); killed after: the new pair is.
    ``companions(folder_and_stem, digest)`` writes files that belong to the snapshot (the
    identifiers statistics, ``NAME.idents.<same prefix>.npz``) between (1) and (2), so they
    switch with it.
    """
    target = output_target(path, "calibration file")
    payload, digest = snapshot_payload(vocab)
    stem = target.name.removesuffix(".json")
    vocab_name = f"{stem}.vocab.{digest[:16]}.npz"
    atomic_write(target.parent / vocab_name, payload, "vocabulary file")
    if companions is not None:
        companions(target.parent / stem, digest)
    linked = replace(
        record,
        vocabulary=vocab_name,
        vocabulary_sha256=digest,
        vocabulary_terms=len(vocab),
        location=str(target.parent),
    )
    save_calibration(linked, path)
    _remove_unnamed_snapshots(target, stem, vocab_name)
    return linked


def _remove_unnamed_snapshots(target: Path, stem: str, keep: str) -> None:
    """Delete this calibration's earlier snapshots (and those of runs killed mid-write).

    Only after re-reading the calibration: if another run has meanwhile replaced it, its
    snapshot is the one to keep, and this run deletes nothing.
    """
    try:
        named = json.loads(target.read_text(encoding="utf-8")).get("vocabulary")
    except (OSError, ValueError, AttributeError):
        return
    if named != keep:
        return
    for kind in ("vocab", "idents"):  # the snapshot and its companion files
        kept = keep.replace(".vocab.", f".{kind}.", 1)
        legacy = f"{stem}.{kind}.npz"
        for candidate in target.parent.iterdir():
            name = candidate.name
            hashed = (
                name.startswith(f"{stem}.{kind}.")
                and name.endswith(".npz")
                and len(name) == len(stem) + len(kind) + 2 + 16 + len(".npz")
            )
            if name != kept and (hashed or name == legacy):
                candidate.unlink(missing_ok=True)
