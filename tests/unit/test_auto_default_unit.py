"""The I/O-free parts of mode="auto" and engine_query="auto": the nodes API answer read into
a plugin finding, the engines' refusal recognised, the code/prose rule on texts, and the
per-index choice. The refusal bodies are the ones both test nodes answered (OpenSearch 3.6,
Elasticsearch 8.19) to a query name they do not know; the engine tests send them for real
(tests/engine/test_auto_default.py)."""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

import pytest

from esqlog.calibration.plugin import (
    PluginFinding,
    engine_query_for,
    finding_of,
    search_path_line,
    terms_plugin_plan,
)
from esqlog.calibration.record import FIELDS, Calibration
from esqlog.errors import ClusterError
from esqlog.identifiers.code_rule import CODE_DOC_FLOOR, CODE_SHARE, share_of, split_counts
from esqlog.identifiers.settings import IdentifierSettings
from esqlog.wrapper.engine_query import EngineQueryChoice, plugin_refused, refused_in
from tests.support.wrapper_units import calibration

#: what both engines answered to a search naming a query they do not have
REFUSAL = {
    "error": {
        "root_cause": [
            {
                "type": "parsing_exception",
                "reason": "unknown query [esqlog_terms] did you mean [terms]?",
                "line": 1,
                "col": 33,
            }
        ],
        "type": "parsing_exception",
        "reason": "unknown query [esqlog_terms] did you mean [terms]?",
        "line": 1,
        "col": 33,
        "caused_by": {
            "type": "named_object_not_found_exception",
            "reason": "[1:33] unknown field [esqlog_terms]",
        },
    },
    "status": 400,
}


def _node(name: str, roles: list[str] | None, *plugins: tuple[str, str]) -> dict[str, Any]:
    node: dict[str, Any] = {
        "name": name,
        "plugins": [{"name": n, "version": v} for n, v in plugins],
    }
    if roles is not None:
        node["roles"] = roles
    return node


TERMS = ("esqlog-terms", "1.4.0")
OTHER = ("analysis-icu", "3.6.0")


def test_every_data_node_runs_the_plugin() -> None:
    found = finding_of(
        {
            "a": _node("a", ["data", "ingest"], TERMS, OTHER),
            "b": _node("b", ["data_hot"], TERMS),
            "m": _node("m", ["cluster_manager"], OTHER),
        }
    )  # no shards: not asked
    assert found.version == "1.4.0" and "every data node (2)" in found.why


def test_one_data_node_without_it_is_no_plugin() -> None:
    found = finding_of(
        {
            "a": _node("a", ["data"], TERMS),
            "b": _node("b", ["data"], OTHER),
            "c": _node("c", None, OTHER),
        }
    )  # no roles listed: counted, to be safe
    assert found.version == "" and found.why.startswith("2 of 3 data nodes lack")
    assert "b, c" in found.why


def test_a_rolling_upgrade_names_the_oldest_version() -> None:
    found = finding_of(
        {
            "a": _node("a", ["data"], ("esqlog-terms", "1.10.0")),
            "b": _node("b", ["data"], ("esqlog-terms", "1.9.2")),
        }
    )
    assert found.version == "1.9.2"  # numerically, not as text ("1.10.0" < "1.9.2")


def test_no_data_node_listed_is_not_checked() -> None:
    assert finding_of({"m": _node("m", ["master"], TERMS)}).version is None


def _run(plan: Any, answer: Any) -> Any:
    """Drive a one-request plan: ``answer`` is the body sent back, or an exception raised
    into the plan."""
    request = next(plan)
    assert (request.method, request.path) == ("GET", "/_nodes/plugins")
    try:
        if isinstance(answer, BaseException):
            plan.throw(answer)
        plan.send(answer)
    except StopIteration as stop:
        return stop.value
    raise AssertionError("the plan asked for more than one request")


class Refused(Exception):
    status_code = 403


def test_a_refused_nodes_api_is_not_checked_and_unreachable_is_an_error() -> None:
    found = _run(terms_plugin_plan(), Refused("security_exception"))
    assert found.version is None and "refused" in found.why
    assert (
        _run(terms_plugin_plan(), {"nodes": {"a": _node("a", ["data"], TERMS)}}).version == "1.4.0"
    )
    with pytest.raises(ConnectionError):
        _run(terms_plugin_plan(), ConnectionError("connection refused"))
    assert _run(terms_plugin_plan(), ClusterError("bad answer")).version is None


def _record(version: str | None) -> Calibration:
    return replace(calibration(), terms_plugin=version)


