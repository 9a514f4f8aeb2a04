"""Optimization datasets (rows inline as JSON); the rated runs they are built from are in `feedback`."""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col, select

from fleet_rlm.store.models import Dataset


async def create_dataset(
    session: AsyncSession, *, user_id: str, module: str, name: str, rows: list[dict[str, Any]]
) -> Dataset:
    """Insert a dataset; the (user, module, name) uniqueness is the caller's to check (see get_dataset_by_name)."""
    row = Dataset(user_id=user_id, module=module, name=name, rows=rows, row_count=len(rows))
    session.add(row)
    await session.flush()
    return row


async def get_dataset(session: AsyncSession, *, dataset_id: str, user_id: str) -> Dataset | None:
    result = await session.execute(
        select(Dataset).where(col(Dataset.id) == dataset_id, col(Dataset.user_id) == user_id)
    )
    return result.scalars().first()


async def get_dataset_by_name(session: AsyncSession, *, user_id: str, module: str, name: str) -> Dataset | None:
    result = await session.execute(
        select(Dataset).where(col(Dataset.user_id) == user_id, col(Dataset.module) == module, col(Dataset.name) == name)
    )
    return result.scalars().first()


async def list_datasets(session: AsyncSession, *, user_id: str, module: str | None = None) -> list[Dataset]:
    """Newest first."""
    stmt = select(Dataset).where(col(Dataset.user_id) == user_id)
    if module is not None:
        stmt = stmt.where(col(Dataset.module) == module)
    result = await session.execute(stmt.order_by(col(Dataset.created_at).desc(), col(Dataset.id)))
    return list(result.scalars())


async def delete_dataset(session: AsyncSession, *, dataset_id: str, user_id: str) -> bool:
    row = await get_dataset(session, dataset_id=dataset_id, user_id=user_id)
    if row is None:
        return False
    await session.delete(row)
    await session.flush()
    return True
