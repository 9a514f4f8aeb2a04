"""Authorization matrix over every route in openapi.yaml and both WebSockets (auth_mode=token, users A and B).

User A owns real objects (a session with a real turn, its run and artifact, an attachment, an LLM profile, and
whatever else the API lists for A). For every operation with an object id, B gets 404 on A's object; without a
token every secured operation is 401; routes without an id never show B anything of A's.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr
from starlette.websockets import WebSocketDisconnect
from typer.testing import CliRunner

from fleet_rlm.api.app import create_app
from fleet_rlm.api.auth import issue_ticket
from fleet_rlm.testing import FakeLMServer
from tests.api.isolation import bearer, on_app, token_settings
from tests.security.harness import CellScript, base_settings, new_session, run_turn
from tests.security.openapi_walk import Examples, Operation, load_spec, operations

PUBLIC = {"/health", "/ready", "/api/v1/info"}


@dataclass
class World:
    client: TestClient
    a: dict[str, str]
    b: dict[str, str]
    ids: dict[str, str]
    spec: dict[str, Any]
    examples: Examples
    b_session: str
    unresolved: dict[str, str] = field(default_factory=dict)


def _collection_ids(client: TestClient, path: str, headers: dict[str, str]) -> list[str]:
    response = client.get(path, headers=headers)
    if response.status_code != 200:
        return []
    body = response.json()
    items = body.get("items", body) if isinstance(body, dict) else body
    if isinstance(body, dict) and not isinstance(items, list):
        items = next((value for value in body.values() if isinstance(value, list)), [])
    return [str(item["id"]) for item in items if isinstance(item, dict) and "id" in item]


@pytest.fixture(scope="module")
def world(module_data: tuple[Any, str]) -> Iterator[World]:
    data_dir, database_url = module_data
    script = CellScript()
    with FakeLMServer(rule=script) as lm:
        settings = token_settings(
            base_settings(data_dir, database_url),
            lm_model=lm.model,
            lm_api_base=lm.base_url,
            lm_api_key=SecretStr("fake"),
            sandbox_pool_size=0,
            lm_num_retries=0,
            lm_timeout_s=10,
            allow_private_lm_bases=True,  # the fake LM runs on loopback
        )
        with TestClient(create_app(settings)) as client:
            a, b = bearer(settings, "alice"), bearer(settings, "bob")
            session_id = new_session(client, a, title="alice's secret plans")
            cell = "open(ARTIFACTS_DIR + '/plan.txt', 'w').write('alice only')\nprint('saved')"
            turn = run_turn(client, session_id, script.register("artifact", cell), headers=a)
            assert turn.terminal["type"] == "turn_finished", turn.events[-2:]
            artifacts = client.get("/api/v1/artifacts", params={"run_id": turn.run_id}, headers=a).json()["items"]
            attachment = client.post("/api/v1/attachments", json={"text": "alice's notes", "name": "n.txt"}, headers=a)
            assert attachment.status_code == 201, attachment.text
            profile = client.post(
                "/api/v1/llm-profiles",
                json={"name": "alice-lm", "model": lm.model, "api_base": lm.base_url, "api_key": "sk-alice-key"},
                headers=a,
            )
            assert profile.status_code == 201, profile.text
            ids = {  # keyed by the collection each id belongs to
                "/api/v1/sessions": session_id,
                "/api/v1/runs": turn.run_id,
                "/api/v1/artifacts": artifacts[0]["id"],
                "/api/v1/attachments": attachment.json()["id"],
                "/api/v1/llm-profiles": profile.json()["id"],
            }
            b_session = new_session(client, b, title="bob's chat")
            spec = load_spec(client.app.openapi())  # type: ignore[attr-defined]
            world = World(client, a, b, ids, spec, Examples(spec), b_session)
            _discover_other_ids(world)
            yield world


def _collection(path: str, param: str) -> str:
    return path.split("/{" + param + "}")[0]


def _discover_other_ids(world: World) -> None:
    """Ids for collections the fixture did not fill: A's first item listed there (e.g. optimization runs)."""
    for op in operations(world.spec):
        for param in op.path_params:
            collection = _collection(op.path, param)
            if collection in world.ids or collection in world.unresolved:
                continue
            found = _collection_ids(world.client, collection, world.a)
            if found and found[0] in _collection_ids(world.client, collection, world.b):
                world.unresolved[collection] = f"{collection} is a shared catalogue (B lists the same objects)"
            elif found:
                world.ids[collection] = found[0]
            else:
                world.unresolved[collection] = f"A has no object listed at {collection}"


