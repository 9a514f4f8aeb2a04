"""Bundled skill cards (select them per turn with `skills: [id, ...]`)."""

from __future__ import annotations

from pydantic import BaseModel, Field


class SkillSummary(BaseModel):
    id: str
    title: str
    description: str
    when_to_use: str
    chars: int = Field(description="Length of the card's text (added to the task instructions when selected).")


class SkillOut(SkillSummary):
    text: str = Field(description="The card's Markdown body, as the runtime adds it.")


class SkillList(BaseModel):
    items: list[SkillSummary]
