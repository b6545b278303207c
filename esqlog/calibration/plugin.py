"""Whether the cluster runs the esqlog-terms engine plugin: found at calibrate time, not configured.

Why: the identifiers mode's groups of terms cost about half as much as the ``esqlog_terms``
query of that plugin than as span queries (docs/identifiers.md), but the plugin is only
usable when every data node that may hold a shard has it: a node without it refuses the
query. So calibrate asks the nodes API (``GET _nodes/plugins``, served alike by
Elasticsearch and OpenSearch) which plugins each data node runs, and records the version
they all run, or "" when one lacks it; IdentifierSettings(engine_query="auto") reads that
record (:func:`engine_query_for`), and the wrapper still falls back to spans if a node
answers that it does not know the query (esqlog.wrapper.engine_query).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from esqlog.calibration.record import Calibration
from esqlog.engine.failures import error_status
from esqlog.engine.steps import Plan, Request
from esqlog.errors import ClusterError

PLUGIN_NAME = "esqlog-terms"
#: the first release whose nodes plan identifiers queries (esqlog.identifiers.node_plan)
NODE_PLAN = (1, 9, 0)
#: the first release whose nodes keep each word's whole group (select "all": WholeWordQuery)
#: and answer every query with it: 1.11.0 failed a query whose groups read outside the cache
#: passed 64 MB, 1.11.1 scores such a word from its terms' postings (the same scores)
WHOLE_WORDS = (1, 11, 1)


@dataclass(frozen=True)
class PluginFinding:
    """What calibrate found: the version every data node runs ("" when one lacks it, None
    when the nodes could not be asked), and why, in words for the report."""

    version: str | None
    why: str


def _data_node(node: Mapping[str, Any]) -> bool:
    """A node that can hold shards: role ``data`` or a data tier (``data_hot`` ...). A node
    that lists no roles (an old or filtered answer) counts, to be safe."""
    roles = node.get("roles")
    if not isinstance(roles, list):
        return True
    return any(isinstance(r, str) and r.startswith("data") for r in roles)


def _versions(node: Mapping[str, Any]) -> set[str]:
    plugins = node.get("plugins")
    return {
        str(p.get("version", ""))
        for p in plugins or ()
        if isinstance(p, Mapping) and p.get("name") == PLUGIN_NAME
    }


def finding_of(nodes: Mapping[str, Any]) -> PluginFinding:
    """The finding from a ``_nodes/plugins`` answer's ``nodes`` object."""
    data = [n for n in nodes.values() if isinstance(n, Mapping) and _data_node(n)]
    if not data:
        return PluginFinding(None, "the nodes API listed no data node")
    lacking = [str(n.get("name", "?")) for n in data if not _versions(n)]
    if lacking:
        shown = ", ".join(sorted(lacking)[:3]) + (" ..." if len(lacking) > 3 else "")
        return PluginFinding(
            "", f"{len(lacking)} of {len(data)} data nodes lack {PLUGIN_NAME} ({shown})"
        )
    found = set().union(*(_versions(n) for n in data))
    if len(found) > 1:  # a rolling upgrade: the query is the same, name the oldest
        version = min(found, key=_version_key)
        return PluginFinding(
            version,
            f"every data node runs {PLUGIN_NAME} (versions "
            f"{', '.join(sorted(found, key=_version_key))})",
        )
    version = found.pop()
    return PluginFinding(version, f"every data node ({len(data)}) runs {PLUGIN_NAME} {version}")


def _version_key(version: str) -> tuple[int, ...]:
    parts = []
    for piece in version.split("-")[0].split("."):
        parts.append(int(piece) if piece.isdigit() else 0)
    return tuple(parts)


def terms_plugin_plan() -> Plan[PluginFinding]:
    """Ask every node's plugins and roles; a refused request (a user without the
    cluster:monitor privilege) is "not checked", never an error: calibrate goes on."""
    try:
        body = yield Request(
            "GET", "/_nodes/plugins", {"filter_path": "nodes.*.name,nodes.*.roles,nodes.*.plugins"}
        )
    except Exception as exc:  # the client's own error type, or a ClusterError
        status = error_status(exc)
        if status is None and not isinstance(exc, ClusterError):
            raise  # not an answer (the cluster is unreachable): calibrate fails as it would
        return PluginFinding(None, f"the nodes API was refused ({status or exc})")
    nodes = body.get("nodes") if isinstance(body, Mapping) else None
    if not isinstance(nodes, Mapping):
        return PluginFinding(None, "the nodes API gave no node list")
    return finding_of(nodes)


def engine_query_for(calibrations: Iterable[Calibration]) -> tuple[str, str]:
    """("plugin" | "span", why) for engine_query="auto": the plugin when every calibration
    of the wrapper found it on every data node (one wrapper talks to one cluster)."""
    found = [c.terms_plugin for c in calibrations]
    if not found:
        return "span", "no calibration"
    if any(v is None for v in found):
        return "span", (
            f"the calibration did not check for {PLUGIN_NAME} (calibrate again to find it)"
        )
    if any(v == "" for v in found):
        return "span", f"a data node lacks {PLUGIN_NAME} (calibrate found it missing)"
    oldest = min((v for v in found if v), key=_version_key)
    return "plugin", f"every data node runs {PLUGIN_NAME} {oldest}"


def plans_on_node(version: str | None) -> bool:
    """Whether every data node's plugin (calibrate's finding) plans identifiers queries."""
    return bool(version) and _version_key(version or "") >= NODE_PLAN


def whole_words_for(calibrations: Iterable[Calibration]) -> bool:
    """Whether select "auto" means "all" for a wrapper of these calibrations: each one's
    nodes plan its queries (:func:`node_plan_for`) with a release that keeps whole words."""
    found = list(calibrations)
    return bool(found) and all(
        node_plan_for(c) and _version_key(c.terms_plugin or "") >= WHOLE_WORDS for c in found
    )


def node_plan_for(calibration: Calibration) -> bool:
    """Whether the nodes can plan this field's identifiers queries: calibrate wrote its word
    lists and found a plugin that reads them on every data node (esqlog.identifiers.node_plan)."""
    return bool(calibration.word_lists) and plans_on_node(calibration.terms_plugin)


def search_path_line(calibration: Calibration) -> str:
    """The report's line: which query the identifiers mode's groups will be sent as."""
    chosen, why = engine_query_for([calibration])
    what = f"plugin {PLUGIN_NAME} {calibration.terms_plugin}" if chosen == "plugin" else "spans"
    if chosen == "plugin" and node_plan_for(calibration):
        what += f", planned on the node from {calibration.word_lists}"
        if whole_words_for([calibration]):
            what += ", each word's whole group kept on the nodes (select all)"
    return f"identifiers groups as {what}: {why}"
