"""docs/evaluation.md, "Measure on your own data", has its three command blocks, in order.

tests/engine/test_readme_measure.py runs whatever blocks the page holds; this checks without
an engine that they are the three paths the page promises (eval, bench-beir, compare).
"""

from __future__ import annotations

from tests.support.measure_page import measure_blocks


def test_the_section_has_the_three_paths() -> None:
    blocks = measure_blocks()
    assert len(blocks) == 3
    assert "esqlog eval" in blocks[0] and "--qrels" in blocks[0]
    assert blocks[1].startswith("esqlog bench-beir")
    assert blocks[2].startswith("esqlog compare")
