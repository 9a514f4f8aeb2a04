"""The declarative base with its own metadata and field helpers, so every table is declared the same way.

A private registry keeps our tables out of `SQLModel.metadata` (other code in the process may use SQLModel
too) and carries a naming convention, which Alembic needs to drop or alter constraints by name, notably in
SQLite batch mode.
"""

from __future__ import annotations

from typing import Any, Literal

import sqlalchemy as sa
from sqlalchemy.orm import registry
from sqlmodel import Field, SQLModel

from fleet_rlm.store.types import ID, UTCDateTime, json_type, new_id, utcnow

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

metadata = sa.MetaData(naming_convention=NAMING_CONVENTION)


class StoreModel(SQLModel, registry=registry(metadata=metadata)):
    """Base of every fleet-rlm table (`table=True` subclasses register on `metadata`)."""


OnDelete = Literal["CASCADE", "SET NULL", "RESTRICT"]


def id_field() -> Any:
    """Primary key: uuid4 hex generated in Python."""
    return Field(default_factory=new_id, primary_key=True, sa_type=ID)


def fk_field(target: str, *, ondelete: OnDelete = "CASCADE", nullable: bool = False, index: bool = True) -> Any:
    """A foreign key to `<table>.id`, indexed by default (every FK here is also a lookup path)."""
    if nullable:
        return Field(default=None, foreign_key=target, ondelete=ondelete, nullable=True, index=index, sa_type=ID)
    return Field(foreign_key=target, ondelete=ondelete, nullable=False, index=index, sa_type=ID)


def ref_field(*, index: bool = False) -> Any:
    """An id pointing at another row without a constraint (used to break FK cycles such as turn<->run)."""
    return Field(default=None, nullable=True, index=index, sa_type=ID)


def created_field() -> Any:
    return Field(default_factory=utcnow, nullable=False, sa_type=UTCDateTime())


def updated_field() -> Any:
    return Field(default_factory=utcnow, nullable=False, sa_type=UTCDateTime(), sa_column_kwargs={"onupdate": utcnow})


def time_field(*, index: bool = False) -> Any:
    """An optional moment (started, finished, heartbeat...)."""
    return Field(default=None, nullable=True, index=index, sa_type=UTCDateTime())


def str_field(length: int, *, default: Any = ..., nullable: bool = False, index: bool = False) -> Any:
    if default is ...:
        return Field(nullable=nullable, index=index, sa_type=sa.String(length))
    return Field(default=default, nullable=nullable, index=index, sa_type=sa.String(length))


def text_field(*, default: Any = None, nullable: bool = True) -> Any:
    return Field(default=default, nullable=nullable, sa_type=sa.Text())


def json_field(*, nullable: bool = False, factory: Any = dict, server_default: str | None = None) -> Any:
    """JSON column; non-null ones default to an empty dict (or `factory()`). `server_default` (SQL text) is for
    columns a migration added to existing rows with one, so a schema created from the models matches."""
    if nullable:
        return Field(default=None, nullable=True, sa_type=json_type(nullable=True))
    kwargs = {"server_default": sa.text(server_default)} if server_default is not None else {}
    return Field(default_factory=factory, nullable=False, sa_type=json_type(), sa_column_kwargs=kwargs)


def int_field(*, default: int | None = 0, nullable: bool = False, big: bool = False) -> Any:
    return Field(default=default, nullable=nullable, sa_type=sa.BigInteger() if big else sa.Integer())


def in_check(column: str, values: tuple[str, ...], *, name: str) -> sa.CheckConstraint:
    """A named CHECK that `column` is one of `values` (enum-like strings stay portable and migratable)."""
    quoted = ", ".join(f"'{v}'" for v in values)
    return sa.CheckConstraint(f"{column} IN ({quoted})", name=name)
