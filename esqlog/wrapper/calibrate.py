"""``esqlog.calibrate``: what ``esqlog calibrate`` does, on the application's own client.

Why here and not in esqlog.calibration: with ``identifiers=True`` it runs the identifiers
mode's scan (esqlog.identifiers, a layer above the calibration), and it takes the same
client object as :func:`esqlog.wrap`, a wrapped one included: calibrate, then wrap, with
one client and no connection settings of esqlog's own. It reads only; files are written
only when ``out`` is given, each atomically, in the order that leaves a whole set behind
whenever it stops (esqlog.calibration.files.save_with_vocabulary).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from esqlog.atomic import output_target
from esqlog.calibration.calibrate import calibrate as calibrate_engine
from esqlog.calibration.calibrate import calibrate_with_vocabulary
from esqlog.calibration.files import save_calibration, save_with_vocabulary
from esqlog.calibration.record import Calibration
from esqlog.engine.client import Engine, flavor_of, is_async_client
from esqlog.engine.shard_scan import DEFAULT_PARALLEL, MAX_PARALLEL
from esqlog.errors import UsageError
from esqlog.scoring.qlog import DEFAULT_PREDICTOR, PREDICTORS
from esqlog.statistics.hapax import DEFAULT_SAMPLE, MAX_SAMPLE
from esqlog.wrapper.client import unwrapped

logger = logging.getLogger("esqlog")


def calibrate(
    client: Any,
    index: str,
    field: str,
    *,
    vocabulary: bool = False,
    identifiers: bool = False,
    out: str | Path | None = None,
    exact: bool = False,
    sample: int = DEFAULT_SAMPLE,
    seed: int = 42,
    predictor: str = DEFAULT_PREDICTOR,
    parallel: int = DEFAULT_PARALLEL,
    word_lists: bool = True,
) -> Calibration:
    """Measure ``field`` of ``index`` through ``client`` and return its Calibration (its q).

    ``client``: a sync ``Elasticsearch`` or ``OpenSearch`` (or one ``esqlog.wrap`` made);
    an async client raises TypeError (calibrate once with a sync client and wrap the async
    one with the result). By default h_tok comes from a ``sample`` of documents drawn with
    ``seed``; ``exact=True`` reads every document. ``vocabulary=True`` also snapshots every
    term's df beside ``out`` (wrapped searches then need no statistics request; implies
    exact), ``identifiers=True`` (with ``vocabulary``) the identifiers mode's split
    statistics. ``out``: write the calibration there (and its snapshot files beside it);
    None writes nothing. ``parallel``: shards read at once by the exact scans.
    ``word_lists``: with ``identifiers=True`` on a cluster whose every data node runs
    esqlog-terms 1.9.0 or later, also write the word lists the nodes plan identifiers
    queries from, into an index of esqlog's own (``esqlog-words-…``, as ``esqlog calibrate``
    does), and name it in the Calibration; False writes nothing to the cluster (searches are
    then planned on the client). A refused write is logged on the ``esqlog`` logger and
    leaves searches planned on the client. Where the nodes keep whole words (esqlog-terms
    1.11.1 or later), every word's group is then read on them, the most frequent first, as
    ``esqlog calibrate`` does (esqlog.identifiers.warm; searches only). Every check
    of the arguments runs before the first request; bad values raise UsageError, the
    client's own exceptions propagate as the client raised them.
    """
    engine = _engine_of(client)
    _check(
        vocabulary=vocabulary,
        identifiers=identifiers,
        out=out,
        exact=exact,
        sample=sample,
        seed=seed,
        predictor=predictor,
        parallel=parallel,
        word_lists=word_lists,
    )
    if identifiers:
        from esqlog.identifiers.calibrate import (
            calibrate_identifiers,
            save_identifier_calibration,
            save_with_word_lists,
        )
        from esqlog.identifiers.warm import warm_line

        found = calibrate_identifiers(engine, index, field, predictor=predictor, parallel=parallel)
        assert out is not None  # _check: identifiers needs vocabulary, vocabulary needs out
        if not word_lists:
            record, _, _ = save_identifier_calibration(found, out)
            return record
        record, _, _, line = save_with_word_lists(found, out, engine)
        if line is not None:
            (logger.info if record.word_lists else logger.warning)(" ".join(line.split()))
        warmed = warm_line(engine, record, found.stats, found.vocabulary)
        if warmed is not None:  # the nodes keep whole words: their first searches find them
            logger.info(" ".join(warmed.split()))
        return record
    if vocabulary:
        record, vocab = calibrate_with_vocabulary(
            engine, index, field, predictor=predictor, parallel=parallel
        )
        assert out is not None
        return save_with_vocabulary(record, vocab, out)
    record = calibrate_engine(
        engine,
        index,
        field,
        exact=exact,
        sample=sample,
        seed=seed,
        predictor=predictor,
        parallel=parallel,
    )
    if out is not None:
        save_calibration(record, out)
    return record


def _engine_of(client: Any) -> Engine:
    """The sync client behind ``client``, as an Engine; TypeError for anything else."""
    client = unwrapped(client)
    if is_async_client(client):
        raise TypeError(
            f"esqlog.calibrate needs a sync client, got {type(client).__name__}; calibrate "
            "with Elasticsearch(...) or OpenSearch(...) and pass the Calibration to "
            "esqlog.wrap(async_client, calibration)"
        )
    try:
        flavor_of(client)
    except TypeError:
        raise TypeError(
            f"esqlog.calibrate takes an elasticsearch or opensearch-py client, "
            f"got {type(client).__name__}; pass e.g. Elasticsearch(url) or "
            "OpenSearch(hosts=[url])"
        ) from None
    return Engine(client)


def _check(
    *,
    vocabulary: bool,
    identifiers: bool,
    out: str | Path | None,
    exact: bool,
    sample: int,
    seed: int,
    predictor: str,
    parallel: int,
    word_lists: bool,
) -> None:
    """The CLI's checks, in the Python API's own words (argument names, not flags)."""
    if vocabulary and out is None:
        raise UsageError(
            "vocabulary=True needs out= (the snapshot is written beside that "
            "file, and the Calibration names it)",
            "pass out='FILE.json'",
        )
    if identifiers and not vocabulary:
        raise UsageError(
            "identifiers=True needs vocabulary=True (its statistics ride on that scan)",
            "pass vocabulary=True, identifiers=True, out='FILE.json'",
        )
    if out is not None:
        output_target(out, "calibration file")
    if not (exact or vocabulary) and not _integer_in(sample, 1, MAX_SAMPLE):
        raise UsageError(
            f"sample must be an integer between 1 and {MAX_SAMPLE:,}, got {sample!r}",
            "pass e.g. sample=20000, or exact=True to read every document",
        )
    if not _integer_in(seed, -(2**63), 2**63 - 1):
        raise UsageError(f"seed must be a signed 64-bit integer, got {seed!r}", "pass e.g. seed=42")
    if predictor not in PREDICTORS:
        raise UsageError(
            f"unknown predictor {predictor!r}", f"use one of {', '.join(sorted(PREDICTORS))}"
        )
    if not isinstance(word_lists, bool):
        raise UsageError(
            f"word_lists must be True or False, got {word_lists!r}",
            "pass word_lists=False to write nothing to the cluster",
        )
    if not _integer_in(parallel, 1, MAX_PARALLEL):
        raise UsageError(
            f"parallel must be an integer between 1 and {MAX_PARALLEL}, got {parallel!r}",
            "pass 1 to read shard after shard, or the number of data nodes",
        )


def _integer_in(value: object, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high