def test_engine_query_auto_takes_the_plugin_only_where_every_calibration_found_it() -> None:
    assert engine_query_for([_record("1.4.0"), _record("1.3.0")]) == (
        "plugin",
        "every data node runs esqlog-terms 1.3.0",
    )
    assert engine_query_for([_record("1.4.0"), _record("")])[0] == "span"
    assert "calibrate again" in engine_query_for([_record(None)])[1]
    assert engine_query_for([])[0] == "span"
    assert search_path_line(_record("1.4.0")).startswith(
        "identifiers groups as plugin esqlog-terms 1.4.0"
    )
    assert search_path_line(_record("")).startswith("identifiers groups as spans")


def test_a_calibration_file_with_a_bad_plugin_version_is_refused() -> None:
    check = FIELDS["terms_plugin"]
    for good in ("1.4.0", "1.4.0-SNAPSHOT", "", None):
        assert check(good) is None
    for bad in ("1" * 80, "1.4 .0", 140, "../../etc", "x1"):
        assert check(bad) is not None and "version" in str(check(bad))


class ClientError(Exception):
    def __init__(self, info: Any) -> None:
        super().__init__("BadRequestError(400, 'parsing_exception')")
        self.info = info


def test_the_engines_refusal_is_recognised_and_nothing_else() -> None:
    assert plugin_refused(ClientError(REFUSAL))
    other = {
        "error": {"type": "parsing_exception", "reason": "[esqlog_terms] unknown field [termz]"},
        "status": 400,
    }
    assert not plugin_refused(ClientError(other))  # a malformed query on a node that has it
    assert not plugin_refused(ClientError({"error": "unknown query [terms_set]"}))
    shard = {
        "_shards": {
            "total": 3,
            "failures": [
                {
                    "shard": 1,
                    "reason": {
                        "type": "illegal_argument_exception",
                        "reason": "Unknown NamedWriteable [org.opensearch.index.query.QueryBuilder]"
                        "[esqlog_terms]",
                    },
                }
            ],
        },
        "hits": {"hits": []},
    }
    assert refused_in(shard)
    assert refused_in({"responses": [{"hits": {}}, REFUSAL]})
    assert not refused_in({"responses": [{"hits": {}}], "_shards": {"failures": []}})


def test_auto_falls_back_once_and_an_explicit_plugin_never(
    caplog: pytest.LogCaptureFixture,
) -> None:
    changes: list[IdentifierSettings] = []
    auto = EngineQueryChoice(IdentifierSettings(), [_record("1.4.0")])
    assert auto.plugin
    with caplog.at_level(logging.WARNING, logger="esqlog"):
        assert auto.fall_back(changes.append) and auto.fall_back(changes.append)
    assert not auto.plugin and [s.engine_query for s in changes] == ["span"]
    assert len(caplog.records) == 1
    forced = EngineQueryChoice(IdentifierSettings(engine_query="plugin"), [_record("")])
    assert forced.plugin and not forced.fall_back(changes.append) and forced.plugin
    assert not EngineQueryChoice(IdentifierSettings(), [_record("")]).plugin


# --- the code/prose rule on texts ---------------------------------------------------------

GO = (
    "func (c *Context) ClientIP() string { remoteAddr := c.Request.RemoteAddr; "
    "return parseForwardedFor(c.requestHeader(xForwardedFor), remoteAddr) }"
)
PROSE = (
    "The mount command serves to attach the filesystem found on some device to the big "
    "file tree. Conversely, the umount command will detach it again."
)


def test_split_counts_reads_identifiers_that_split() -> None:
    split, total = split_counts("parseForwardedFor reads the_header of c")
    assert (split, total) == (2, 5)


def test_with_a_language_field_the_code_documents_decide() -> None:
    assert share_of([GO] * 10, has_language=True).applies
    assert not share_of([PROSE] * 10, has_language=True).applies
    assert not share_of([], has_language=True).applies


def test_without_one_code_looking_documents_must_hold_most_tokens() -> None:
    mixed = share_of([GO] * 8 + [PROSE] * 2, has_language=False)
    assert mixed.applies and mixed.share >= CODE_SHARE
    # a prose corpus with a few code-like pages (a synopsis) reads as prose
    mostly_prose = share_of([GO] * 1 + [PROSE] * 9, has_language=False)
    assert mostly_prose.share >= CODE_SHARE and not mostly_prose.applies
    assert "1 of 10 sampled documents look like code" in mostly_prose.basis
    held = split_counts(GO)[1] / (split_counts(GO)[1] + 9 * split_counts(PROSE)[1])
    assert held < CODE_DOC_FLOOR


def test_plugin_finding_is_a_value() -> None:
    assert PluginFinding("1.4.0", "x") == PluginFinding("1.4.0", "x")
