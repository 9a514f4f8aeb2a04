"""`fleet-rlm doctor [all|lm|db|sandbox|daytona]`: each dependency green or red, with the action to take.

Checks run against this machine's configuration (environment, .env, policy file), not through a server: the
doctor is what you run when the server will not start. Exit code 0 only when every check that ran passed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import typer
from rich.console import Console
from rich.text import Text

from fleet_rlm.cli.connect import NO_MODEL_HELP
from fleet_rlm.cli.errors import guarded
from fleet_rlm.config import Settings, load_settings

Target = Literal["all", "lm", "db", "sandbox", "daytona"]
TARGETS: tuple[str, ...] = ("all", "lm", "db", "sandbox", "daytona")
Verdict = Literal["ok", "fail", "skip"]


@dataclass(frozen=True)
class CheckResult:
    name: str
    verdict: Verdict
    detail: str
    action: str | None = None


def check_lm(settings: Settings) -> CheckResult:
    """One tiny completion through the configured root model."""
    if not settings.model_configured:
        first = NO_MODEL_HELP.splitlines()[0]
        return CheckResult("lm", "fail", first, "set DSPY_LM_MODEL and DSPY_LLM_API_KEY (or DSPY_LM_API_BASE)")
    from fleet_rlm.llm import check_lm as lm_check
    from fleet_rlm.llm import env_profiles

    profile = next(iter(env_profiles(settings).values()))
    result = lm_check(profile, settings)
    if result.ok:
        return CheckResult("lm", "ok", f"{result.model} answered in {result.latency_ms} ms ({result.engine})")
    message = f"{result.model}: error[{result.error_code}]: {result.error_message}"
    return CheckResult("lm", "fail", message, result.action)


def check_db(settings: Settings) -> CheckResult:
    """Reachable, and at the schema head."""
    from fleet_rlm.store import migrate

    where = settings.database_kind
    if where == "sqlite" and not (settings.data_dir / "fleet.db").exists():
        return CheckResult("db", "ok", f"sqlite at {settings.data_dir} (created and migrated on first start)")
    try:
        current = migrate.current(settings.resolved_database_url)
    except Exception as exc:
        return CheckResult(
            "db", "fail", f"{where} unreachable: {type(exc).__name__}: {exc}", "check FLEET_DATABASE_URL and the server"
        )
    head = migrate.head()
    if current != head:
        return CheckResult(
            "db", "fail", f"{where} at {current or 'base'}, code needs {head}", "run `fleet-rlm db upgrade`"
        )
    return CheckResult("db", "ok", f"{where} reachable, at head {head}")


def check_sandbox(settings: Settings) -> CheckResult:
    """Isolation available, and a tiny cell runs."""
    if settings.sandbox_backend != "local":
        return CheckResult("sandbox", "skip", f"backend is {settings.sandbox_backend}: see the daytona check")
    from fleet_rlm.sandbox import backend_status
    from fleet_rlm.sandbox.factory import interpreter_factory

    status = backend_status(settings)
    isolation = f"isolation {status['isolation']} ({status['reason']})"
    try:
        interpreter = interpreter_factory(settings=settings)()
        try:
            output = str(interpreter.execute("print(6 * 7)")).strip()
        finally:
            interpreter.shutdown()
    except Exception as exc:
        action = getattr(exc, "action", None) or "install bubblewrap, or set FLEET_SANDBOX_ISOLATION=reduced"
        return CheckResult("sandbox", "fail", f"a test cell failed: {exc}; {isolation}", action)
    if output != "42":
        return CheckResult(
            "sandbox", "fail", f"a test cell printed {output!r} instead of 42", "see logs/ in the data dir"
        )
    action = None if status["isolation"] == "bubblewrap" else "install bubblewrap (package `bubblewrap`) for isolation"
    return CheckResult("sandbox", "ok", f"local cell ran; {isolation}", action)


def check_daytona(settings: Settings) -> CheckResult:
    """Configured (API key), and the API answers a list call."""
    if settings.daytona_api_key is None:
        verdict: Verdict = "fail" if settings.sandbox_backend == "daytona" else "skip"
        return CheckResult("daytona", verdict, "not configured (no DAYTONA_API_KEY)", "set DAYTONA_API_KEY to use it")
    from daytona import Daytona, DaytonaConfig, ListSandboxesQuery

    config = DaytonaConfig(
        api_key=settings.daytona_api_key.get_secret_value(),
        api_url=settings.daytona_api_url,
        target=settings.daytona_target,
    )
    where = settings.daytona_api_url or "the default Daytona API"
    try:
        client = Daytona(config)
        next(iter(client.list(ListSandboxesQuery(limit=1), request_timeout=15)), None)
    except Exception as exc:
        detail = f"{where} did not answer: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        return CheckResult("daytona", "fail", detail, "check DAYTONA_API_URL, DAYTONA_API_KEY and the network")
    return CheckResult("daytona", "ok", f"{where} reachable, API key accepted")


CHECKS: dict[str, Callable[[Settings], CheckResult]] = {
    "db": check_db,
    "sandbox": check_sandbox,
    "lm": check_lm,
    "daytona": check_daytona,
}

MARKS = {"ok": ("✓", "green"), "fail": ("✗", "red"), "skip": ("-", "dim")}


def print_result(console: Console, result: CheckResult) -> None:
    mark, style = MARKS[result.verdict]
    console.print(Text(f"{mark} {result.name:<8} {result.detail}", style=style))
    if result.action and result.verdict != "skip":
        console.print(Text(f"  → {result.action}", style="yellow" if result.verdict == "fail" else "dim"))


def doctor(
    target: str = typer.Argument("all", metavar="TARGET", help="What to check: all, lm, db, sandbox or daytona."),
) -> None:
    """Check the model, database, sandbox and Daytona; print the action for each failure."""
    if target not in TARGETS:
        raise typer.BadParameter(f"must be one of {', '.join(TARGETS)}", param_hint="TARGET")

    def body() -> bool:
        settings = load_settings()
        console = Console(highlight=False)
        names = list(CHECKS) if target == "all" else [target]
        ok = True
        for name in names:
            try:
                result = CHECKS[name](settings)
            except Exception as exc:  # a check that crashes is a failed check, reported on one line
                result = CheckResult(name, "fail", f"{type(exc).__name__}: {exc}", getattr(exc, "action", None))
            print_result(console, result)
            ok = ok and result.verdict != "fail"
        return ok

    raise typer.Exit(0 if guarded(body) else 1)
