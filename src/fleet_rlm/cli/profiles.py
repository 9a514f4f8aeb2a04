"""`fleet-rlm profiles list|add|headers|test|import-env`: the LLM profiles the web UI's Settings page edits, via the
API. Secrets (the API key, header values) are read from environment variables, never taken on the command line,
and never printed: the server answers with a key's mask and the headers' names."""

from __future__ import annotations

import json
import os
from typing import Any

import typer

from fleet_rlm.cli.connect import open_client
from fleet_rlm.cli.errors import fail, guarded
from fleet_rlm.cli.options import ServerOption
from fleet_rlm.cli.tables import print_table

profiles_app = typer.Typer(help="LLM profiles: endpoints, models, (encrypted) keys and headers.", no_args_is_help=True)

KEY_ENV_HELP = "Environment variable holding the API key (keys are never passed on the command line)."
HEADER_ENV_HELP = (
    "NAME=ENV_VAR: send HTTP header NAME with the value of ENV_VAR (stored encrypted, never shown); repeatable."
)


def _env_value(variable: str, *, code: str) -> str:
    value = os.environ.get(variable)
    if not value:
        raise fail(f"error[{code}]: {variable} is not set — export it, then run this again")
    return value


def _headers_from_env(specs: list[str]) -> dict[str, str]:
    """{header: value} from NAME=ENV_VAR options (the value never appears on the command line)."""
    headers: dict[str, str] = {}
    for spec in specs:
        name, sep, variable = spec.partition("=")
        if not sep or not name.strip() or not variable.strip():
            raise fail(f"error[invalid_header]: {spec!r} is not NAME=ENV_VAR — e.g. --header-env X-Org=MY_ORG_TOKEN")
        headers[name.strip()] = _env_value(variable.strip(), code="header_value_missing")
    return headers


def _header_names(profile: dict[str, Any]) -> str:
    names = profile.get("extra_header_names") or []
    return ", ".join(f"{name} (set)" for name in names) or "-"


def _find(client: Any, name: str) -> dict[str, Any]:
    for profile in client.get_json("/api/v1/llm-profiles")["items"]:
        if profile["name"] == name or profile["id"] == name:
            return dict(profile)
    raise fail(f"error[profile_not_found]: no profile named {name!r} — list them with `fleet-rlm profiles list`")


@profiles_app.command("list")
def list_profiles(
    as_json: bool = typer.Option(False, "--json", help="Print the profiles as JSON."),
    url_server: str | None = ServerOption,
) -> None:
    """Your profiles with their model, endpoint, masked key and bound roles."""

    def body() -> None:
        with open_client(url_server, need_model=False) as client:
            items = client.get_json("/api/v1/llm-profiles")["items"]
        if as_json:
            typer.echo(json.dumps(items, ensure_ascii=False))
            return
        if not items:
            typer.echo("no profiles — add one with `fleet-rlm profiles add` or `fleet-rlm profiles import-env`")
            return
        rows = []
        for item in items:
            key = item["api_key_masked"] or ("server env" if item.get("key_source") == "server_env" else "-")
            roles = ", ".join(item["roles"]) or "-"
            rows.append((item["name"], item["model"], item["api_base"] or "-", key, _header_names(item), roles))
        print_table(("name", "model", "api base", "key", "headers", "roles"), rows)

    guarded(body)


@profiles_app.command("add")
def add_profile(
    name: str = typer.Argument(..., help="Unique profile name."),
    model: str = typer.Option(..., "--model", help="LiteLLM model string, e.g. openai/gpt-4o-mini."),
    api_base: str | None = typer.Option(None, "--api-base", help="OpenAI-compatible base URL."),
    api_key_env: str | None = typer.Option(None, "--api-key-env", help=KEY_ENV_HELP),
    header_env: list[str] = typer.Option([], "--header-env", help=HEADER_ENV_HELP),
    url_server: str | None = ServerOption,
) -> None:
    """Create a profile; its key and header values are read from environment variables and stored encrypted."""

    def body() -> None:
        payload: dict[str, Any] = {"name": name, "model": model, "api_base": api_base}
        if api_key_env:
            payload["api_key"] = _env_value(api_key_env, code="api_key_missing")
        if header_env:
            payload["extra_headers"] = _headers_from_env(header_env)
        with open_client(url_server, need_model=False) as client:
            created = client.request("POST", "/api/v1/llm-profiles", json=payload).json()
        key, headers = created["api_key_masked"] or "none", _header_names(created)
        typer.echo(f"added profile {created['name']} ({created['model']}), key: {key}, headers: {headers}")

    guarded(body)


@profiles_app.command("headers")
def edit_headers(
    name: str = typer.Argument(..., help="Profile name or id."),
    set_env: list[str] = typer.Option([], "--set-env", help=HEADER_ENV_HELP + " Replaces a header of that name."),
    remove: list[str] = typer.Option([], "--remove", help="Header name to remove; repeatable."),
    url_server: str | None = ServerOption,
) -> None:
    """Show a profile's header names, or set (from environment variables) and remove headers; other headers keep
    their stored values."""

    def body() -> None:
        new = _headers_from_env(set_env)
        with open_client(url_server, need_model=False) as client:
            profile = _find(client, name)
            if new or remove:
                gone = {header.lower() for header in [*remove, *new]}
                kept: dict[str, str | None] = {
                    header: None for header in profile["extra_header_names"] if header.lower() not in gone
                }
                payload = {"extra_headers": {**kept, **new}}
                profile = client.request("PATCH", f"/api/v1/llm-profiles/{profile['id']}", json=payload).json()
        typer.echo(f"{profile['name']}: headers: {_header_names(profile)}")

    guarded(body)


@profiles_app.command("test")
def test_profile(
    name: str = typer.Argument(..., help="Profile name or id."),
    url_server: str | None = ServerOption,
) -> None:
    """Send one tiny completion through the profile; exit 1 with the action to take when it fails."""

    def body() -> None:
        with open_client(url_server, need_model=False) as client:
            profile = _find(client, name)
            result = client.request("POST", f"/api/v1/llm-profiles/{profile['id']}/test").json()
        if result["ok"]:
            typer.secho(f"ok: {result['model']} answered in {result['latency_ms']} ms", fg=typer.colors.GREEN)
            return
        action = f" — {result['action']}" if result.get("action") else ""
        raise fail(f"error[{result['error_code']}]: {result['error_message']}{action}")

    guarded(body)


@profiles_app.command("import-env")
def import_env(url_server: str | None = ServerOption) -> None:
    """Admins: create or update the `env` and `env-delegate` profiles that use the server's DSPY_LM_MODEL,
    DSPY_LLM_API_KEY, ... (the key stays on the server)."""

    def body() -> None:
        with open_client(url_server, need_model=False) as client:
            result = client.request("POST", "/api/v1/llm-profiles/import-env").json()
        if not result["items"]:
            typer.echo("nothing to import — set DSPY_LM_MODEL (and DSPY_LLM_API_KEY, DSPY_LM_API_BASE) first")
            return
        for item in result["items"]:
            typer.echo(f"{item['status']}: {item['name']} ({item['profile']['model']})")

    guarded(body)
