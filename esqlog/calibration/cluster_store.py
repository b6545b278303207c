"""What esqlog keeps in the cluster: its stored script and its own calibration index.

Never the user's index. Kept apart from esqlog.calibration.calibrate (which reads statistics)
because
these are the only plans that write, and each checks what the cluster supports first.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from esqlog.calibration.record import Calibration
from esqlog.engine.paths import api_path, index_path
from esqlog.engine.state_index import ensure_state_index_plan
from esqlog.engine.steps import Plan, Request
from esqlog.errors import UsageError
from esqlog.scoring.painless import painless_source

CALIBRATION_INDEX = "esqlog-calibrations"
TERM_SCRIPT_ID = "esqlog-qlog-term"


def scripting_gap_plan() -> Plan[str | None]:
    """None when the cluster can run a stored Painless script, else what it lacks.

    Asked (``GET _script_language``, served by both engines) before suggesting or
    installing the script: distributions without the Painless module (Elasticsearch's
    integ-test build, say) or with stored scripts disallowed cannot run script mode at all.
    """
    body = yield Request("GET", "/_script_language")
    contexts = body.get("language_contexts") or [] if isinstance(body, Mapping) else []
    languages = {str(c.get("language")) for c in contexts if isinstance(c, Mapping)}
    allowed = body.get("types_allowed") if isinstance(body, Mapping) else None
    if "painless" not in languages:
        return "this cluster has no Painless scripting language"
    if isinstance(allowed, list) and "stored" not in allowed:
        return "this cluster does not allow stored scripts (script.allowed_types)"
    return None


def script_mode_problem_plan() -> Plan[UsageError | None]:
    """None when script mode can run on this cluster, else the error naming the right fix.

    The fix depends on what is missing: without Painless only boost mode can help (so
    --install-script is not suggested where it would fail); with Painless and no stored
    script, installing it is the fix.
    """
    gap = yield from scripting_gap_plan()
    if gap is not None:
        return UsageError(
            f"script mode cannot run on this cluster: {gap}",
            "use --mode boost (the same ranking, no scripts needed)",
        )
    try:
        yield Request("GET", api_path("_scripts", TERM_SCRIPT_ID))
    except Exception as exc:
        from esqlog.engine.failures import error_status

        if error_status(exc) != 404:
            raise
        return UsageError(
            f"script mode needs the stored script {TERM_SCRIPT_ID}, which is not installed",
            "run esqlog calibrate --install-script once, or use --mode boost (the same ranking)",
        )
    return None


def install_script_plan(script_id: str = TERM_SCRIPT_ID) -> Plan[None]:
    """Store the per-term rescaling script under a fixed id (constant source, params only).

    Refused with one line, before anything is written, when the cluster cannot run it.
    """
    gap = yield from scripting_gap_plan()
    if gap is not None:
        raise UsageError(
            f"cannot install the stored script: {gap}",
            "search with --mode boost (the same ranking, no scripts needed)",
        )
    yield Request(
        "PUT",
        api_path("_scripts", script_id),
        body={"script": {"lang": "painless", "source": painless_source(script_id)}},
    )


#: esqlog-calibrations as esqlog creates it: records are read back from _source only
_CALIBRATIONS_BODY = {
    "settings": {"number_of_shards": 1, "auto_expand_replicas": "0-1"},
    "mappings": {"dynamic": False},
}
#: fields every calibration record holds: an unmarked index mapping them all is one an
#: earlier esqlog made by writing records into it
_RECORD_FIELDS = ("esqlog_version", "index_uuid", "h_tok", "predictor")


def store_in_cluster_plan(calibration: Calibration, index: str = CALIBRATION_INDEX) -> Plan[str]:
    """Keep the record in esqlog's own index, one document per index+field; an index of
    that name esqlog did not make (or an alias of it) is refused before any write."""
    yield from ensure_state_index_plan(
        index, "calibrations", "calibrate", _CALIBRATIONS_BODY, legacy=_legacy_calibrations
    )
    doc_id = f"{calibration.index}:{calibration.field}"
    yield Request(
        "PUT", index_path(index, "_doc", doc_id), {"refresh": "true"}, calibration.to_json()
    )
    return doc_id


def _legacy_calibrations(mappings: Mapping[str, Any]) -> bool:
    properties = mappings.get("properties") or {}
    return all(name in properties for name in _RECORD_FIELDS)


def load_from_cluster_plan(index: str, field_name: str) -> Plan[Calibration]:
    """Read a calibration kept with --store-in-cluster."""
    doc_id = f"{index}:{field_name}"
    try:
        body = yield Request("GET", index_path(CALIBRATION_INDEX, "_doc", doc_id))
    except Exception as exc:
        from esqlog.engine.failures import error_status

        if error_status(exc) == 404:
            raise UsageError(
                f"no calibration stored in the cluster for {index}/{field_name}",
                "run esqlog calibrate --store-in-cluster",
            ) from None
        raise
    return Calibration.from_json(body.get("_source", {}), f"stored calibration {doc_id}")
