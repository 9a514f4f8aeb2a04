"""Read the bundled cards once (`<skills>/<id>/SKILL.md`): parse each front matter, validate it, sort by id."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from fleet_rlm.errors import InvalidInput

SKILLS_DIR = Path(__file__).resolve().parent
REQUIRED = ("id", "title", "description", "when_to_use")
MAX_SKILLS = 20
_ID = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")


@dataclass(frozen=True)
class SkillCard:
    id: str
    title: str
    description: str
    when_to_use: str
    body: str

    @property
    def chars(self) -> int:
        return len(self.body)


class SkillNotFound(InvalidInput):
    code = "skill_not_found"


def parse_card(text: str, *, source: str) -> SkillCard:
    """A card from `---\\nkey: value\\n---\\nbody`. Raises ValueError naming the file and the problem."""
    match = re.match(r"^---\n(.*?)\n---\n(.*)$", text, flags=re.DOTALL)
    if match is None:
        raise ValueError(f"{source}: missing the --- front matter block")
    meta: dict[str, str] = {}
    for line in match.group(1).splitlines():
        if not line.strip():
            continue
        key, sep, value = line.partition(":")
        if not sep:
            raise ValueError(f"{source}: front matter line without 'key: value': {line!r}")
        meta[key.strip()] = value.strip()
    missing = [key for key in REQUIRED if not meta.get(key)]
    if missing:
        raise ValueError(f"{source}: front matter lacks {', '.join(missing)}")
    if not _ID.match(meta["id"]):
        raise ValueError(f"{source}: id {meta['id']!r} must be lowercase letters, digits and '-'")
    body = match.group(2).strip()
    if not body:
        raise ValueError(f"{source}: the card has no body")
    return SkillCard(meta["id"], meta["title"], meta["description"], meta["when_to_use"], body)


@functools.cache
def _cards() -> dict[str, SkillCard]:
    cards: dict[str, SkillCard] = {}
    for path in sorted(SKILLS_DIR.glob("*/SKILL.md")):
        source = f"{path.parent.name}/SKILL.md"
        card = parse_card(path.read_text(encoding="utf-8"), source=source)
        if card.id != path.parent.name:
            raise ValueError(f"{source}: id {card.id!r} must match its directory name")
        cards[card.id] = card
    return cards


def list_skills() -> list[SkillCard]:
    return list(_cards().values())


def get_skill(skill_id: str) -> SkillCard | None:
    return _cards().get(skill_id)


def unknown_skill(skill_id: str, *, status: int | None = None) -> SkillNotFound:
    """`skill_not_found` naming the valid ids in the message, the action and `details.valid`."""
    valid = sorted(_cards())
    known = ", ".join(valid) or "none"
    return SkillNotFound(
        f"unknown skill {skill_id!r}; valid skills: {known}",
        action=f"use one of: {known} (GET /api/v1/skills describes each)",
        details={"skill": skill_id, "valid": valid},
        status=status,
    )


def require_skills(ids: Iterable[str]) -> list[SkillCard]:
    """The cards named (duplicates dropped, order kept); SkillNotFound for an unknown id."""
    found: list[SkillCard] = []
    for skill_id in dict.fromkeys(ids):
        card = get_skill(skill_id)
        if card is None:
            raise unknown_skill(skill_id)
        found.append(card)
    return found


def skill_instructions(ids: Iterable[str]) -> str:
    """The text appended to a turn's task instructions for the selected skills ("" when none)."""
    cards = require_skills(ids)
    if not cards:
        return ""
    parts = ["Skills selected for this turn (apply them where they fit the task):"]
    parts += [f"## Skill: {card.title}\n{card.body}" for card in cards]
    return "\n\n".join(parts)
