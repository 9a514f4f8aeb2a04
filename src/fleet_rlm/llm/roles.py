"""The LM roles a turn uses, and which role stands in when one has no model of its own.

root runs the main program; sub answers llm_query/llm_query_batched; delegate runs child RLMs (rlm_query);
router picks the execution mode; reflection is GEPA's proposer. Only root must be configured: every other
role falls back along FALLBACK until it reaches one that is.
"""

from __future__ import annotations

from typing import Literal, get_args

Role = Literal["root", "sub", "delegate", "router", "reflection"]

ROLES: tuple[Role, ...] = get_args(Role)
"""Every role, in resolution order (a role's fallback always comes before it)."""

FALLBACK: dict[Role, Role] = {"sub": "root", "delegate": "sub", "router": "sub", "reflection": "root"}
"""Role -> the role whose profile it uses when it has none of its own."""


def fallback_chain(role: Role) -> list[Role]:
    """`role` followed by the roles it falls back to, ending at root."""
    chain: list[Role] = [role]
    while chain[-1] in FALLBACK:
        chain.append(FALLBACK[chain[-1]])
    return chain


def parse_role(value: str) -> Role:
    """Validate a role name from user input (CLI flag, API body)."""
    if value not in ROLES:
        raise ValueError(f"unknown LM role {value!r}; roles are: {', '.join(ROLES)}")
    return value  # type: ignore[return-value]
