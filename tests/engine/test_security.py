"""esqlog against a secured Elasticsearch: TLS with a private CA, basic auth, API keys, bearer
tokens, missing privileges, and secrets that never leak into any output.

The node (scripts/engines/secure-elasticsearch.sh) has x-pack security on, TLS on HTTP with
a CA made by openssl (node certificate for 127.0.0.1 and localhost), a file-realm superuser
and a user with cluster monitor rights only. Every run below is the real ``esqlog`` command
in its own process, so stdout and stderr are exactly what a user would see.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from esqlog.engine.client import Engine
from esqlog.engine.connection import ConnectionSettings, connect
from esqlog.engine.steps import Request
from tests.support.esqlog_runs import one_line_error, run_esqlog, stdlib_lines
from tests.support.private_nodes import (
    ADMIN_PASSWORD,
    ADMIN_USER,
    LIMITED_PASSWORD,
    LIMITED_USER,
    node,
)

INDEX = "secure-code"


@dataclass(frozen=True)
class SecureNode:
    url: str  # https://localhost:PORT (hostname verification needs a name from the SAN)
    ip_url: str  # https://127.0.0.1:PORT (the IP SAN)
    ca: str
    admin: Engine


@pytest.fixture(scope="module")
def secure(request: pytest.FixtureRequest) -> Iterator[SecureNode]:
    private = node("secure", request.session)
    ip_url, ca = private.wait()[-2:]
    url = ip_url.replace("127.0.0.1", "localhost")
    admin = connect(
        ConnectionSettings(url, user=ADMIN_USER, password=ADMIN_PASSWORD, ca_certs=ca, timeout=60),
        flavor="elasticsearch",
    )
    admin.perform(
        Request(
            "PUT",
            f"/{INDEX}",
            body={
                "settings": {"number_of_shards": 2, "number_of_replicas": 0},
                "mappings": {"properties": {"body": {"type": "text"}}},
            },
        )
    )
    lines = []
    for i, text in enumerate(stdlib_lines(400)):
        lines.append(f'{{"index": {{"_index": "{INDEX}", "_id": "{i}"}}}}')
        lines.append('{"body": ' + json.dumps(text) + "}")
    result = admin.perform(Request("POST", "/_bulk", {"refresh": "true"}, "\n".join(lines) + "\n"))
    assert not result["errors"]
    try:
        yield SecureNode(url, ip_url, ca, admin)
    finally:
        admin.client.close()
        private.stop()


def _calibrate(
    secure: SecureNode, *extra: str, url: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return run_esqlog(
        "calibrate",
        "--url",
        url or secure.url,
        "--index",
        INDEX,
        "--field",
        "body",
        *extra,
        env=env,
    )


def _admin_auth(secure: SecureNode) -> list[str]:
    return ["--user", ADMIN_USER, "--password", ADMIN_PASSWORD, "--ca-certs", secure.ca]


def test_tls_with_ca_certs_verifies_and_succeeds(secure: SecureNode) -> None:
    for url in (secure.url, secure.ip_url):  # both names of the certificate's SAN
        result = _calibrate(secure, *_admin_auth(secure), url=url)
        assert result.returncode == 0, result.stderr
        assert "engine       elasticsearch 8." in result.stdout
        assert f"index        {INDEX} (2 shards" in result.stdout
        assert result.stderr == ""


def test_tls_hostname_outside_the_certificate_is_refused(secure: SecureNode) -> None:
    # "127.1" reaches 127.0.0.1 but is not a name in the certificate: with the right CA the
    # chain verifies, so only hostname verification can refuse it.
    url = secure.ip_url.replace("127.0.0.1", "127.1")
    line = one_line_error(_calibrate(secure, *_admin_auth(secure), url=url), 3)
    assert "TLS" in line and "Hostname mismatch" in line


def test_tls_without_ca_certs_is_one_line_error_naming_the_fix(secure: SecureNode) -> None:
    result = _calibrate(secure, "--user", ADMIN_USER, "--password", ADMIN_PASSWORD)
    line = one_line_error(result, 3)
    assert "TLS" in line and "--ca-certs" in line
    assert "CERTIFICATE_VERIFY_FAILED" in line


def test_insecure_works_and_warns(secure: SecureNode) -> None:
    result = _calibrate(secure, "--user", ADMIN_USER, "--password", ADMIN_PASSWORD, "--insecure")
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == [
        "warning: --insecure: TLS certificates and hostnames are NOT verified"
    ]
    assert "h_tok" in result.stdout


def test_wrong_password_is_one_line_401(secure: SecureNode) -> None:
    result = _calibrate(
        secure, "--user", ADMIN_USER, "--password", "not-the-password", "--ca-certs", secure.ca
    )
    line = one_line_error(result, 3)
    assert "rejected the credentials (401)" in line and "not-the-password" not in line


def test_api_key_works(secure: SecureNode) -> None:
    created = secure.admin.perform(
        Request("POST", "/_security/api_key", body={"name": "esqlog-test", "expiration": "1h"})
    )
    result = _calibrate(secure, "--api-key", created["encoded"], "--ca-certs", secure.ca, "--json")
    assert result.returncode == 0, result.stderr
    assert f'"index": "{INDEX}"' in result.stdout
    # An invalidated key is refused: the key, not something else, authenticated the run.
    secure.admin.perform(Request("DELETE", "/_security/api_key", body={"ids": [created["id"]]}))
    refused = _calibrate(secure, "--api-key", created["encoded"], "--ca-certs", secure.ca)
    assert "(401)" in one_line_error(refused, 3)
    for secret in (created["encoded"], created["api_key"]):
        assert secret not in result.stdout + result.stderr


def test_bearer_token_works(secure: SecureNode) -> None:
    token = secure.admin.perform(
        Request(
            "POST",
            "/_security/oauth2/token",
            body={
                "grant_type": "password",
                "username": ADMIN_USER,
                "password": ADMIN_PASSWORD,
            },
        )
    )["access_token"]
    result = run_esqlog(
        "--verbose",
        "calibrate",
        "--url",
        secure.url,
        "--index",
        INDEX,
        "--field",
        "body",
        "--ca-certs",
        secure.ca,
        env={"ESQLOG_BEARER_TOKEN": token},
    )
    assert result.returncode == 0, result.stderr
    assert "esqlog: GET /_nodes/_local -> 200" in result.stderr
    assert token not in result.stdout + result.stderr
    wrong = _calibrate(secure, "--bearer-token", "bm90LWEtdG9rZW4=", "--ca-certs", secure.ca)
    assert "(401)" in one_line_error(wrong, 3)


def test_limited_user_gets_one_line_403(secure: SecureNode) -> None:
    result = run_esqlog(
        "--verbose",
        "calibrate",
        "--url",
        secure.url,
        "--index",
        INDEX,
        "--field",
        "body",
        "--user",
        LIMITED_USER,
        "--password",
        LIMITED_PASSWORD,
        "--ca-certs",
        secure.ca,
    )
    line = one_line_error(result, 3)
    assert "(403: " in line and "grant read access" in line
    everything = result.stdout + result.stderr
    assert LIMITED_PASSWORD not in everything


# --- secrets ----------------------------------------------------------------------------------


def _deliveries(tmp_path: Path) -> dict[str, tuple[list[str], dict[str, str]]]:
    """The sentinel password given three ways: option, environment, file."""
    secret_file = tmp_path / "password.txt"
    secret_file.write_text(ADMIN_PASSWORD + "\n")
    return {
        "option": (["--password", ADMIN_PASSWORD], {}),
        "env": ([], {"ESQLOG_PASSWORD": ADMIN_PASSWORD}),
        "file": (["--password-file", str(secret_file)], {}),
    }


@pytest.mark.parametrize("delivery", ["option", "env", "file"])
def test_password_never_appears_in_any_output(
    secure: SecureNode, tmp_path: Path, delivery: str
) -> None:
    args, env = _deliveries(tmp_path)[delivery]
    out = tmp_path / "calibration.json"
    common = ["--field", "body", *args]
    argv = {
        "success": [
            "--verbose",
            "calibrate",
            "--url",
            secure.url,
            "--index",
            INDEX,
            "--user",
            ADMIN_USER,
            "--ca-certs",
            secure.ca,
            "--out",
            str(out),
        ],
        "401": [
            "--verbose",
            "calibrate",
            "--url",
            secure.url,
            "--index",
            INDEX,
            "--user",
            "nobody",
            "--ca-certs",
            secure.ca,
        ],
        "tls": [
            "--verbose",
            "calibrate",
            "--url",
            secure.url,
            "--index",
            INDEX,
            "--user",
            ADMIN_USER,
        ],
        "unknown-index": [
            "--verbose",
            "calibrate",
            "--url",
            secure.url,
            "--index",
            "no-such-index",
            "--user",
            ADMIN_USER,
            "--ca-certs",
            secure.ca,
        ],
        "debug": [
            "--debug",
            "--verbose",
            "calibrate",
            "--url",
            secure.url,
            "--index",
            INDEX,
            "--user",
            "nobody",
            "--ca-certs",
            secure.ca,
        ],
    }
    with ThreadPoolExecutor(len(argv)) as pool:  # independent runs, in parallel
        futures = {name: pool.submit(run_esqlog, *a, *common, env=env) for name, a in argv.items()}
        runs = {name: future.result() for name, future in futures.items()}
    assert runs["success"].returncode == 0, runs["success"].stderr
    # The verbose log really logs every request (so the grep below covers it) ...
    log = [line for line in runs["success"].stderr.splitlines() if line.startswith("esqlog: ")]
    assert len(log) >= 8 and any("/_mtermvectors -> 200" in line for line in log)
    assert not any("authorization" in line.lower() for line in log)
    assert one_line_error(runs["401"], 3).endswith("--api-key or --bearer-token")
    assert "--ca-certs" in one_line_error(runs["tls"], 3)
    assert "no index or alias named 'no-such-index'" in one_line_error(runs["unknown-index"], 2)
    assert runs["debug"].returncode != 0 and "Traceback" in runs["debug"].stderr
    # ... and the secret is nowhere: not in any stream, not in the calibration file.
    for name, result in runs.items():
        assert ADMIN_PASSWORD not in result.stdout, name
        assert ADMIN_PASSWORD not in result.stderr, name
    assert out.exists() and ADMIN_PASSWORD not in out.read_text()
    assert ADMIN_PASSWORD not in repr(ConnectionSettings(secure.url, ADMIN_USER, ADMIN_PASSWORD))


def test_credentials_in_the_url_authenticate_and_never_show(secure: SecureNode) -> None:
    port = secure.url.rsplit(":", 1)[1]
    good = f"https://{ADMIN_USER}:{ADMIN_PASSWORD}@localhost:{port}"
    result = _calibrate(secure, "--ca-certs", secure.ca, url=good)
    assert result.returncode == 0, result.stderr  # moved to the basic-auth header: it works
    wrong = _calibrate(
        secure, "--ca-certs", secure.ca, url=good.replace(ADMIN_PASSWORD, "Wr0ng-" + ADMIN_PASSWORD)
    )
    line = one_line_error(wrong, 3)
    assert "rejected the credentials (401)" in line and f"https://localhost:{port}" in line
    for run in (result, wrong):
        assert ADMIN_PASSWORD not in run.stdout + run.stderr


def test_a_non_ascii_password_authenticates(secure: SecureNode) -> None:
    """Basic auth is sent as UTF-8 (RFC 7617), which Elasticsearch decodes: no
    UnicodeEncodeError, and the user really is authenticated by that password."""
    user, password = "esqlog-unicode", "pässwörd-Ω-" + LIMITED_PASSWORD  # names are ASCII
    secure.admin.perform(
        Request(
            "PUT", f"/_security/user/{user}", body={"password": password, "roles": ["superuser"]}
        )
    )
    try:
        ok = _calibrate(secure, "--user", user, "--password", password, "--ca-certs", secure.ca)
        assert ok.returncode == 0, ok.stderr
        bad = _calibrate(
            secure, "--user", user, "--password", password[:-1], "--ca-certs", secure.ca
        )
        assert "(401)" in one_line_error(bad, 3)
        for run in (ok, bad):
            assert password[:-1] not in run.stdout + run.stderr
    finally:
        secure.admin.perform(Request("DELETE", f"/_security/user/{user}"))
