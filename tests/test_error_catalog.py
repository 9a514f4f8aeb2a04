"""The error table (fleet_rlm/errors/codes.toml) is the one place a code's wording lives: every code the source
raises (found by an AST scan) has an entry, raisers do not word an action or a status differently, the docs' error
list is generated from it, and the CLI and the API print the same text for the same code."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import httpx

from fleet_rlm.errors import FleetError, action_of
from fleet_rlm.errors.catalog import catalog, fields_of
from fleet_rlm.errors.scan import raised_codes

ROOT = Path(__file__).resolve().parents[1]


def test_every_raised_code_is_in_the_table() -> None:
    raised = raised_codes()
    assert len(raised) > 150  # the scan sees the package (FleetError calls, classes, helpers, code tables)
    missing = {code: [site.where for site in sites] for code, sites in raised.items() if code not in catalog()}
    assert not missing, f"add these codes to fleet_rlm/errors/codes.toml: {missing}"
    unused = sorted(set(catalog()) - set(raised))
    assert not unused, f"the table lists codes nothing raises: {unused}"


def test_raisers_agree_with_the_table() -> None:
    """A raiser's literal action or status that differs from the table's would be dead or contradicting text."""
    wrong = []
    for code, sites in raised_codes().items():
        spec = catalog()[code]
        for site in sites:
            action, status = site.action, site.status
            if action is not None and not (
                isinstance(action, ast.Constant) and action.value in (action_of(code), None)
            ):
                wrong.append(f"{site.where} {code}: action {ast.unparse(action)[:80]} (the table's wins; drop it)")
            if isinstance(status, ast.Constant) and spec.status and status.value not in (spec.status, *spec.also):
                wrong.append(f"{site.where} {code}: status {status.value}, the table says {spec.status}")
    assert not wrong, "\n".join(wrong)


def test_every_entry_is_one_line_with_an_action() -> None:
    for code, spec in catalog().items():
        assert spec.message and spec.action, code
        assert "\n" not in spec.message + spec.action, code
        assert spec.status is None or 400 <= spec.status < 600, code
        assert not (spec.contextual and fields_of(spec.action)), code


def test_the_same_code_reads_the_same_from_server_and_cli() -> None:
    """The CLI rebuilds the server's error from its JSON body: the one line it prints is the server's wording."""
    from fleet_rlm.cli.client import api_error

    request = httpx.Request("POST", "http://127.0.0.1/api/v1/sessions/s/turns")
    for code in ("context_url_blocked", "file_not_found", "turn_already_running", "payload_too_large"):
        server = FleetError("raised here", code=code, action="a raiser's own words", status=409)
        assert server.action == action_of(code)
        printed = api_error(httpx.Response(409, json={"error": server.to_dict()}, request=request))
        assert printed.one_line() == server.one_line()


def test_the_docs_error_list_is_generated_from_the_table() -> None:
    check = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_error_docs.py"), "--check"], capture_output=True, text=True
    )
    assert check.returncode == 0, check.stderr
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    assert all(f"| `{code}` |" in text for code in catalog())
