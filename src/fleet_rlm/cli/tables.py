"""Every CLI table, readable at any width: a table when it fits the terminal, else (and always when piped) a
list with one record per block (its first column as the heading, then `name: value` lines), so no cell wraps a
few characters a line and no word is split.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

CELL_PADDING = 3  # a bordered Rich table spends a border and a space either side per column


def natural_width(columns: Sequence[str], rows: Sequence[Sequence[str]]) -> int:
    """Width of the table with no cell wrapped."""
    widths = [
        max([len(name), *(len(line) for row in rows for line in row[i].splitlines() or [""])])
        for i, name in enumerate(columns)
    ]
    return sum(w + CELL_PADDING for w in widths) + 1


def print_table(
    columns: Sequence[str],
    rows: Iterable[Sequence[Any]],
    *,
    title: str | None = None,
    console: Console | None = None,
) -> None:
    console = console or Console(highlight=False)
    cells = [[str(value) for value in row] for row in rows]
    if console.is_terminal and natural_width(columns, cells) <= console.width:
        table = Table(title=title)
        for name in columns:
            table.add_column(name, no_wrap=True)
        for row in cells:
            table.add_row(*(Text(cell) for cell in row))
        console.print(table)
        return
    print_list(columns, cells, title=title, console=console)


def print_list(
    columns: Sequence[str], rows: Sequence[Sequence[str]], *, title: str | None = None, console: Console
) -> None:
    """One block per row: the first column alone, then the others indented as `name: value`. Piped, a field is
    one line, never broken; in a terminal a long value wraps at word breaks under itself."""
    if title:
        console.print(Text(title, style="bold"), soft_wrap=not console.is_terminal)
    for row in rows:
        if not console.is_terminal:
            console.out(row[0], highlight=False)
            for name, value in zip(columns[1:], row[1:], strict=False):
                console.out(f"  {name}: {value}", highlight=False)
            continue
        console.print(Text(row[0], style="bold"))
        fields = Table.grid(padding=(0, 1))
        fields.add_column(no_wrap=True)
        fields.add_column(overflow="fold")
        for name, value in zip(columns[1:], row[1:], strict=False):
            fields.add_row(f"  {name}:", Text(value))
        console.print(fields)
