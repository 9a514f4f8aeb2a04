"""Commands that load on first use: a call imports only the module of the command it runs.

Importing every command module up front cost each CLI call ~0.15 s (the optimize client and event models, the
bench suite, rich, the settings model) before `sessions list` did anything. The root group instead holds, per
command name, where its function or sub-app lives; the module is imported when click asks for that command
(running it, or `--help`, which lists them all). Names, order and help text stay those of the table.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, MutableMapping
from typing import Any

import typer
import typer.main
from typer.core import TyperGroup

Table = dict[str, str]  # command name -> "module:attribute" (a command function or a typer.Typer sub-app)


def _click_command(name: str, target: str) -> Any:
    module_name, _, attribute = target.partition(":")
    obj = getattr(importlib.import_module(module_name), attribute)
    if isinstance(obj, typer.Typer):
        group = typer.main.get_group(obj)  # as add_typer builds it: no completion options on sub-apps
        group.name = name
        return group
    single = typer.Typer(add_completion=False)
    single.command(name)(obj)
    return typer.main.get_command(single)


class LazyCommands(MutableMapping[str, Any]):
    """`TyperGroup.commands` whose entries are built from the table the first time they are looked up."""

    def __init__(self, loaded: dict[str, Any], table: Table) -> None:
        self._loaded = dict(loaded)
        self._table = {name: target for name, target in table.items() if name not in self._loaded}
        self._names = [*self._loaded, *self._table]  # the listing order, stable while entries load

    def __getitem__(self, name: str) -> Any:
        if name not in self._loaded:
            if name not in self._table:
                raise KeyError(name)
            self._loaded[name] = _click_command(name, self._table.pop(name))
        return self._loaded[name]

    def __setitem__(self, name: str, command: Any) -> None:
        self._table.pop(name, None)
        self._loaded[name] = command
        if name not in self._names:
            self._names.append(name)

    def __delitem__(self, name: str) -> None:
        if name not in self._names:
            raise KeyError(name)
        self._names.remove(name)
        self._loaded.pop(name, None)
        self._table.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._names))

    def __len__(self) -> int:
        return len(self._names)


def lazy_group(table: Table) -> type[TyperGroup]:
    """A TyperGroup class whose commands are the eager ones Typer registered plus `table`, loaded on demand."""

    class LazyGroup(TyperGroup):
        def __init__(self, **attrs: Any) -> None:
            super().__init__(**attrs)
            self.commands = LazyCommands(dict(self.commands), table)

    return LazyGroup
