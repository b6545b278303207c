"""The esqlog-terms plugin's own Java tests (plugins/esqlog-terms/lucene/test), in the suite.

They check the plugin's Lucene code with Lucene's test framework (QueryUtils, CheckHits,
random indices) and the node's plan against the client's (WordPlanTest, over the cases
tests/unit/test_word_plan_cases.py writes), on each Lucene major the plugin is built for:
9.12 (OpenSearch 2.x, Elasticsearch 8.x) and 10.x (OpenSearch 3.x, Elasticsearch 9.x).
scripts/engines/test-plugin-java.sh compiles and runs them (a JDK 21 or newer, and the test
framework's jars from Maven Central, fetched once).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
SCRIPT = ROOT / "scripts/engines/test-plugin-java.sh"


def _jdk() -> bool:
    return (
        any((Path(d) / "bin/javac").exists() for d in Path("/usr/lib/jvm").glob("*") if d.is_dir())
        if Path("/usr/lib/jvm").is_dir()
        else False
    )


@pytest.mark.parametrize("lucene", ["9.12.2", "10.4.0"])
def test_the_plugins_java_tests_pass(lucene: str) -> None:
    if not _jdk() and os.environ.get("CI") != "true":
        pytest.skip("no JDK under /usr/lib/jvm")
    done = subprocess.run(
        [str(SCRIPT), lucene], cwd=ROOT, capture_output=True, text=True, timeout=900
    )
    tail = (done.stdout + done.stderr)[-3000:]
    assert done.returncode == 0, tail
    assert "OK (" in done.stdout, tail
