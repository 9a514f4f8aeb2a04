"""llm_profiles.extra_headers_encrypted: a profile's HTTP headers are secrets, stored encrypted like its key

Before, headers could only be set through a profile's plain `extra` options (`extra.extra` holds dspy.LM keyword
arguments: `extra_headers`, `headers`, `default_headers`), stored and returned in clear. This moves every such
value into one Fernet token of a JSON object {name: value} (what `SecretBox.seal` writes) and removes it from
`extra`. The key is the server's (FLEET_SECRET_KEY or <data_dir>/secret.key): the caller passes a key loader in
`config.attributes["secret_key"]` (the server's startup and `fleet-rlm db upgrade` do); without one the
settings are read from the environment, as `fleet-rlm db upgrade` reads them. No key is touched when no
profile has headers. The downgrade puts the values back in clear (`extra.extra.extra_headers`).

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-06 10:00:00.000000
"""

import json
from collections.abc import Callable, Sequence
from typing import Any

import sqlalchemy as sa
from alembic import context, op

revision: str = "0012"
down_revision: str | Sequence[str] | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

HEADER_KWARGS = ("default_headers", "headers", "extra_headers")  # later ones win on a name given twice

profiles = sa.table(
    "llm_profiles",
    sa.column("id", sa.String()),
    sa.column("extra", sa.JSON()),
    sa.column("extra_headers_encrypted", sa.Text()),
)


def _box() -> Any:
    from fleet_rlm.llm.secrets import SecretBox, load_or_create_key

    loader: Callable[[], bytes] | None = context.config.attributes.get("secret_key")
    if loader is None:
        from fleet_rlm.config import load_settings

        return SecretBox(load_or_create_key(load_settings()))
    return SecretBox(loader())


def _options(extra: Any) -> dict[str, Any]:
    value = json.loads(extra) if isinstance(extra, str) else extra
    return dict(value) if isinstance(value, dict) else {}


def upgrade() -> None:
    with op.batch_alter_table("llm_profiles", schema=None) as batch_op:
        batch_op.add_column(sa.Column("extra_headers_encrypted", sa.Text(), nullable=True))
    connection = op.get_bind()
    box = None
    for row_id, extra in connection.execute(sa.select(profiles.c.id, profiles.c.extra)).all():
        options = _options(extra)
        kwargs = options.get("extra")
        if not isinstance(kwargs, dict) or not any(name in kwargs for name in HEADER_KWARGS):
            continue
        kwargs = dict(kwargs)
        headers: dict[str, str] = {}
        for name in HEADER_KWARGS:
            value = kwargs.pop(name, None)
            if isinstance(value, dict):
                headers.update({str(k): str(v) for k, v in value.items() if v is not None})
        box = box or _box()
        connection.execute(
            profiles.update()
            .where(profiles.c.id == row_id)
            .values(extra={**options, "extra": kwargs}, extra_headers_encrypted=box.seal(headers))
        )


def downgrade() -> None:
    connection = op.get_bind()
    box = None
    query = sa.select(profiles.c.id, profiles.c.extra, profiles.c.extra_headers_encrypted).where(
        profiles.c.extra_headers_encrypted.is_not(None)
    )
    for row_id, extra, token in connection.execute(query).all():
        box = box or _box()
        options = _options(extra)
        kwargs = dict(options.get("extra") or {})
        kwargs["extra_headers"] = box.unseal(token)
        connection.execute(profiles.update().where(profiles.c.id == row_id).values(extra={**options, "extra": kwargs}))
    with op.batch_alter_table("llm_profiles", schema=None) as batch_op:
        batch_op.drop_column("extra_headers_encrypted")
