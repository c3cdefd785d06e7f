"""Super Rotation System wall kicks.

The tables are the standard SRS offsets, written here with y pointing down (the published
tables use y up, so every y is negated). Each list starts with (0, 0): the plain rotation.
"""

from __future__ import annotations

from .pieces import Kind

Kick = tuple[int, int]

# (from_state, to_state) -> offsets tried in order.  States: 0, 1 = R, 2, 3 = L.
JLSTZ_KICKS: dict[tuple[int, int], tuple[Kick, ...]] = {
    (0, 1): ((0, 0), (-1, 0), (-1, -1), (0, 2), (-1, 2)),
    (1, 0): ((0, 0), (1, 0), (1, 1), (0, -2), (1, -2)),
    (1, 2): ((0, 0), (1, 0), (1, 1), (0, -2), (1, -2)),
    (2, 1): ((0, 0), (-1, 0), (-1, -1), (0, 2), (-1, 2)),
    (2, 3): ((0, 0), (1, 0), (1, -1), (0, 2), (1, 2)),
    (3, 2): ((0, 0), (-1, 0), (-1, 1), (0, -2), (-1, -2)),
    (3, 0): ((0, 0), (-1, 0), (-1, 1), (0, -2), (-1, -2)),
    (0, 3): ((0, 0), (1, 0), (1, -1), (0, 2), (1, 2)),
}

I_KICKS: dict[tuple[int, int], tuple[Kick, ...]] = {
    (0, 1): ((0, 0), (-2, 0), (1, 0), (-2, 1), (1, -2)),
    (1, 0): ((0, 0), (2, 0), (-1, 0), (2, -1), (-1, 2)),
    (1, 2): ((0, 0), (-1, 0), (2, 0), (-1, -2), (2, 1)),
    (2, 1): ((0, 0), (1, 0), (-2, 0), (1, 2), (-2, -1)),
    (2, 3): ((0, 0), (2, 0), (-1, 0), (2, -1), (-1, 2)),
    (3, 2): ((0, 0), (-2, 0), (1, 0), (-2, 1), (1, -2)),
    (3, 0): ((0, 0), (1, 0), (-2, 0), (1, 2), (-2, -1)),
    (0, 3): ((0, 0), (-1, 0), (2, 0), (-1, -2), (2, 1)),
}

O_KICKS: tuple[Kick, ...] = ((0, 0),)


def kicks(kind: Kind, from_state: int, to_state: int) -> tuple[Kick, ...]:
    """Offsets to try when turning `kind` from one state to the next."""
    if kind is Kind.O:
        return O_KICKS
    table = I_KICKS if kind is Kind.I else JLSTZ_KICKS
    return table[(from_state, to_state)]


# KICKS[kind][(from, to)]: the same answers, looked up once instead of per turn.
KICKS: dict[Kind, dict[tuple[int, int], tuple[Kick, ...]]] = {
    k: {pair: kicks(k, *pair) for pair in JLSTZ_KICKS} for k in Kind
}