def _ids_for(world: World, op: Operation) -> dict[str, str]:
    return {p: world.ids[_collection(op.path, p)] for p in op.path_params if _collection(op.path, p) in world.ids}


def _call(world: World, op: Operation, headers: dict[str, str], ids: dict[str, str]) -> Any:
    """`ids` maps path param names to values (use _ids_for for A's objects)."""
    path = re.sub(r"\{(\w+)\}", lambda m: ids.get(m.group(1), "unknown"), op.path)
    query = world.examples.params(op, "query")
    extra = {name: str(value) for name, value in world.examples.params(op, "header").items()}
    body = world.examples.body(op)
    # turns need an Idempotency-Key (checked by the route, not declared as a parameter); harmless elsewhere
    kwargs: dict[str, Any] = {"params": query, "headers": {"Idempotency-Key": uuid.uuid4().hex, **extra, **headers}}
    if body is not None:
        kwargs["json"] = body
    if op.streaming:
        with world.client.stream(op.method.upper(), path, **kwargs) as response:
            response.read()
            return response
    return world.client.request(op.method.upper(), path, **kwargs)


def _ops(predicate: Any) -> list[Operation]:
    spec = load_spec()
    return [op for op in operations(spec) if predicate(op)]


OWNED = _ops(lambda op: bool(op.path_params))
UNSCOPED = _ops(lambda op: not op.path_params and op.method == "get" and op.path not in PUBLIC)
ALL = _ops(lambda op: True)


def test_the_matrix_covers_every_route_of_the_live_app(world: World) -> None:
    """openapi.yaml may lag behind the app; anything only the app has is still walked (load_spec merges it)."""
    listed = {op.id for op in operations(load_spec())}
    live = {op.id for op in operations(world.spec)}
    missing = sorted(live - listed)
    for op_id in missing:
        op = next(o for o in operations(world.spec) if o.id == op_id)
        response = _call(world, op, {}, _ids_for(world, op))
        assert op.path in PUBLIC or response.status_code == 401, (op_id, response.status_code)


@pytest.mark.parametrize("op", OWNED, ids=[op.id for op in OWNED])
def test_other_user_gets_404_on_owned_objects(world: World, op: Operation) -> None:
    ids = _ids_for(world, op)
    unresolved = [_collection(op.path, p) for p in op.path_params if p not in ids]
    if unresolved:
        pytest.skip("; ".join(world.unresolved.get(c, c) for c in unresolved))
    response = _call(world, op, world.b, ids)
    assert response.status_code == 404, (op.id, response.status_code, response.text[:300])
    for name, value in world.ids.items():
        assert value in ids.values() or value not in response.text, f"{op.id} leaks A's {name} to B"
    if op.method == "get":
        mine = _call(world, op, world.a, ids)
        assert mine.status_code != 404, (op.id, "A's own object must be found", mine.text[:300])


@pytest.mark.parametrize("op", ALL, ids=[op.id for op in ALL])
def test_unauthenticated_requests_get_401(world: World, op: Operation) -> None:
    if op.path in PUBLIC:
        assert not op.secured
        return
    assert op.secured, f"{op.id} declares no security requirement in openapi.yaml"
    ids = _ids_for(world, op)
    response = _call(world, op, {}, ids)
    assert response.status_code == 401, (op.id, response.status_code, response.text[:200])
    assert response.json()["error"]["code"] == "unauthorized"
    forged = _call(world, op, {"Authorization": "Bearer not-a-jwt"}, ids)
    assert forged.status_code == 401


@pytest.mark.parametrize("op", UNSCOPED, ids=[op.id for op in UNSCOPED])
def test_listings_show_only_the_callers_data(world: World, op: Operation) -> None:
    response = _call(world, op, world.b, {})
    assert response.status_code < 500, (op.id, response.text[:300])
    text = response.text
    for name, value in world.ids.items():
        assert value not in text, f"{op.id} shows B A's object from {name}"
    assert "alice" not in text.lower(), f"{op.id} mentions user A to B"


def test_public_routes_are_only_health_ready_and_info(world: World) -> None:
    public = {op.path for op in operations(world.spec) if not op.secured}
    assert public <= PUBLIC | {"/api/v1/ws/execution", "/api/v1/ws/execution/events"}, public - PUBLIC


# -- WebSockets ------------------------------------------------------------------------------------------------
def _ticket(world: World, headers: dict[str, str]) -> str:
    response = world.client.post("/api/v1/auth/ws-ticket", headers=headers)
    assert response.status_code == 201, response.text
    return str(response.json()["ticket"])


