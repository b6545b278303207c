"""``esqlog query``'s parts that need no engine: the query text's size limit, and the table's
movement column and hit labels. tests/engine/test_cli_query.py runs the command.
"""

from __future__ import annotations

from typing import Any

import pytest

from esqlog.cli.hits import Hit, hit_label
from esqlog.cli.search_cmd import format_compare, movement
from esqlog.errors import UsageError
from esqlog.scoring.query_text import check_query_text


def test_query_up_to_100kb_is_accepted() -> None:
    text = ("word " * 20_480)[:102_400]
    assert check_query_text(text) == text
    with pytest.raises(UsageError, match="102,401 bytes"):
        check_query_text(text + "x")


def test_movement_and_labels() -> None:
    ranks = {"a": 1, "b": 2, "c": 3}
    assert movement(Hit(1, "b", 1.0, ""), ranks) == "up 1"
    assert movement(Hit(3, "a", 1.0, ""), ranks) == "down 2"
    assert movement(Hit(3, "c", 1.0, ""), ranks) == ""
    assert movement(Hit(2, "z", 1.0, ""), ranks) == "new"
    source: dict[str, Any] = {"meta": {"body": ["x" * 50, "y" * 50]}}
    assert (
        hit_label(source, "meta.body").endswith("...") and len(hit_label(source, "meta.body")) == 80
    )
    assert hit_label({"name": "ReadFile", "body": "z"}, "body") == "ReadFile"
    table = format_compare([Hit(1, "a", 2.0, ""), Hit(2, "b", 1.0, "")], [Hit(1, "b", 3.0, "")])
    assert table.splitlines()[1].endswith("up 1") and "|" in table.splitlines()[2]
