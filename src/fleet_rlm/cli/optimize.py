"""`fleet-rlm optimize`: GEPA optimization through the API (embedded server or --url-server).

Both forms work: `fleet-rlm optimize MODULE DATASET.jsonl [--auto light] [--report r.md]` (shorthand for
`optimize run`) and the subcommands `list`, `run`, `runs`, `show`, `compare`, `promote`, `rollback`,
`cancel`, `datasets`. A first argument that is not a subcommand name is taken as MODULE of `run`.
"""

from __future__ import annotations

import hashlib
import sys
import time
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from typer.core import TyperGroup

from fleet_rlm.cli.client import FleetClient, require_file
from fleet_rlm.cli.connect import open_client
from fleet_rlm.cli.errors import guarded
from fleet_rlm.cli.options import ServerOption
from fleet_rlm.cli.tables import print_table
from fleet_rlm.errors import FleetError
from fleet_rlm.events.status import FINAL

API = "/api/v1/optimization"


class RunByDefault(TyperGroup):
    """`optimize MODULE DATASET` means `optimize run MODULE DATASET`."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and not args[0].startswith("-") and args[0] not in self.commands:
            args = ["run", *args]
        return super().parse_args(ctx, args)


optimize_app = typer.Typer(
    cls=RunByDefault,
    help="GEPA optimization: `optimize MODULE DATASET.jsonl` or a subcommand.",
    no_args_is_help=True,
)


@optimize_app.command("list")
def list_modules(url_server: str | None = ServerOption) -> None:
    """The optimizable modules with their dataset keys and metric."""

    def body() -> None:
        with open_client(url_server, need_model=False) as client:
            modules = client.get_json(f"{API}/modules")
        columns = ("module", "kind", "required keys", "optional", "metric", "description")
        rows = [
            (
                m["name"],
                m["kind"],
                ", ".join(m["required_keys"]),
                ", ".join(m["optional_keys"]) or "-",
                m["metric"],
                m["description"],
            )
            for m in modules
        ]
        print_table(columns, rows, title="Optimizable modules")

    guarded(body)


def upload_dataset(client: FleetClient, module: str, path: Path) -> dict[str, Any]:
    """Upload (or reuse, when the same file was uploaded before) the dataset; the name carries a content hash."""
    require_file(path)
    content = path.read_text(encoding="utf-8")
    name = f"{path.stem}-{hashlib.sha256(content.encode()).hexdigest()[:8]}"
    for existing in client.get_json(f"{API}/datasets", module=module):
        if existing["name"] == name:
            return dict(existing)
    body = {"module": module, "name": name, "content": content, "filename": path.name}
    return dict(client.request("POST", f"{API}/datasets", json=body).json())


def _bar_state(run: dict[str, Any]) -> dict[str, Any]:
    """Description and counts of the progress bar; a finished run shows N/N and how many metric calls it made."""
    p = run.get("progress") or {}
    calls = int(p.get("metric_calls") or 0)
    if run["status"] in FINAL:
        budget = p.get("max_metric_calls")
        of = f" of a {budget} budget" if budget and budget != calls else ""
        text = f"{run['status']} after {calls} metric calls{of}"
        return {"description": text, "completed": calls, "total": calls}
    best = p.get("best_score")
    text = f"{p.get('phase', run['status'])} iter {p.get('iteration', 0)}"
    text += f" best {best:.3f}" if isinstance(best, (int, float)) else ""
    return {"description": text, "completed": calls, "total": p.get("max_metric_calls")}


def follow(client: FleetClient, run_id: str) -> dict[str, Any]:
    """Poll the run, drawing a progress bar (metric calls) until it ends; Ctrl-C cancels the run."""
    console = Console(stderr=True)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console) as bar:
        handle = bar.add_task("queued", total=None)
        try:
            while True:
                run: dict[str, Any] = client.get_json(f"{API}/runs/{run_id}")
                bar.update(handle, **_bar_state(run))
                if run["status"] in FINAL:
                    return run
                time.sleep(0.5)
        except KeyboardInterrupt:
            client.request("POST", f"{API}/runs/{run_id}/cancel")
            console.print("cancel requested; waiting for the run to stop")
            while run["status"] not in FINAL:
                time.sleep(0.5)
                run = client.get_json(f"{API}/runs/{run_id}")
            bar.update(handle, **_bar_state(run))
            return run


@optimize_app.command("run")
def run(
    module: str = typer.Argument(..., help="The module to optimize (see `optimize list`)."),
    dataset: Path = typer.Argument(..., help="JSONL or CSV with the module's keys."),
    auto: str | None = typer.Option(None, "--auto", help="GEPA budget: light, medium or heavy (default light)."),
    max_metric_calls: int | None = typer.Option(None, "--max-metric-calls", min=1, help="Budget in metric calls."),
    report: Path | None = typer.Option(None, "--report", help="Write a Markdown report to this file."),
    promote: bool = typer.Option(
        False, "--promote", help="Promote the new version when it is strictly better than the current one."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the train/validation split and GEPA."),
    url_server: str | None = ServerOption,
) -> None:
    """Optimize MODULE on DATASET with GEPA; prints the baseline and optimized validation scores."""
    if auto is not None and auto not in ("light", "medium", "heavy"):
        raise typer.BadParameter("use light, medium or heavy", param_hint="--auto")

    def body() -> None:
        with open_client(url_server) as client:
            uploaded = upload_dataset(client, module, dataset)
            if auto and max_metric_calls:
                raise typer.BadParameter("give --auto or --max-metric-calls, not both")
            budget = {"max_metric_calls": max_metric_calls} if max_metric_calls else {"auto": auto or "light"}
            request = {"module": module, "dataset_id": uploaded["id"], "seed": seed, **budget}
            started = client.request("POST", f"{API}/runs", json=request).json()
            typer.echo(f"optimization run {started['id']} ({module}, dataset {uploaded['name']})", err=True)
            final = follow(client, started["id"])
            results = client.get_json(f"{API}/runs/{final['id']}/results")
            if report is not None:
                report.write_text(results["report_markdown"], encoding="utf-8")
                typer.echo(f"report: {report}", err=True)
            promoted = ""
            if final["status"] == "succeeded" and promote:
                promoted = promote_if_better(client, final["id"])
        scores = final.get("scores") or {}
        typer.echo(
            f"{final['status']}: baseline {scores.get('baseline')} -> optimized {scores.get('optimized')}"
            f" (version {final.get('program_version') or '-'}{promoted})"
        )
        if final["status"] != "succeeded":
            error = final.get("error") or {}
            raise FleetError(
                error.get("message") or f"the run ended {final['status']}",
                code=error.get("code", f"optimization_{final['status']}"),
                action=error.get("action"),
            )

    guarded(body)


@optimize_app.command("runs")
def runs(module: str | None = typer.Option(None, "--module"), url_server: str | None = ServerOption) -> None:
    """Your optimization runs, newest first."""

    def body() -> None:
        with open_client(url_server, need_model=False) as client:
            items = client.get_json(f"{API}/runs", module=module)
        columns = ("id", "module", "status", "baseline", "optimized", "version", "created")
        rows = []
        for r in items:
            s = r.get("scores") or {}
            baseline, optimized = s.get("baseline"), s.get("optimized")
            rows.append(
                (
                    r["id"],
                    r["module"],
                    r["status"],
                    "-" if baseline is None else f"{baseline:.3f}",
                    "-" if optimized is None else f"{optimized:.3f}",
                    r.get("program_version") or "-",
                    r["created_at"][:19],
                )
            )
        print_table(columns, rows, title="Optimization runs")

    guarded(body)


@optimize_app.command("show")
def show(
    run_id: str,
    report: Path | None = typer.Option(None, "--report", help="Write the Markdown report here (else print it)."),
    url_server: str | None = ServerOption,
) -> None:
    """A run's Markdown report (baseline vs optimized, per example, prompt changes)."""

    def body() -> None:
        with open_client(url_server, need_model=False) as client:
            text = client.get_json(f"{API}/runs/{run_id}/results")["report_markdown"]
        if report is None:
            typer.echo(text)
        else:
            report.write_text(text, encoding="utf-8")

    guarded(body)


