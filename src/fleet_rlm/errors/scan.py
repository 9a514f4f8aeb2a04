"""Find the error codes the source raises, by reading its syntax tree (for the error-table test and the docs).

A code is raised where a call passes `code="..."` (or a constant naming one) - `FleetError(...)`, its subclasses and
helpers alike - or passes one first to a helper that takes the code positionally (`context_error(URL_BLOCKED,
...)`); where a class sets `code = "..."`; where an error's `.code` is reassigned; where `GuardCodes(...)` names
its codes; and in the tables that map statuses or LM failures to codes. Each raise site records its literal
`status=` and `action=` so the test can hold them to the table.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent
CODE = re.compile(r"[a-z][a-z0-9_]*")
POSITIONAL = {"context_error", "error_frame", "error_body", "mcp_error", "_error", "FrameError"}
CODE_TABLES = {"_HTTP_CODES", "ACTIONS"}
SKIPPED = ("testing", "ui")  # test fakes and the built web UI raise nothing users see


@dataclass(frozen=True)
class Site:
    code: str
    where: str
    status: ast.expr | None = None
    action: ast.expr | None = None


def _files() -> list[Path]:
    return [p for p in sorted(PACKAGE.rglob("*.py")) if p.relative_to(PACKAGE).parts[0] not in SKIPPED]


def _module(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _constants(trees: dict[Path, ast.Module]) -> dict[str, dict[str, str]]:
    """Module -> its upper-case string constants, own and imported by name."""
    own: dict[str, dict[str, str]] = defaultdict(dict)
    for path, tree in trees.items():
        for node in tree.body:
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
                for target in node.targets:
                    if isinstance(target, ast.Name) and target.id.isupper() and isinstance(node.value.value, str):
                        own[_module(path)][target.id] = node.value.value
    seen: dict[str, dict[str, str]] = {}
    for path, tree in trees.items():
        names = dict(own[_module(path)])
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.module:
                for alias in node.names:
                    value = own.get(node.module, {}).get(alias.name)
                    if value is not None:
                        names[alias.asname or alias.name] = value
        seen[_module(path)] = names
    return seen


def raised_codes() -> dict[str, list[Site]]:
    """Every code the package raises, with the places that raise it."""
    trees = {path: ast.parse(path.read_text(encoding="utf-8")) for path in _files()}
    constants = _constants(trees)
    names: dict[str, str] = {}

    def codes(node: ast.expr | None) -> list[str]:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return [node.value]
        name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
        return [names[name]] if name in names else []

    sites: dict[str, list[Site]] = defaultdict(list)
    for path, tree in trees.items():
        rel = path.relative_to(PACKAGE.parent).as_posix()
        names.clear()
        names.update(constants[_module(path)])
        for node in ast.walk(tree):
            where = f"{rel}:{getattr(node, 'lineno', 0)}"
            for code, status, action in _raises(node, codes):
                if CODE.fullmatch(code):
                    sites[code].append(Site(code, where, status, action))
    return dict(sites)


Raise = tuple[str, ast.expr | None, ast.expr | None]  # code, status, action


def _raises(node: ast.AST, codes: Callable[[ast.expr | None], list[str]]) -> list[Raise]:
    if isinstance(node, ast.Call):
        keywords = {k.arg: k.value for k in node.keywords if k.arg}
        func = ast.unparse(node.func).rsplit(".", 1)[-1]
        if func == "GuardCodes":
            return [(c, None, None) for key in ("blocked", "failed") for c in codes(keywords.get(key))]
        found = codes(keywords["code"]) if "code" in keywords else []
        if not found and func in POSITIONAL and node.args:
            found = codes(node.args[0])
        action = keywords.get("action")
        if action is None and func in POSITIONAL and len(node.args) > 2:
            action = node.args[2]
        return [(c, keywords.get("status"), action) for c in found]
    if isinstance(node, ast.ClassDef):
        out: list[Raise] = []
        for statement in node.body:
            target = getattr(statement, "target", None) or (getattr(statement, "targets", None) or [None])[0]
            named = isinstance(target, ast.Name) and (
                target.id == "code" or (node.name == "GuardCodes" and target.id in ("blocked", "failed"))
            )
            if named and isinstance(statement, ast.Assign | ast.AnnAssign):
                out += [(c, None, None) for c in codes(statement.value)]
        return out
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target = node.targets[0]
        if isinstance(target, ast.Attribute) and target.attr == "code":
            return [(c, None, None) for c in codes(node.value)]
        if isinstance(target, ast.Name) and target.id in CODE_TABLES and isinstance(node.value, ast.Dict):
            table: list[Raise] = []
            for key, value in zip(node.value.keys, node.value.values, strict=True):
                if isinstance(key, ast.Constant) and isinstance(key.value, str):
                    table.append((key.value, None, value))
                elif isinstance(value, ast.Constant) and isinstance(value.value, str):
                    table.append((value.value, None, None))
            return table
    return []
