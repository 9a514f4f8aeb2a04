"""Bundled skill cards: short, reusable playbooks a user can select per turn (TurnInput.skills).

A card is `<id>/SKILL.md` in this package: Markdown with a front matter block (id, title, description,
when_to_use). The runtime appends the selected cards' text to the task instructions, the API lists them and
the optimizer treats each as a module. Leaf module: imports only errors.

    skill_instructions(["log-triage"])  # -> "Skills selected for this turn ..." (or "" when none)
"""

from fleet_rlm.skills.cards_loader import (
    MAX_SKILLS,
    SkillCard,
    SkillNotFound,
    get_skill,
    list_skills,
    require_skills,
    skill_instructions,
)

__all__ = [
    "MAX_SKILLS",
    "SkillCard",
    "SkillNotFound",
    "get_skill",
    "list_skills",
    "require_skills",
    "skill_instructions",
]
