"""The identifiers query bodies of 200 real query texts are those recorded from an earlier
build (tests/support/recorded_bodies.py: the bundled Go sample's statistics built without an
engine, six settings the wrapper sends): the query builder's speed work changes no body.

A failure names the setting and the first query texts whose body changed."""

from __future__ import annotations

import json

import pytest

from tests.support.recorded_bodies import RECORDED, VARIANTS, digests, sample


@pytest.fixture(scope="module")
def built() -> dict[str, list[str]]:
    return digests()


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_every_body_is_the_recorded_one(built: dict[str, list[str]], variant: str) -> None:
    recorded = json.loads(RECORDED.read_text(encoding="utf-8"))[variant]
    texts = sample()[1]
    changed = [
        texts[k] for k, (a, b) in enumerate(zip(built[variant], recorded, strict=True)) if a != b
    ]
    assert len(built[variant]) == len(recorded) == 200
    assert not changed, f"{len(changed)} bodies changed, e.g. {changed[:3]}"
