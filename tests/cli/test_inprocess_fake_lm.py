"""End to end in the default (embedded server) mode with the real turn runtime and the fake LM server.

`fleet` with scripted stdin and `fleet-rlm run --json` start the real app in-process; the answers come from
`FakeLMServer` over HTTP.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fleet_rlm.testing import FakeLMServer, adapter_fields_rule
from tests.cli.helpers import cli_env, run_cli

pytestmark = pytest.mark.db_independent


def _env(data_dir: Path, lm: FakeLMServer) -> dict[str, str]:
    return cli_env(
        data_dir,
        DSPY_LM_MODEL="openai/fake-model",
        DSPY_LM_API_BASE=lm.base_url,
        DSPY_LLM_API_KEY="fake",
        FLEET_SANDBOX_POOL_SIZE="0",
    )


def test_fleet_chat_and_run_in_process(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    with FakeLMServer(rule=adapter_fields_rule(answer="four")) as lm:
        env = _env(data_dir, lm)
        chat = run_cli("fleet", [], env, stdin="what is 2+2?\n/sessions\n", timeout=120)
        ran = run_cli("fleet-rlm", ["run", "and 3+1?", "--mode", "direct", "--json"], env, timeout=120)
    assert chat.returncode == 0, chat
    assert "four" in chat.stdout and "LM calls" in chat.stdout
    assert "what is 2+2?" in chat.stdout  # the session list shows the new session's title
    assert ran.returncode == 0, ran
    outcome = json.loads(ran.stdout)
    assert outcome["status"] == "succeeded" and "four" in outcome["answer"]
    assert outcome["usage"]["lm_calls"] >= 1


def test_whitespace_task_is_refused_by_run_and_chat_with_the_api_code(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    with FakeLMServer(rule=adapter_fields_rule(answer="four")) as lm:
        env = _env(data_dir, lm)
        ran = run_cli("fleet-rlm", ["run", "   "], env, timeout=60)
        piped = run_cli("fleet-rlm", ["run", "-"], env, stdin=" \n\t\n", timeout=60)
        chat = run_cli("fleet", [], env, stdin="   \n/sessions\n", timeout=120)
    for result in (ran, piped):
        assert result.returncode == 1, result
        assert "error[empty_task]" in result.stderr and "Traceback" not in result.stderr
    assert chat.returncode == 0, chat
    assert "error[empty_task]" in chat.stdout
    assert "no sessions yet" in chat.stdout  # nothing was sent, so no session was created
    assert lm.requests == []


def test_refused_lm_connection_is_one_line_in_process(tmp_path: Path) -> None:
    """The server's log of the failed turn (a traceback) goes to logs/, not to the terminal (in-process mode)."""
    import socket

    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    env = cli_env(
        tmp_path / "data",
        DSPY_LM_MODEL="openai/fake-model",
        DSPY_LM_API_BASE=f"http://127.0.0.1:{port}/v1",
        DSPY_LLM_API_KEY="fake",
        FLEET_SANDBOX_POOL_SIZE="0",
        FLEET_LM_NUM_RETRIES="0",
        FLEET_CLI_SERVER="inprocess",
    )
    ran = run_cli("fleet-rlm", ["run", "hi", "--mode", "direct"], env, timeout=180)
    assert ran.returncode == 1, ran
    assert "Traceback" not in ran.stderr and "error[lm_unreachable]" in ran.stderr, ran.stderr
    assert len(ran.stderr.splitlines()) < 12, ran.stderr


