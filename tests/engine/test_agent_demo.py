"""scripts/agent_demo.py, the main job's last step, as a user runs it: one search_code answer
through the MCP SDK's client, within the default budget, the answering file in the first three."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from esqlog.agent.code_search import DEFAULT_BUDGET
from esqlog.engine.client import Engine
from tests.support.engines import ENGINE_URLS, call

ROOT = Path(__file__).resolve().parents[2]


def test_the_agent_demo_answers_within_budget(opensearch: Engine) -> None:
    result = None
    try:
        result = subprocess.run(
            [
                sys.executable,
                str(ROOT / "scripts" / "agent_demo.py"),
                "--url",
                ENGINE_URLS["opensearch"],
            ],
            text=True,
            capture_output=True,
            timeout=600,
            check=False,
        )
        assert result.returncode == 0, result.stderr
        listing = [line for line in result.stdout.splitlines() if re.match(r"\d+\. ", line)]
        assert any(" engine/paths.py:" in line for line in listing[:3]), result.stdout
        tokens = int(
            re.search(r"That answer is ([\d,]+) tokens", result.stdout).group(1).replace(",", "")
        )  # type: ignore[union-attr]
        assert 0 < tokens <= DEFAULT_BUDGET <= 2000  # a default answer's promise
        assert "no structured copy" in result.stdout
    finally:
        index = result and re.search(r"\(index (esqlog-demo-code-[0-9a-f]{8}) holds", result.stdout)
        if index:
            call(opensearch, "DELETE", f"/{index.group(1)}")
