"""Skill cards: the bundled playbooks a turn can load (`skills` in the turn input)."""

from __future__ import annotations

from fastapi import APIRouter

from fleet_rlm.api.auth import CurrentUserDep
from fleet_rlm.schemas.skills import SkillList, SkillOut, SkillSummary
from fleet_rlm.skills import SkillCard, get_skill, list_skills
from fleet_rlm.skills.cards_loader import unknown_skill

router = APIRouter(prefix="/api/v1/skills", tags=["skills"])


def summary(card: SkillCard) -> SkillSummary:
    return SkillSummary(
        id=card.id, title=card.title, description=card.description, when_to_use=card.when_to_use, chars=card.chars
    )


@router.get("", operation_id="listSkills", response_model=SkillList)
async def list_skill_cards(user: CurrentUserDep) -> SkillList:
    """Every bundled skill card, by id."""
    return SkillList(items=[summary(card) for card in list_skills()])


@router.get(
    "/{skill_id}",
    operation_id="getSkill",
    response_model=SkillOut,
    responses={404: {"description": "No bundled skill with this id."}},
)
async def get_skill_card(skill_id: str, user: CurrentUserDep) -> SkillOut:
    card = get_skill(skill_id)
    if card is None:
        raise unknown_skill(skill_id, status=404)
    return SkillOut(**summary(card).model_dump(), text=card.body)
