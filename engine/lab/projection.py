"""What a memory map shows: a simulator's KV cache as one cell per block, computed without changing it.

Pure functions of the simulator's state (no pygame), so the LAB screen only paints
what these return and tests can check the picture's meaning directly. Each memory
manager (``memory``) draws its own layout as cells (``cells``); this module holds the
picture's vocabulary and the simulator-facing calls. A cell's
state is one int: which request owns it, how many of its slots hold tokens and
how many sequences point at it (ints, not tuples, so a refresh of a thousand
cells leaves nothing for the garbage collector).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .simulator import Simulator

FREE = -1  # cell state of free memory
FILL_BITS = 8  # tokens in the cell (a block holds at most 255)
REFS_BITS = 4  # sequences pointing at it, capped at 15
PREFIX_OWNER = (1 << 30) - 1  # owner of a cached shared prefix's blocks (no request owns them)

SeqId = tuple[int, int]


def cell_state(rid: int, fill: int, refs: int = 1) -> int:
    """A cell of request ``rid`` holding ``fill`` tokens, pointed at by ``refs`` sequences."""
    return (rid << (FILL_BITS + REFS_BITS)) | (min(refs, 15) << FILL_BITS) | fill


def state_owner(state: int) -> int | None:
    return None if state < 0 else state >> (FILL_BITS + REFS_BITS)


def state_fill(state: int) -> int:
    return 0 if state < 0 else state & ((1 << FILL_BITS) - 1)


def state_refs(state: int) -> int:
    return 0 if state < 0 else (state >> FILL_BITS) & ((1 << REFS_BITS) - 1)


@dataclass(frozen=True)
class MapView:
    """One memory map: ``cells`` states, the cells each request and each sequence points at."""

    cells: list[int]
    owned: dict[int, Sequence[int]]  # request -> cells any of its sequences points at
    sequences: dict[SeqId, Sequence[int]]  # sequence -> its cells, in order
    block_size: int

    def pointing_at(self, cell: int) -> list[SeqId]:
        """Every sequence whose block table (or range) contains ``cell``."""
        return [seq for seq, cells in self.sequences.items() if cell in cells]

    def outline(self, cell: int) -> list[int]:
        """The cells of every sequence pointing at ``cell``, each once."""
        seen: dict[int, None] = {}
        for seq in self.pointing_at(cell):
            for c in self.sequences[seq]:
                seen[c] = None
        return list(seen)


def project(sim: Simulator) -> MapView:
    """The simulator's memory as cells of one block each (contiguous memory cut into block-sized cells)."""
    return sim.memory_manager.cells(sim.running, sim.length)


def memory_saved(sim: Simulator) -> tuple[int, int]:
    """(blocks sharing saves right now, blocks the sequences would hold without sharing)."""
    if not sim.has_blocks:
        return 0, 0
    saved = sim.saved_blocks()
    return saved, sim.blocks_used + saved


def recent_copies(sim: Simulator, since: int) -> tuple[int, list[int]]:
    """Blocks copied on write after copy number ``since`` (that are still held), and the copy count now."""
    if not sim.has_blocks:
        return 0, []
    pool = sim.pool
    total = pool.cow_copies
    if total <= since:
        return total, []
    return total, [new for serial, _, _, new in pool.copy_log if serial > since and pool.refs[new] > 0]
