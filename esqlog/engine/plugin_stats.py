"""The esqlog-terms plugin's caches on every node, read from ``GET /_esqlog/terms/stats``.

Why: the caches the plugin keeps (the term states of the groups' terms, the word lists the
nodes plan from, and from 1.11.0 the whole-word groups of ``select: "all"``) are per node and
bounded; a node whose cache is too small for its traffic
evicts and misses while the others hit, and only that node's searches pay for it. From
esqlog-terms 1.10.0 one request answers for every node (the plugin's nodes action); before,
the endpoint answered for the node that received it, which is what :func:`stats_of` reports
for such a cluster (``per_node`` False).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from esqlog.engine.failures import error_status
from esqlog.engine.steps import Plan, Request
from esqlog.errors import ClusterError

PATH = "/_esqlog/terms/stats"
SECTIONS = ("term_state_cache", "word_lists", "word_postings")


@dataclass(frozen=True)
class NodeCaches:
    """One node's counters, by section (``term_state_cache``, ``word_lists``,
    ``word_postings``: those its plugin release reports) and name."""

    node_id: str
    name: str
    sections: Mapping[str, Mapping[str, int]]

    def counter(self, section: str, name: str) -> int:
        return int(self.sections.get(section, {}).get(name, 0))


@dataclass(frozen=True)
class ClusterCaches:
    """The answer: the nodes that answered, those that failed (id, reason), and whether the
    plugin answers per node (1.10.0 and later) or for the receiving node only."""

    nodes: tuple[NodeCaches, ...]
    failures: tuple[tuple[str, str], ...]
    per_node: bool


def _counters(value: Any, where: str) -> dict[str, int]:
    if not isinstance(value, Mapping):
        raise ValueError(f"{where} is not an object")
    out = {}
    for key, count in value.items():
        if not isinstance(count, int) or isinstance(count, bool):
            raise ValueError(f"{where}.{key} is not a whole number")
        out[str(key)] = count
    return out


def stats_of(body: Any) -> ClusterCaches:
    """The caches an answer of the endpoint reports; ValueError naming what is malformed."""
    if not isinstance(body, Mapping):
        raise ValueError("the answer is not an object")
    nodes = body.get("nodes")
    if nodes is None:  # a plugin before 1.10.0: the receiving node's caches alone
        sections = {s: _counters(body[s], s) for s in SECTIONS if s in body}
        return ClusterCaches((NodeCaches("", "the receiving node", sections),), (), False)
    if not isinstance(nodes, Mapping):
        raise ValueError("nodes is not an object")
    found = []
    for node_id, node in nodes.items():
        if not isinstance(node, Mapping):
            raise ValueError(f"nodes.{node_id} is not an object")
        sections = {s: _counters(node[s], f"nodes.{node_id}.{s}") for s in SECTIONS if s in node}
        found.append(NodeCaches(str(node_id), str(node.get("name", node_id)), sections))
    found.sort(key=lambda n: (n.name, n.node_id))
    header = body.get("_nodes")
    if not isinstance(header, Mapping):
        header = {}
    failures = tuple(
        (str(f.get("node_id", "?")), str(f.get("reason", "?")))
        for f in header.get("failures", ()) or ()
        if isinstance(f, Mapping)
    )
    return ClusterCaches(tuple(found), failures, True)


def cache_stats_plan() -> Plan[ClusterCaches]:
    """Read every node's caches; a cluster without the plugin is one clear error."""
    try:
        body = yield Request("GET", PATH)
    except Exception as exc:  # the client's own error type, or a ClusterError
        status = error_status(exc)
        if status in (400, 404, 405):
            raise ClusterError(
                f"the cluster does not serve GET {PATH} (HTTP {status})",
                "install the esqlog-terms plugin on every node (esqlog plugin build; "
                "docs/plugin.md)",
            ) from None
        raise
    try:
        return stats_of(body)
    except ValueError as exc:
        raise ClusterError(
            f"GET {PATH} gave an answer esqlog cannot read: {exc}",
            "check that every node runs an esqlog-terms release esqlog knows (docs/plugin.md)",
        ) from None
