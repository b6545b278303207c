"""``esqlog.calibrate`` refuses bad arguments before its first request: each with one line
naming the argument and the fix, in the Python API's words (not the CLI's flags).

The clients point at a closed port: a check that let a request through would fail with
a connection error instead of the UsageError or TypeError asserted here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import esqlog

CLOSED = "http://127.0.0.1:9"


def _client() -> Any:
    from opensearchpy import OpenSearch

    return OpenSearch(hosts=[CLOSED], timeout=1, max_retries=0)


@pytest.mark.parametrize(
    ("arguments", "problem", "fix"),
    [
        ({"vocabulary": True}, "vocabulary=True needs out=", "out='FILE.json'"),
        (
            {"identifiers": True, "out": "x.json"},
            "identifiers=True needs vocabulary=True",
            "vocabulary=True, identifiers=True",
        ),
        ({"sample": 0}, "sample must be an integer between 1 and", "exact=True"),
        ({"sample": 10**9}, "sample must be an integer between 1 and", "sample=20000"),
        ({"seed": 2**63}, "seed must be a signed 64-bit integer", "seed=42"),
        ({"predictor": "best"}, "unknown predictor 'best'", "use one of"),
        ({"parallel": 0}, "parallel must be an integer between 1 and", "pass 1"),
        ({"parallel": True}, "parallel must be an integer between 1 and", "pass 1"),
    ],
)
def test_bad_arguments_are_one_line_usage_errors(
    arguments: dict[str, Any], problem: str, fix: str
) -> None:
    with pytest.raises(esqlog.UsageError) as caught:
        esqlog.calibrate(_client(), "code", "body", **arguments)
    assert caught.value.problem.startswith(problem)
    assert fix in (caught.value.fix or "")
    assert "--" not in str(caught.value)  # the API's argument names, not the CLI's flags
    assert "\n" not in str(caught.value)


def test_an_out_that_is_a_directory_is_refused_before_connecting(tmp_path: Path) -> None:
    with pytest.raises(esqlog.UsageError, match="calibration file"):
        esqlog.calibrate(_client(), "code", "body", out=tmp_path)


@pytest.mark.parametrize("package", ["elasticsearch", "opensearchpy"])
def test_an_async_client_is_a_type_error_naming_the_way(package: str) -> None:
    if package == "elasticsearch":
        from elasticsearch import AsyncElasticsearch

        client: Any = AsyncElasticsearch(CLOSED)
    else:
        from opensearchpy import AsyncOpenSearch

        client = AsyncOpenSearch(hosts=[CLOSED])
    with pytest.raises(TypeError, match=r"needs a sync client, got Async.*esqlog\.wrap"):
        esqlog.calibrate(client, "code", "body")


def test_something_else_than_a_client_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="takes an elasticsearch or opensearch-py client, got str"):
        esqlog.calibrate("http://localhost:9200", "code", "body")


def test_options_are_keyword_only() -> None:
    with pytest.raises(TypeError, match="positional"):
        esqlog.calibrate(_client(), "code", "body", True)  # type: ignore[call-arg]