def test_try_it_without_an_api_key_with_the_demo_fake_lm(tmp_path: Path) -> None:
    """The README's "try it" path: `python -m fleet_rlm.testing.fake_lm --demo`, then the CLI against it.

    The demo shows what each program does with the user's own context: an RLM run explores it over several
    iterations, batches sub-LM calls over chunks, asks a child, and submits a summary built from its variables;
    a tools run calls one tool and finishes; a short question is routed to direct and answered from the task.
    """
    from fleet_rlm.testing import FakeLMProcess

    sales = tmp_path / "sales.csv"
    sales.write_text("region,sales\nnorth,1234\nsouth,987\neast,1530\nwest,760\n", encoding="utf-8")
    with FakeLMProcess(extra_args=["--demo"]) as lm:
        env = cli_env(
            tmp_path / "data",
            DSPY_LM_MODEL=lm.model,
            DSPY_LM_API_BASE=lm.base_url,
            DSPY_LLM_API_KEY="fake",
            FLEET_SANDBOX_POOL_SIZE="0",
        )
        direct = run_cli("fleet-rlm", ["run", "hello", "--json"], env, timeout=120)
        tools = run_cli("fleet-rlm", ["run", "sum it up", "--mode", "tools", "--context", str(sales), "--json"], env)
        before_rlm = len(lm.requests())
        rlm = run_cli("fleet-rlm", ["run", "Summarize the sales", "--context", str(sales), "--json"], env, timeout=240)
        rlm_prompts = [json.dumps(r["body"]) for r in lm.requests()[before_rlm:]]
    for result in (direct, tools, rlm):
        assert result.returncode == 0, result
    answers = {name: json.loads(r.stdout)["answer"] for name, r in (("direct", direct), ("tools", tools), ("rlm", rlm))}
    assert answers["direct"].startswith("You asked “hello”. No context was attached.")  # routed to direct
    assert "I called `read_attachment`" in answers["tools"] and "“region,sales”" in answers["tools"]
    assert json.loads(tools.stdout)["usage"]["lm_calls"] == 3  # one tool step, finish, the answer: no loop
    # rlm (routed there because a file is attached): its answer comes from the cells' variables over the file
    assert answers["rlm"].startswith("On “Summarize the sales”: I read "), answers["rlm"]
    assert "(5 lines of content) in 3 chunks." in answers["rlm"]
    assert "“east,1530” stands out: it holds the largest number (1530)" in answers["rlm"]  # the child's finding
    steps = [p for p in rlm_prompts if "[[ ## iteration ## ]]" in p]
    assert sum("Sub-question:" not in p.split("Variable: `context`")[0] for p in steps) == 4  # root iterations
    assert sum("Summarize this part" in p and "[[ ## iteration" not in p for p in rlm_prompts) == 3  # sub-LM batch
    assert any("Sub-question:" in p.split("Variable: `context`")[0] for p in steps)  # a child's own steps


def test_chat_checks_url_and_repo_targets_when_entered(tmp_path: Path) -> None:
    lines = [
        "/url http://127.0.0.1:9/secret",  # loopback: refused by default (url_allow_private)
        "/url ftp://example.com/file",  # not http(s)
        "/repo /etc",  # a local path
        "/repo git://example.com/x.git",  # not https
        "/sessions",
    ]
    with FakeLMServer(rule=adapter_fields_rule(answer="four")) as lm:
        chat = run_cli("fleet", [], _env(tmp_path / "data", lm), stdin="\n".join(lines) + "\n", timeout=120)
    assert chat.returncode == 0, chat
    out = " ".join(chat.stdout.split())
    assert out.count("error[context_url_blocked]") == 2, chat.stdout
    assert out.count("error[context_repo_blocked]") == 2, chat.stdout
    assert "FLEET_URL_ALLOW_PRIVATE" in out and "will fetch" not in out and "will clone" not in out
    assert lm.requests == []


def test_chat_keeps_an_attachment_for_later_turns_until_detached(tmp_path: Path) -> None:
    """/attach on turn 1, a follow-up still sees the file, /sources lists it, /detach removes it for turn 3."""
    notes = tmp_path / "notes.txt"
    notes.write_text("NOTE-MARKER-77: the launch is on Friday\n", encoding="utf-8")
    stdin = "\n".join(
        [
            "/mode direct",
            f"/attach {notes}",
            "first question",
            "second question",
            "/sources",
            "/detach nope.txt",
            "/detach notes.txt",
            "third question",
            "/sources",
        ]
    )
    with FakeLMServer(rule=adapter_fields_rule(answer="four")) as lm:
        chat = run_cli("fleet", [], _env(tmp_path / "data", lm), stdin=stdin + "\n", timeout=180)
        prompts = [request.text for request in lm.requests]
    assert chat.returncode == 0, chat
    assert "Traceback" not in chat.stdout + chat.stderr
    by_turn = {
        task: next(p for p in prompts if task in p and not any(later in p for later in after))
        for task, after in (
            ("first question", ("second question", "third question")),
            ("second question", ("third question",)),
            ("third question", ()),
        )
    }
    assert "NOTE-MARKER-77" in by_turn["first question"]
    assert "NOTE-MARKER-77" in by_turn["second question"]  # a follow-up: nothing attached again
    assert "NOTE-MARKER-77" not in by_turn["third question"]  # detached
    out = " ".join(chat.stdout.split())
    assert "notes.txt attachment" in out  # /sources: name and where it came from
    assert "error[context_source_not_found]" in out and "it holds: notes.txt" in out
    assert "removed notes.txt from the session's context" in out
    assert "this session holds no context yet" in out  # /sources after /detach
