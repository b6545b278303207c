"""What ``esqlog.wrap`` promises without a cluster: keyword-only options, the client's own
type (isinstance), copy.copy as the client's, and pickling refused with the fix.

The clients below are never asked anything (both connect lazily), so no engine is needed;
searches through a copy are checked on real engines in tests/engine/test_calibrate_api.py.
"""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable
from typing import Any

import pytest

import esqlog
from esqlog.wrapper import AsyncQlogClient, QlogClient
from esqlog.wrapper.client import unwrapped

UNREACHABLE = "http://127.0.0.1:9"  # never contacted: no test here sends a request


def _calibration() -> esqlog.Calibration:
    return esqlog.Calibration(
        index="code",
        index_uuid="U1",
        field="body",
        q=0.7,
        h_tok=0.03,
        h_tok_low=0.02,
        h_tok_high=0.04,
        h_tok_method="exact",
        doc_count=100,
        live_docs=100,
        sum_ttf=4000,
        avgdl=40.0,
        shards=1,
        analyzer="standard",
        splits_identifiers=False,
        predictor="esqlog-linear",
        predictor_version="1",
        engine="opensearch",
        engine_version="3.6.0",
    )


def _elasticsearch() -> Any:
    from elasticsearch import Elasticsearch

    return Elasticsearch(UNREACHABLE)


def _opensearch() -> Any:
    from opensearchpy import OpenSearch

    return OpenSearch(hosts=[UNREACHABLE])


def _async_elasticsearch() -> Any:
    from elasticsearch import AsyncElasticsearch

    return AsyncElasticsearch(UNREACHABLE)


def _async_opensearch() -> Any:
    from opensearchpy import AsyncOpenSearch

    return AsyncOpenSearch(hosts=[UNREACHABLE])


SYNC = [
    pytest.param(_elasticsearch, id="elasticsearch"),
    pytest.param(_opensearch, id="opensearch"),
]
ALL = [
    *SYNC,
    pytest.param(_async_elasticsearch, id="async-elasticsearch"),
    pytest.param(_async_opensearch, id="async-opensearch"),
]


@pytest.mark.parametrize("make", SYNC)
def test_options_after_the_calibration_are_keyword_only(make: Callable[[], Any]) -> None:
    client = make()
    with pytest.raises(TypeError, match="positional"):
        esqlog.wrap(client, _calibration(), "rerank")  # type: ignore[call-arg]
    wrapped = esqlog.wrap(client, _calibration(), mode="rerank", top_n=7)
    assert wrapped.esqlog_core.options.mode == "rerank"
    assert wrapped.esqlog_core.options.top_n == 7


@pytest.mark.parametrize("make", ALL)
def test_copy_gives_a_wrapped_copy_of_the_client(make: Callable[[], Any]) -> None:
    client = make()
    wrapped = esqlog.wrap(client, _calibration())
    copied = copy.copy(wrapped)
    assert type(copied) is type(wrapped)
    assert type(copied) in (QlogClient, AsyncQlogClient)
    assert isinstance(copied, type(client))
    assert unwrapped(copied) is not client  # the client's own copy, not the same object
    assert type(unwrapped(copied)) is type(client)
    assert copied.esqlog_core is wrapped.esqlog_core  # same calibrations, same caches


@pytest.mark.parametrize("make", SYNC)
def test_deepcopy_behaves_as_the_client_s_own(make: Callable[[], Any]) -> None:
    client = make()
    try:
        expected: Any = type(copy.deepcopy(client))
    except Exception as exc:  # today both clients hold thread locals or locks
        expected = type(exc)
    wrapped = esqlog.wrap(client, _calibration())
    if isinstance(expected, type) and issubclass(expected, Exception):
        with pytest.raises(expected):
            copy.deepcopy(wrapped)
    else:
        assert isinstance(copy.deepcopy(wrapped), expected)


@pytest.mark.parametrize("make", ALL)
def test_pickling_is_refused_with_one_line_naming_the_fix(make: Callable[[], Any]) -> None:
    client = make()
    wrapped = esqlog.wrap(client, _calibration())
    with pytest.raises(TypeError) as caught:
        pickle.dumps(wrapped)
    message = str(caught.value)
    assert "\n" not in message
    assert type(client).__name__ in message
    assert "pickle the Calibration" in message and "esqlog.wrap(" in message
    # ... and that fix works: the calibration survives the trip and wraps again
    calibration = pickle.loads(pickle.dumps(_calibration()))
    assert calibration == _calibration()
    assert isinstance(esqlog.wrap(client, calibration), type(client))


def test_a_settings_choice_outside_its_literal_is_still_refused_at_run_time() -> None:
    from esqlog.identifiers.settings import COMMON, OPERATORS, SELECTIONS, SHARD_GROUPS

    assert (SELECTIONS, OPERATORS, COMMON, SHARD_GROUPS) == (
        ("mass", "multi", "words", "cover", "all", "auto"),
        ("or", "and"),
        ("split", "own"),
        ("max", "sum", "shard", "auto"),
    )
    for field in ("select", "operator", "common", "shard_groups"):
        bogus: dict[str, Any] = {field: "bogus"}
        with pytest.raises(esqlog.UsageError, match=f"^{field} must be"):
            esqlog.IdentifierSettings(**bogus)
