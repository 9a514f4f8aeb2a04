"""Ids as users type them: a full session id, or any unique prefix of one (as `sessions list` shows them).

The server matches whole ids only, so a prefix is resolved here from the caller's own session listing; a
prefix matching several sessions is refused with the candidates, never guessed.
"""

from __future__ import annotations

import re

from fleet_rlm.cli.client import FleetClient
from fleet_rlm.errors import FleetError, InvalidInput, NotFound

FULL_ID = re.compile(r"^[0-9a-f]{32}$")
PAGE = 200
SHOWN = 5
LIST_HINT = "list them with `fleet-rlm sessions list` (or /sessions in the chat)"


def resolve_session_id(client: FleetClient, text: str) -> str:
    """The one session id `text` names (a whole id, or a unique prefix, case and dashes ignored)."""
    prefix = text.strip().lower().replace("-", "")
    if not prefix:
        raise InvalidInput("the session id is empty", action=LIST_HINT)
    if FULL_ID.match(prefix):
        return prefix
    matches: list[dict[str, object]] = []
    offset = 0
    while True:
        page = client.list_sessions(limit=PAGE, offset=offset, generated=True)
        items = page.get("items") or []
        matches += [item for item in items if str(item["id"]).startswith(prefix)]
        offset += len(items)
        if not items or offset >= int(page.get("total") or 0):
            break
    if not matches:
        raise NotFound(f"no session id starts with {text.strip()!r}", action=LIST_HINT)
    if len(matches) > 1:
        shown = ", ".join(f"{item['id']} ({item.get('title') or 'untitled'})" for item in matches[:SHOWN])
        more = f" and {len(matches) - SHOWN} more" if len(matches) > SHOWN else ""
        raise FleetError(
            f"{text.strip()!r} matches {len(matches)} sessions: {shown}{more}",
            code="ambiguous_id",
            status=409,
            action="type more characters of the id",
        )
    return str(matches[0]["id"])
