"""What optimization can do on this server right now - truthfully, without starting anything."""

from __future__ import annotations

import importlib.util

from fastapi import APIRouter
from pydantic import BaseModel, Field

from fleet_rlm.api.auth import CurrentUserDep
from fleet_rlm.api.deps import ReadDep
from fleet_rlm.optimize.modules import list_modules
from fleet_rlm.runtime.programs import MODULES
from fleet_rlm.store.repos import programs

router = APIRouter(prefix="/api/v1/optimization", tags=["optimization"])


class OptimizationStatus(BaseModel):
    gepa_available: bool = Field(description="Whether dspy.GEPA (and its gepa package) can be imported.")
    program_modules: list[str] = Field(description="Runtime modules whose instructions can be versioned.")
    registered_modules: int = Field(description="Modules the optimizer can optimize (programs, tasks, skills).")
    program_versions: int = Field(description="Program versions you can see (yours and global ones).")
    promoted_versions: int = Field(description="Modules whose promoted version (yours or global) your turns run.")
    active_runs: int = Field(description="Your queued or running optimization runs.")


def gepa_available() -> bool:
    if importlib.util.find_spec("gepa") is None:
        return False
    try:
        from dspy import GEPA  # noqa: F401
    except Exception:
        return False
    return True


@router.get("/status", operation_id="getOptimizationStatus", response_model=OptimizationStatus)
async def get_optimization_status(user: CurrentUserDep, s: ReadDep) -> OptimizationStatus:
    versions = await programs.count_program_versions(s, user_id=user.user_id)
    promoted = await programs.count_program_versions(s, user_id=user.user_id, promoted_only=True)
    active = await programs.count_optimization_runs(s, user_id=user.user_id)
    return OptimizationStatus(
        gepa_available=gepa_available(),
        program_modules=list(MODULES),
        registered_modules=len(list_modules()),
        program_versions=versions,
        promoted_versions=promoted,
        active_runs=active,
    )