@optimize_app.command("compare")
def compare(a: str, b: str, url_server: str | None = ServerOption) -> None:
    """Per-example optimized scores of run A and run B."""

    def body() -> None:
        with open_client(url_server, need_model=False) as client:
            c = client.get_json(f"{API}/runs/compare", a=a, b=b)
        title = f"{a} vs {b}: delta {c['delta']} ({c['better']} better, {c['worse']} worse)"
        rows = [(e["index"], e["a"], e["b"], e["delta"]) for e in c["examples"]]
        print_table(("example", "a", "b", "delta"), rows, title=title)

    guarded(body)


GLOBAL_HELP = "Admins: for every user's turns (scope=global) instead of only yours."


def promote_if_better(client: FleetClient, run_id: str) -> str:
    """`run --promote`: promote only a strictly better version; say why not otherwise (never asks)."""
    check = client.get_json(f"{API}/runs/{run_id}/promotion")
    if not (check["better"] or check["already_current"]):
        typer.echo(f"not promoted: {comparison(check)}; promote anyway with `optimize promote {run_id} --force`")
        return ""
    client.request("POST", f"{API}/runs/{run_id}/promote")
    return ", promoted"


def comparison(check: dict[str, Any]) -> str:
    current = check["current_score"]
    current_text = "not scored on these rows" if current is None else f"{current:.3f}"
    candidate = check["candidate_score"]
    return (
        f"{check['candidate_version']} {'-' if candidate is None else f'{candidate:.3f}'} vs current "
        f"{check['current_version']} {current_text} on the same {check['rows']} validation rows"
    )


