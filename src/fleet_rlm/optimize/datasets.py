"""Dataset files: parse JSONL or CSV uploads, validate rows against a module's keys, split train/validation.

Validation reports every bad row (line number, what is wrong) rather than the first, so a user fixes the file
in one pass. The split is deterministic (seeded shuffle), so a run can be reproduced from its dataset.
"""

from __future__ import annotations

import csv
import io
import json
import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from fleet_rlm.errors import InvalidInput
from fleet_rlm.optimize.modules import OptimizableModule

Format = Literal["jsonl", "csv"]
MAX_ROW_ERRORS = 50


@dataclass(frozen=True)
class RowError:
    line: int
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {"line": self.line, "message": self.message}


@dataclass
class ParsedDataset:
    rows: list[dict[str, Any]] = field(default_factory=list)
    errors: list[RowError] = field(default_factory=list)


def detect_format(filename: str, text: str) -> Format:
    lower = filename.lower()
    if lower.endswith(".csv"):
        return "csv"
    if lower.endswith((".jsonl", ".ndjson", ".json")):
        return "jsonl"
    return "jsonl" if text.lstrip().startswith("{") else "csv"


def parse_rows(text: str, fmt: Format) -> ParsedDataset:
    """Rows with their 1-based line numbers' errors (JSON that does not parse, non-object lines)."""
    parsed = ParsedDataset()
    if fmt == "csv":
        reader = csv.DictReader(io.StringIO(text))
        for index, row in enumerate(reader, start=2):
            if None in row:
                parsed.errors.append(RowError(index, "more cells than header columns"))
                continue
            parsed.rows.append({key.strip(): value for key, value in row.items() if key})
        return parsed
    for index, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            parsed.errors.append(RowError(index, f"not valid JSON ({exc.msg} at column {exc.colno})"))
            continue
        if not isinstance(value, dict):
            parsed.errors.append(RowError(index, "each line must be a JSON object"))
            continue
        parsed.rows.append(value)
    return parsed


def validate_rows(module: OptimizableModule, rows: Iterable[Mapping[str, Any]]) -> list[RowError]:
    """Errors for rows missing a required key or with an empty required value (line = row number)."""
    errors: list[RowError] = []
    for number, row in enumerate(rows, start=1):
        missing = [key for key in module.required_keys if key not in row]
        empty = [key for key in module.required_keys if key in row and _blank(row[key])]
        if missing:
            errors.append(RowError(number, f"missing key(s): {', '.join(missing)}"))
        elif empty:
            errors.append(RowError(number, f"empty value for: {', '.join(empty)}"))
    return errors


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip()) or value == []


def load_dataset_text(module: OptimizableModule, text: str, *, filename: str = "data.jsonl") -> list[dict[str, Any]]:
    """Parse and validate; raises InvalidInput (code dataset_invalid) listing the row errors."""
    fmt = detect_format(filename, text)
    parsed = parse_rows(text, fmt)
    errors = parsed.errors or validate_rows(module, parsed.rows)
    if errors:
        raise dataset_invalid(module, errors, fmt)
    if not parsed.rows:
        raise InvalidInput(
            f"the dataset has no rows (module {module.name!r} needs keys {', '.join(module.required_keys)})",
            code="dataset_empty",
        )
    return parsed.rows


def dataset_invalid(module: OptimizableModule, errors: list[RowError], fmt: str) -> InvalidInput:
    unit = "line" if fmt == "jsonl" else "row"
    first = errors[0]
    return InvalidInput(
        f"{len(errors)} invalid {unit}(s) in the dataset; first: {unit} {first.line}: {first.message} "
        f"(module {module.name!r} needs keys {', '.join(module.required_keys)})",
        code="dataset_invalid",
        details={"errors": [e.to_dict() for e in errors[:MAX_ROW_ERRORS]], "total_errors": len(errors)},
    )


def split_rows(
    rows: list[dict[str, Any]], *, val_fraction: float = 0.3, seed: int = 0
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Deterministic train/validation split; both parts non-empty when there are at least 2 rows."""
    if len(rows) < 2:
        raise InvalidInput(
            f"the dataset has {len(rows)} row(s); an optimization run needs at least 2",
            code="dataset_too_small",
            action="add more examples to the dataset",
        )
    order = list(range(len(rows)))
    random.Random(seed).shuffle(order)
    n_val = min(len(rows) - 1, max(1, round(len(rows) * val_fraction)))
    val_ids = set(order[:n_val])
    train = [rows[i] for i in range(len(rows)) if i not in val_ids]
    val = [rows[i] for i in range(len(rows)) if i in val_ids]
    return train, val


def to_jsonl(rows: Iterable[Mapping[str, Any]]) -> str:
    return "".join(json.dumps(dict(row), ensure_ascii=False) + "\n" for row in rows)
