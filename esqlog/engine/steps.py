"""The steps a plan yields, and the two drivers (sync and async) that run plans.

A *plan* is a generator that yields steps and receives their results: every piece of esqlog
that talks to a cluster is written this way, so one piece of logic serves the sync and the
async clients and can be tested without a cluster. There are three kinds of step:

* :class:`Request`: a REST call esqlog makes itself (statistics, routings, the scroll API);
* :class:`ClientSearch`: the wrapped client's own ``search`` (the caller's search);
* :class:`Pause`: wait, without blocking an event loop, then look again.

:func:`drive` and :func:`adrive` are the only loops that run plans. They hand every
failure of a step to the plan at its ``yield`` (so a plan may translate a status it
understands and clean up in ``finally``), *including* ``KeyboardInterrupt`` and task
cancellation: a plan interrupted mid-scroll still gets to send its clear-scroll request,
instead of being garbage-collected later with "generator ignored GeneratorExit" and leaving
the scroll context open on the cluster.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

T = TypeVar("T")
S = TypeVar("S")


@dataclass(frozen=True)
class Request:
    """A REST call: what both clients can perform without knowing their API signatures."""

    method: str
    path: str
    params: Mapping[str, Any] = field(default_factory=dict)
    body: Any = None


@dataclass(frozen=True)
class ClientSearch:
    """Call the wrapped client's own ``search`` (or ``msearch``) with these arguments."""

    args: tuple[Any, ...]
    kwargs: Mapping[str, Any]
    method: str = "search"


@dataclass(frozen=True)
class Pause:
    """Wait this long (without blocking an event loop) and look again."""

    seconds: float


#: A plan that only makes REST requests (statistics, routings, scans).
Plan = Generator[Request, Any, T]
#: A plan that may also call the client's own search and pause (the wrapper's searches).
Step = Request | ClientSearch | Pause
SearchPlan = Generator[Step, Any, Any]


def drive(plan: Generator[S, Any, T], perform: Callable[[S], Any]) -> T:
    """Run a plan to completion, performing each step with ``perform``.

    Any failure of a step, ``KeyboardInterrupt`` included, is thrown into the plan; if the
    plan's ``finally`` yields cleanup steps they are performed before the failure goes on.
    """
    try:
        step = plan.send(None)
        while True:
            try:
                result = perform(step)
            except BaseException as exc:  # the plan decides; its finally blocks clean up
                step = plan.throw(exc)
            else:
                step = plan.send(result)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
    finally:
        plan.close()


async def adrive(plan: Generator[S, Any, T], perform: Callable[[S], Awaitable[Any]]) -> T:
    """:func:`drive` for async performers: task cancellation is thrown into the plan too,
    and its cleanup steps are awaited before the cancellation propagates."""
    try:
        step = plan.send(None)
        while True:
            try:
                result = await perform(step)
            except BaseException as exc:  # CancelledError included: see drive
                step = plan.throw(exc)
            else:
                step = plan.send(result)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
    finally:
        plan.close()
