"""Extra engine nodes that only the reliability and security tests use.

Each runs on its own port with its own state folder (ESQLOG_ENGINE_DIR), so stopping,
restarting or overloading it never disturbs the shared nodes on 19200/19201. A node takes
30-60 s to start on a small machine, so every node that the collected tests need is launched
in the background as soon as the first of them is asked for; each test module then waits for
its own node and stops it at its end (an atexit hook stops any left over).
"""

from __future__ import annotations

import atexit
import os
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENGINE_SH = ROOT / "scripts" / "engines" / "engine.sh"
SECURE_SH = ROOT / "scripts" / "engines" / "secure-elasticsearch.sh"
#: Beside the session's shared nodes (ESQLOG_ENGINE_DIR): two test sessions on one machine,
#: each with its own ports, must not share (and stop) each other's private nodes.
STATE_ROOT = (
    Path(os.environ.get("ESQLOG_ENGINE_DIR") or Path(tempfile.gettempdir()) / "esqlog-engines")
    / "private-nodes"
)

#: The sentinel secrets of the security tests: they must never show up in any output.
ADMIN_USER = "esqlog-admin"
ADMIN_PASSWORD = "S3ntinel-pw-XYZ"
LIMITED_USER = "esqlog-limited"
LIMITED_PASSWORD = "L1mited-pw-QRS"


@dataclass
class PrivateNode:
    """A node started by a repo script, in the background, at most once per session."""

    name: str
    module: str  # the test module that uses it
    start_cmd: list[str]
    stop_cmd: list[str]
    env: dict[str, str]
    process: subprocess.Popen[str] | None = None
    lines: list[str] = field(default_factory=list)
    error: str | None = None
    log: Path | None = None

    def launch(self) -> None:
        if self.process is not None:
            return
        STATE_ROOT.mkdir(parents=True, exist_ok=True)
        os.chmod(STATE_ROOT, 0o755)
        self.log = STATE_ROOT / f"{self.name}.start.log"
        with open(self.log, "w") as err:
            self.process = subprocess.Popen(
                self.start_cmd,
                stdout=subprocess.PIPE,
                stderr=err,
                text=True,
                env={**os.environ, **self.env},
            )

    def wait(self, timeout: float = 300) -> list[str]:
        """The start script's stdout lines (URL first), or fail/skip if it did not start."""
        self.launch()
        assert self.process is not None
        if not self.lines and self.error is None:
            try:
                out, _ = self.process.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                out = ""
            if self.process.returncode == 0:
                self.lines = [line for line in out.splitlines() if line.strip()]
            else:
                tail = self.log.read_text()[-2000:] if self.log else ""
                self.error = f"{self.name} did not start (rc {self.process.returncode}): {tail}"
        if self.error is not None:
            if os.environ.get("CI") == "true":
                pytest.fail(self.error)
            pytest.skip(self.error)
        return self.lines

    def run(
        self, *cmd: str, env_extra: dict[str, str] | None = None, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        """An engine.sh action (start/stop) with this node's environment."""
        return subprocess.run(
            list(cmd),
            env={**os.environ, **self.env, **(env_extra or {})},
            text=True,
            capture_output=True,
            check=check,
            timeout=300,
        )

    def stop(self) -> None:
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.kill()
        subprocess.run(
            self.stop_cmd,
            env={**os.environ, **self.env},
            capture_output=True,
            timeout=120,
            check=False,
        )
        self.process = None


FAULTS_PORT = int(os.environ.get("ESQLOG_FAULTS_PORT", "19212"))
SECURE_PORT = int(os.environ.get("ESQLOG_SECURE_PORT", "19211"))

# Elasticsearch for the faults node: it starts (and restarts) faster than OpenSearch here.
_faults_env = {
    "ESQLOG_ENGINE_DIR": str(STATE_ROOT / "faults"),
    "ESQLOG_ELASTICSEARCH_PORT": str(FAULTS_PORT),
    "ESQLOG_ENGINE_HEAP": "512m",
}
NODES: dict[str, PrivateNode] = {
    "faults": PrivateNode(
        "faults",
        "test_faults",
        [str(ENGINE_SH), "start", "elasticsearch"],
        [str(ENGINE_SH), "stop", "elasticsearch"],
        _faults_env,
    ),
    "secure": PrivateNode(
        "secure",
        "test_security",
        [str(SECURE_SH), "start"],
        [str(SECURE_SH), "stop"],
        {
            "ESQLOG_SECURE_DIR": str(STATE_ROOT / "secure"),
            "ESQLOG_SECURE_PORT": str(SECURE_PORT),
            "ESQLOG_SECURE_ADMIN_PASSWORD": ADMIN_PASSWORD,
            "ESQLOG_SECURE_LIMITED_PASSWORD": LIMITED_PASSWORD,
        },
    ),
}


def node(name: str, session: pytest.Session) -> PrivateNode:
    """Launch every private node the session's tests need, then return ``name``'s."""
    wanted = {
        item.module.__name__.rsplit(".", 1)[-1]
        for item in session.items
        if getattr(item, "module", None) is not None
    }
    for candidate in NODES.values():
        if candidate.module in wanted or candidate.name == name:
            candidate.launch()
    return NODES[name]


@atexit.register
def _stop_all() -> None:
    for candidate in NODES.values():
        candidate.stop()