def test_execution_socket_refuses_other_users_session(world: World) -> None:
    url = f"/api/v1/ws/execution?ticket={_ticket(world, world.b)}"
    with world.client.websocket_connect(url) as ws:
        ws.send_json({"type": "message", "session_id": world.ids["/api/v1/sessions"], "content": "hijack"})
        reply = ws.receive_json()
        assert reply["type"] == "error" and reply["code"] == "not_found", reply
        ws.send_json({"type": "cancel", "run_id": world.ids["/api/v1/runs"]})
        reply = ws.receive_json()
        assert reply["type"] == "error" and reply["code"] in ("not_found", "invalid_frame"), reply


@pytest.mark.parametrize("kind", ["run", "session"])
def test_events_socket_refuses_other_users_objects(world: World, kind: str) -> None:
    query = f"{kind}_id={world.ids[f'/api/v1/{kind}s']}&after=0"
    url = f"/api/v1/ws/execution/events?{query}&ticket={_ticket(world, world.b)}"
    with world.client.websocket_connect(url) as ws:
        reply = ws.receive_json()
        assert reply["type"] == "error" and reply["code"] == "not_found", reply
        with pytest.raises(WebSocketDisconnect):
            ws.receive_json()


@pytest.mark.parametrize("path", ["/api/v1/ws/execution", "/api/v1/ws/execution/events?run_id={run_id}"])
def test_sockets_without_ticket_or_with_a_used_one_are_refused(world: World, path: str) -> None:
    base = path.format(run_id=world.ids["/api/v1/runs"])
    joiner = "&" if "?" in base else "?"
    for suffix in ("", f"{joiner}ticket=forged-ticket"):
        with world.client.websocket_connect(base + suffix) as ws:
            assert ws.receive_json()["code"] == "unauthorized"
            with pytest.raises(WebSocketDisconnect) as closed:
                ws.receive_json()
            assert closed.value.code == 4401
    ticket = _ticket(world, world.a)
    with world.client.websocket_connect(f"{base}{joiner}ticket={ticket}") as ws:
        if "events" not in base:
            ws.send_json({"type": "command", "command": "ping"})
        assert ws.receive_json()["type"] != "error" or "events" in base
    with world.client.websocket_connect(f"{base}{joiner}ticket={ticket}") as ws:
        reply = ws.receive_json()
        assert reply["type"] == "error" and reply["code"] == "unauthorized", "a ticket must be single-use"


def test_expired_ticket_is_refused(world: World) -> None:
    me = world.client.get("/api/v1/auth/me", headers=world.a).json()["id"]
    ticket, expires_at = on_app(world.client, lambda db: issue_ticket(db, user_id=me, ttl_s=1))

    from fleet_rlm.api.auth import consume_ticket
    from fleet_rlm.api.auth.tokens import unauthorized

    error = type(unauthorized("x"))
    with pytest.raises(error) as refused:
        on_app(world.client, lambda db: consume_ticket(db, ticket, now=expires_at.replace(microsecond=0) + _delta()))
    assert getattr(refused.value, "code", None) == "unauthorized"


def _delta() -> Any:
    from datetime import timedelta

    return timedelta(seconds=5)


def test_token_signed_with_another_key_or_expired_is_refused(world: World) -> None:
    import jwt

    forged = jwt.encode({"sub": "alice", "exp": 4_000_000_000}, "another-key-" * 4, algorithm="HS256")
    response = world.client.get("/api/v1/sessions", headers={"Authorization": f"Bearer {forged}"})
    assert response.status_code == 401
    none_alg = jwt.encode({"sub": "alice", "exp": 4_000_000_000}, key="", algorithm="none")
    assert world.client.get("/api/v1/sessions", headers={"Authorization": f"Bearer {none_alg}"}).status_code == 401
    settings = world.client.app.state.settings  # type: ignore[attr-defined]
    expired = jwt.encode({"sub": "alice", "exp": 1_000}, settings.jwt_secret.get_secret_value(), algorithm="HS256")
    assert world.client.get("/api/v1/sessions", headers={"Authorization": f"Bearer {expired}"}).status_code == 401


def test_non_loopback_bind_without_auth_is_refused(tmp_path: Any) -> None:
    from fleet_rlm.cli.main import build_fleet_rlm_app

    env = {"FLEET_DATA_DIR": str(tmp_path / "data"), "FLEET_AUTH_MODE": "none"}
    result = CliRunner().invoke(build_fleet_rlm_app(), ["serve-api", "--host", "0.0.0.0", "--port", "1"], env=env)
    assert result.exit_code != 0
    assert "insecure_bind" in result.output
