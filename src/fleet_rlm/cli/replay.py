"""`fleet-rlm replay`: re-execute recorded runs against their recorded LM responses (no model is called) and
report identical or the first divergence; keep and replay regression sets (exit 3 when any run diverged)."""

from __future__ import annotations

import json
from typing import Any

import typer

from fleet_rlm.cli.connect import open_client
from fleet_rlm.cli.errors import fail, guarded
from fleet_rlm.cli.options import ServerOption

API = "/api/v1"
DIVERGED_EXIT = 3


def _post(client: Any, path: str, version: str | None) -> dict[str, Any]:
    import httpx

    body = {"program_version": version} if version else None
    response = client.request("POST", path, json=body, timeout=httpx.Timeout(10.0, read=None))
    return dict(response.json())


def render(report: dict[str, Any]) -> None:
    """One report in the terminal: the verdict line, then the divergence and its diff."""
    run_id, result = report.get("run_id", "?"), report.get("result")
    if result == "error":
        error = report.get("error") or {}
        typer.secho(f"{run_id}  error[{error.get('code')}]: {error.get('message')}", fg=typer.colors.RED)
        return
    calls = f"{report['calls_replayed']}/{report['calls_recorded']} LM calls"
    if result == "identical":
        typer.secho(f"{run_id}  identical ({calls}, {report['duration_ms']} ms)", fg=typer.colors.GREEN)
    else:
        d = report.get("divergence") or {}
        where = f"LM call {d.get('index')} ({d.get('role') or 'outcome'}"
        where += f" #{d['role_index']})" if d.get("role_index") else ")"
        typer.secho(f"{run_id}  diverged at {where}: {d.get('reason')} ({calls})", fg=typer.colors.YELLOW)
        if d.get("recorded_seq"):
            typer.echo(f"  closest recorded request: #{d['recorded_seq']} ({d.get('recorded_role')})")
        if d.get("diff"):
            typer.echo(d["diff"])
    for warning in report.get("warnings") or ():
        typer.secho(f"  warning: {warning}", fg=typer.colors.YELLOW)


def replay(
    run_ids: list[str] = typer.Argument(None, metavar="RUN_ID", help="Runs to replay (or to save with --save-set)."),
    program_version: str | None = typer.Option(
        None,
        "--program-version",
        help="Replay with this program version instead of the recorded one: a saved version, builtin-1 (the "
        "built-in programs) or any version a replay report of the run names.",
    ),
    set_name: str | None = typer.Option(None, "--set", help="Replay every run of this regression set."),
    save_set: str | None = typer.Option(None, "--save-set", help="Save RUN_IDs as this regression set (no replay)."),
    list_sets: bool = typer.Option(False, "--list-sets", help="List your regression sets."),
    as_json: bool = typer.Option(False, "--json", help="Print the reports as JSON."),
    url_server: str | None = ServerOption,
) -> None:
    """Replay recorded runs offline: identical, or the first divergent LM request with a diff (exit 3)."""
    run_ids = list(run_ids or [])
    chosen = sum(bool(x) for x in (set_name, save_set, list_sets))
    if chosen > 1 or (not run_ids and not chosen) or (set_name and run_ids) or (list_sets and run_ids):
        raise fail("give RUN_ID..., --set NAME, --save-set NAME RUN_ID... or --list-sets", code=2)

    def body() -> int:
        with open_client(url_server, need_model=False) as client:
            if list_sets:
                items = client.get_json(f"{API}/replay-sets")["items"]
                if as_json:
                    typer.echo(json.dumps(items))
                for item in [] if as_json else items:
                    typer.echo(f"{item['name']}  {len(item['run_ids'])} run(s)  {' '.join(item['run_ids'])}")
                if not items and not as_json:
                    typer.echo("no replay sets")
                return 0
            if save_set:
                if not run_ids:
                    raise fail("--save-set needs the RUN_IDs to save", code=2)
                saved = client.request("PUT", f"{API}/replay-sets/{save_set}", json={"run_ids": run_ids}).json()
                typer.echo(
                    json.dumps(saved) if as_json else f"saved set {saved['name']} ({len(saved['run_ids'])} runs)"
                )
                return 0
            if set_name:
                result = _post(client, f"{API}/replay-sets/{set_name}/replay", program_version)
                reports = list(result["reports"])
            else:
                reports = [_post(client, f"{API}/runs/{run_id}/replay", program_version) for run_id in run_ids]
        if as_json:
            typer.echo(json.dumps(reports if not set_name else {"name": set_name, "reports": reports}))
        else:
            for report in reports:
                render(report)
        return 0 if all(r.get("result") == "identical" for r in reports) else DIVERGED_EXIT

    code = guarded(body)
    if code:
        raise typer.Exit(code)