@optimize_app.command("promote")
def promote_run(
    run_id: str,
    everyone: bool = typer.Option(False, "--global", help=GLOBAL_HELP),
    force: bool = typer.Option(False, "--force", help="Promote even when it is not better; do not ask."),
    url_server: str | None = ServerOption,
) -> None:
    """Use the version this run produced for your new turns (or, --global, everyone's). Shows its score beside
    the current version's; one that is not better is promoted only after you confirm (or with --force)."""

    def body() -> None:
        scope = "global" if everyone else "user"
        with open_client(url_server, need_model=False) as client:
            check = client.get_json(f"{API}/runs/{run_id}/promotion", scope=scope)
            typer.echo(comparison(check), err=True)
            confirm = force
            if not (check["better"] or check["already_current"] or force) and sys.stdin.isatty():
                confirm = typer.confirm("It is not better than the current version. Promote anyway?", default=False)
                if not confirm:
                    typer.echo("not promoted", err=True)
                    return
            params = {"scope": scope, "confirm": "true" if confirm else "false"}
            version = client.request("POST", f"{API}/runs/{run_id}/promote", params=params).json()
        typer.echo(f"promoted {version['module']} {version['version']}" + (" for every user" if everyone else ""))

    guarded(body)


@optimize_app.command("rollback")
def rollback(
    module: str,
    everyone: bool = typer.Option(False, "--global", help=GLOBAL_HELP),
    url_server: str | None = ServerOption,
) -> None:
    """Withdraw your promotion of the module (--global: the global one); the previous one is used again."""

    def body() -> None:
        scope = "global" if everyone else "user"
        with open_client(url_server, need_model=False) as client:
            result = client.request("POST", f"{API}/modules/{module}/rollback", params={"scope": scope}).json()
        now = result["promoted"]["version"] if result["promoted"] else "the built-in program"
        typer.echo(f"{module} now uses {now}")

    guarded(body)


@optimize_app.command("cancel")
def cancel(run_id: str, url_server: str | None = ServerOption) -> None:
    """Request cancellation of a running optimization."""

    def body() -> None:
        with open_client(url_server, need_model=False) as client:
            client.request("POST", f"{API}/runs/{run_id}/cancel")
        typer.echo(f"cancel requested for {run_id}")

    guarded(body)
