"""What a contiguous request reserves for its maximum length: the one rule, used by the game
and by the bot's look-ahead.

A placed request also holds up to rules.RESERVE_BLOCKS free visible blocks directly above its
columns, lowest column top first (left first on a tie): the room its output may still need, one
unbroken range with the blocks it already holds. (Lowest first keeps the stack playable: a
reservation on the highest column made a contiguous game about a fifth shorter in bot play.)
Boards are given as row bitmasks.
"""

from __future__ import annotations

from collections.abc import Iterable

from .rules import HIDDEN, RESERVE_BLOCKS

Cell = tuple[int, int]


def reservation_cells(masks: list[int], cells: Iterable[Cell], limit: int = RESERVE_BLOCKS) -> list[Cell]:
    tops: dict[int, int] = {}
    for x, y in cells:
        if x not in tops or y < tops[x]:
            tops[x] = y
    out: list[Cell] = []
    for x, top in sorted(tops.items(), key=lambda item: (-item[1], item[0])):
        if len(out) >= limit:
            break
        y = top - 1
        if y >= HIDDEN and not masks[y] >> x & 1:
            out.append((x, y))
    return out
