"""One search call, whatever the client: :class:`SearchCall`.

elasticsearch-py takes keyword arguments only (``query=...``, ``from_=...``); opensearch-py
takes ``body`` (positionally too) and URL parameters in ``params``. Everything above this
module reads and sets search options by their REST names and gets back the arguments in the
shape the caller's own client accepts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from esqlog.engine.steps import ClientSearch

_URL_PARAMETERS = frozenset({"search_type", "include_named_queries_score"})
#: REST name -> the other keywords a client takes it by: elasticsearch-py accepts
#: ``from`` itself as an alias of ``from_`` (``**{"from": 10}``), so both are read
_ALIASES = {"from": ("from_", "from")}


class SearchCall:
    """A search call normalised across the two clients' signatures, rebuilt on the way out."""

    def __init__(self, flavor: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        self.flavor = flavor
        self._given = (args, kwargs)
        self.kwargs = dict(kwargs)
        if flavor == "opensearch" and args:
            names = ["body", "index", "params", "headers"]
            for name, value in zip(names, args, strict=False):
                self.kwargs[name] = value
        elif args:
            raise TypeError("search() takes keyword arguments only")
        # A shallow copy is enough: esqlog only ever replaces top-level keys of the body
        # (query, rescore, size, ...) and builds new clauses, never edits the caller's.
        self.body: dict[str, Any] | None = (
            dict(self.kwargs["body"]) if isinstance(self.kwargs.get("body"), Mapping) else None
        )

    @property
    def index(self) -> Any:
        """The index expression; a one-index list or tuple (what elasticsearch.dsl and
        opensearch-py's Search send for ``index="code"``) is that name, as the engine
        reads it. The call itself still carries the caller's value."""
        index = self.kwargs.get("index")
        if isinstance(index, list | tuple) and len(index) == 1 and isinstance(index[0], str):
            return index[0]
        return index

    def get(self, key: str) -> Any:
        """A search option wherever it was given: body, keyword or opensearch params."""
        if self.body is not None and key in self.body:
            return self.body[key]
        for alias in _ALIASES.get(key, (key,)):
            if alias in self.kwargs:
                return self.kwargs[alias]
        params = self.kwargs.get("params") or {}
        return params.get(key)

    def set(self, key: str, value: Any) -> None:
        """Set a search option where this client takes it, dropping any other copy."""
        alias = "from_" if key == "from" else key
        params = self.kwargs.get("params")
        if isinstance(params, Mapping) and key in params:
            self.kwargs["params"] = {k: v for k, v in params.items() if k != key}
        if key in _URL_PARAMETERS:  # URL parameters for both clients
            self.kwargs[alias] = value
        elif self.body is not None:
            for other in _ALIASES.get(key, (key,)):
                self.kwargs.pop(other, None)
            self.body[key] = value
        else:
            for other in _ALIASES.get(key, (key,)):
                self.kwargs.pop(other, None)
            self.kwargs[alias] = value

    @property
    def query(self) -> Any:
        return self.get("query")

    def final_kwargs(self) -> dict[str, Any]:
        out = dict(self.kwargs)
        if self.body is not None:
            out["body"] = self.body
        return out

    def search(self) -> ClientSearch:
        """The client search with this call's options as set now (keywords only)."""
        return ClientSearch((), self.final_kwargs())

    def untouched(self) -> ClientSearch:
        """The caller's search as given. opensearch-py >= 3 takes keywords only, so
        positional arguments are passed on by name, as on every other path."""
        args, kwargs = self._given
        return self.search() if args else ClientSearch(args, kwargs)
