"""Adversarial runs, part two (issue 12, items 6 and 13): secrets that leaked into messages,
and messages that were one line but wrong.

Every run is the real ``esqlog`` in its own process, so stdout and stderr are exactly what a
user (or a CI log) would see; every secret below is a sentinel searched for in both streams.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from esqlog.engine.client import Engine
from tests.support.adversarial import PASSWORD
from tests.support.engines import ENGINE_URLS, bulk_index, call, create_index
from tests.support.esqlog_runs import calibrate_run as _calibrate
from tests.support.esqlog_runs import no_secret as _no_secret
from tests.support.esqlog_runs import one_line_error, run_esqlog, stdlib_lines

KEY = "S3cretKeySENTINEL0042"


@pytest.fixture(scope="module")
def corpus(engine: Engine) -> Iterator[tuple[Engine, str]]:
    name = create_index(
        engine,
        shards=2,
        mappings={
            "properties": {
                "body": {"type": "text", "fields": {"code": {"type": "text"}}},
                "notes": {"type": "nested", "properties": {"text": {"type": "text"}}},
            }
        },
    )
    lines = stdlib_lines(300)
    bulk_index(
        engine, name, [{"id": i, "body": t, "notes": [{"text": t}]} for i, t in enumerate(lines)]
    )
    yield engine, name
    call(engine, "DELETE", f"/{name}")


# --- item 6: credentials never appear ---------------------------------------------------------


@pytest.mark.engine
def test_url_credentials_on_a_real_engine_are_used_and_never_shown(
    corpus: tuple[Engine, str], tmp_path: Path
) -> None:
    engine, index = corpus
    url = ENGINE_URLS[engine.flavor]
    with_creds = url.replace("http://", f"http://esqlog:{PASSWORD}@")
    out = tmp_path / "cal.json"
    ok = _calibrate(with_creds, index, "--out", str(out))
    assert ok.returncode == 0, ok.stderr
    _no_secret(ok, PASSWORD)
    assert PASSWORD not in out.read_text() and "@" not in out.read_text()
    # TLS to a plain-HTTP port: the handshake error names the URL, without the secret
    tls = _calibrate(with_creds.replace("http://", "https://"), index)
    assert "TLS handshake with the cluster at https://127.0.0.1" in one_line_error(tls, 3)
    _no_secret(tls, PASSWORD)


@pytest.mark.engine
def test_crlf_api_key_and_token_are_stripped_and_never_echoed(
    corpus: tuple[Engine, str], tmp_path: Path
) -> None:
    engine, index = corpus
    url = ENGINE_URLS[engine.flavor]
    key_file = tmp_path / "key.txt"
    key_file.write_bytes(KEY.encode() + b"\r\n")  # a key file saved on Windows
    crlf_key = key_file.read_bytes().decode().rstrip("\n")  # what $(cat key.txt) gives
    assert crlf_key.endswith("\r")
    for option, env in (("--api-key", "ESQLOG_API_KEY"), ("--bearer-token", "ESQLOG_BEARER_TOKEN")):
        # These nodes run without security (the header is ignored): the run succeeds,
        # which shows the key was accepted as a header value once stripped.
        by_option = _calibrate(url, index, option, crlf_key)
        by_env = _calibrate(url, index, env={env: crlf_key})
        for result in (by_option, by_env):
            assert result.returncode == 0, result.stderr
            _no_secret(result, KEY)
        # A control character inside the value cannot be stripped: refused, not echoed.
        inner = _calibrate(url, index, option, KEY[:5] + "\x01" + KEY[5:])
        assert f"{option} cannot be sent in an HTTP header" in one_line_error(inner, 2)
        _no_secret(inner, KEY[:5], KEY[5:])


@pytest.mark.engine
def test_non_ascii_credentials_are_one_line_or_work(corpus: tuple[Engine, str]) -> None:
    engine, index = corpus
    url = ENGINE_URLS[engine.flavor]
    secret = "pässwörd-Ω-" + PASSWORD
    basic = _calibrate(url, index, "--user", "usér", "--password", secret)
    assert basic.returncode == 0, basic.stderr  # sent as UTF-8 basic auth (RFC 7617)
    _no_secret(basic, secret, PASSWORD)
    in_url = _calibrate(url.replace("http://", f"http://us%C3%A9r:{PASSWORD}%CE%A9@"), index)
    assert in_url.returncode == 0, in_url.stderr
    _no_secret(in_url, PASSWORD)
    key = _calibrate(url, index, "--api-key", "ключ-" + KEY)
    assert "--api-key cannot be sent in an HTTP header" in one_line_error(key, 2)
    assert "UnicodeEncodeError" not in key.stderr
    _no_secret(key, KEY)


# --- item 13: messages that misled -----------------------------------------------------------


@pytest.mark.engine
def test_subfields_and_nested_fields_are_named_as_such(corpus: tuple[Engine, str]) -> None:
    engine, index = corpus
    sub = one_line_error(_calibrate(ENGINE_URLS[engine.flavor], index, "--field", "body.code"), 2)
    assert "field 'body.code' is a multi-field (subfield) of 'body'" in sub
    assert "health" not in sub
    nested = one_line_error(
        _calibrate(ENGINE_URLS[engine.flavor], index, "--field", "notes.text"), 2
    )
    assert "field 'notes.text' is inside the nested object 'notes'" in nested
    assert "no indexed text" not in nested


@pytest.mark.engine
def test_a_closed_index_is_named_closed(engine: Engine, tmp_path: Path) -> None:
    name = create_index(engine, shards=1)
    try:
        bulk_index(engine, name, [{"id": i, "body": t} for i, t in enumerate(stdlib_lines(50))])
        out = tmp_path / "cal.json"
        assert _calibrate(ENGINE_URLS[engine.flavor], name, "--out", str(out)).returncode == 0
        call(engine, "POST", f"/{name}/_close")
        line = one_line_error(_calibrate(ENGINE_URLS[engine.flavor], name), 3)
        assert f"index {name!r} is closed" in line and f"POST /{name}/_open" in line
        searched = run_esqlog(
            "search", "--url", ENGINE_URLS[engine.flavor], name, "read", "--calibration", str(out)
        )
        assert f"index {name!r} is closed" in one_line_error(searched, 3)
    finally:
        call(engine, "DELETE", f"/{name}")


@pytest.mark.engine
def test_a_calibration_claiming_other_shards_costs_no_routing_requests(
    corpus: tuple[Engine, str], tmp_path: Path
) -> None:
    engine, index = corpus
    out = tmp_path / "cal.json"
    assert _calibrate(ENGINE_URLS[engine.flavor], index, "--out", str(out)).returncode == 0
    edited = {**json.loads(out.read_text()), "shards": 1000}
    out.write_text(json.dumps(edited))
    result = run_esqlog(
        "--verbose",
        "search",
        "--url",
        ENGINE_URLS[engine.flavor],
        index,
        "read file",
        "--calibration",
        str(out),
    )
    line = one_line_error(result, 2)
    assert "says index" in line and "has 1,000 shards but it has 2" in line
    assert "_search_shards" not in result.stderr  # refused before any routing probe


@pytest.mark.engine
def test_the_extreme_seeds_are_accepted_by_the_engine(corpus: tuple[Engine, str]) -> None:
    engine, index = corpus
    for seed in (2**63 - 1, -(2**63)):
        result = _calibrate(ENGINE_URLS[engine.flavor], index, "--seed", str(seed), "--json")
        assert result.returncode == 0, result.stderr
        assert 0.0 <= json.loads(result.stdout)["h_tok"] <= 1.0


@pytest.mark.engine
def test_the_drift_warning_is_printed_once_in_one_line(engine: Engine, tmp_path: Path) -> None:
    name = create_index(engine, shards=2)
    try:
        lines = stdlib_lines(250)
        bulk_index(engine, name, [{"id": i, "body": t} for i, t in enumerate(lines[:200])])
        out = tmp_path / "cal.json"
        made = _calibrate(ENGINE_URLS[engine.flavor], name, "--vocabulary", "--out", str(out))
        assert made.returncode == 0, made.stderr
        bulk_index(engine, name, [{"id": i, "body": t} for i, t in enumerate(lines[200:], 200)])
        result = run_esqlog(
            "search",
            "--url",
            ENGINE_URLS[engine.flavor],
            name,
            "return self",
            "--calibration",
            str(out),
        )
        assert result.returncode == 0, result.stderr
        stderr = result.stderr.splitlines()
        assert len(stderr) == 1, stderr  # once, not once per check that noticed it
        assert stderr[0].startswith("warning: the index changed by 25% of its documents")
        assert "RuntimeWarning" not in result.stderr
    finally:
        call(engine, "DELETE", f"/{name}")


@pytest.mark.engine
def test_install_script_is_checked_before_out_is_written(
    corpus: tuple[Engine, str], tmp_path: Path
) -> None:
    engine, index = corpus
    out = tmp_path / "cal.json"
    result = _calibrate(ENGINE_URLS[engine.flavor], index, "--install-script", "--out", str(out))
    has_painless = "painless" in {
        c["language"] for c in call(engine, "GET", "/_script_language")["language_contexts"]
    }
    if has_painless:  # OpenSearch: installed, then the file written
        assert result.returncode == 0, result.stderr
        assert "stored script esqlog-qlog-term installed" in result.stdout and out.exists()
    else:  # the Elasticsearch test node has no Painless: one line, and no file left behind
        line = one_line_error(result, 2)
        assert "no Painless" in line and "--mode boost" in line
        assert "--install-script" not in line.split(";", 1)[1]
        assert not out.exists()
