"""Credential redaction in every message, and the file modes atomic writes give.

Both are rules users rely on without seeing them: a URL's userinfo never reaches a
terminal or a log whatever the scheme's case, and an output file has the mode ``cp``
would give it (a new one 0666 minus the umask, an existing one its own mode).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from esqlog.atomic import atomic_write
from esqlog.errors import ClusterError, UsageError, redact

SECRET = "s3cr3t-Pw"


@pytest.mark.parametrize("scheme", ["http", "HTTP", "Https", "hTTpS", "ES+HTTP"])
def test_the_userinfo_is_hidden_whatever_the_schemes_case(scheme: str) -> None:
    text = f"cannot reach {scheme}://elastic:{SECRET}@host:9200/_search (refused)"
    assert redact(text) == f"cannot reach {scheme}://***@host:9200/_search (refused)"
    for error in (UsageError(text, f"check {scheme}://me:{SECRET}@x"), ClusterError(text)):
        assert SECRET not in str(error) and "elastic" not in str(error)


@given(
    scheme=st.text("hHtTpPsS", min_size=4, max_size=5),
    user=st.text("abcXYZ09", min_size=1, max_size=8),
    password=st.text("abcXYZ09!$%", min_size=1, max_size=12),
)
def test_no_userinfo_survives_redaction(scheme: str, user: str, password: str) -> None:
    text = f"GET {scheme}://{user}:{password}@node/x failed"
    assert redact(text) == f"GET {scheme}://***@node/x failed"


@pytest.fixture
def umask() -> Iterator[None]:
    """Restore the process umask whatever a test sets."""
    old = os.umask(0o022)
    os.umask(old)
    yield
    os.umask(old)


@pytest.mark.parametrize(
    ("mask", "mode"),
    [(0o022, 0o644), (0o077, 0o600), (0o027, 0o640), (0o002, 0o664), (0o000, 0o666)],
)
def test_a_new_file_gets_0666_minus_the_umask(
    tmp_path: Path, umask: None, mask: int, mode: int
) -> None:
    """As open() would create it, not mkstemp's 0600: another user's application may read
    a calibration, and a umask of 077 must still keep it private."""
    os.umask(mask)
    written = atomic_write(tmp_path / "new.json", b"{}")
    assert stat.S_IMODE(written.stat().st_mode) == mode
    assert written.read_bytes() == b"{}"


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o644, 0o664, 0o444, 0o755])
def test_an_existing_file_keeps_its_mode_whatever_the_umask(
    tmp_path: Path, umask: None, mode: int
) -> None:
    target = tmp_path / "cal.json"
    target.write_bytes(b"old")
    target.chmod(mode)
    os.umask(0o077 if mode & 0o044 else 0o000)  # a umask that would give another mode
    atomic_write(target, b"new")
    assert stat.S_IMODE(target.stat().st_mode) == mode
    assert target.read_bytes() == b"new"


def test_a_symlinks_target_keeps_its_mode_and_the_link_stays(tmp_path: Path, umask: None) -> None:
    real = tmp_path / "real.json"
    real.write_bytes(b"old")
    real.chmod(0o640)
    link = tmp_path / "link.json"
    link.symlink_to(real)
    os.umask(0o077)
    assert atomic_write(link, b"new") == link
    assert link.is_symlink() and real.read_bytes() == b"new"
    assert stat.S_IMODE(real.stat().st_mode) == 0o640


@given(password=st.text("abcXYZ09@:!", min_size=1, max_size=12))
def test_a_password_holding_at_signs_is_hidden_whole(password: str) -> None:
    """Clients split the userinfo at the authority's last ``@``: so must redaction, or the
    part of the password after its first ``@`` would be shown."""
    text = f"cannot reach https://elastic:{password}@host:9200/_search"
    assert redact(text) == "cannot reach https://***@host:9200/_search"
