"""Who holds each block of the board and how full it is: reads of the serving engine's state.

The view draws every held block each decode step, and a click on a block shows the table of a
request that holds it; both ask here. Nothing here changes a run.
"""

from __future__ import annotations

from collections.abc import Iterator

from . import rules as R
from .board import Cell
from .request import Request
from .serving import Serving


def fills(serving: Serving) -> Iterator[tuple[Cell, int, int]]:
    """(cell, owner, tokens in it) for every block the running requests hold, each once: a
    request's own blocks as full as its tokens reach (Serving.cell_tokens, in one pass), a shared
    prefix's block full, under the prefix's owner id."""
    grid = serving.board.grid
    size = R.TOKENS_PER_BLOCK
    shared: set[Cell] = set()
    for req in serving.running.values():
        tokens = serving.tokens_of(req)
        rid = req.id
        for page, cell in enumerate(req.blocks):
            owner = grid[cell[1]][cell[0]]
            if owner == rid:
                n = tokens - page * size
                yield cell, rid, size if n > size else n if n > 0 else 0
            elif cell not in shared:
                shared.add(cell)
                yield cell, owner, size


def drafts(serving: Serving) -> Iterator[tuple[Cell, int, int, int]]:
    """(cell, owner, first slot, slots) of the token slots each decoding request's drafts take
    in its own blocks this step (speculative decoding): the k tokens after its last, as far as
    its output and its blocks go."""
    k = serving.spec_k
    if not k:
        return
    grid = serving.board.grid
    size = R.TOKENS_PER_BLOCK
    for req in serving.running.values():
        if req.static or req.prefill_left:
            continue
        tokens = serving.tokens_of(req)
        end = min(tokens + k, req.prompt + req.output, len(req.blocks) * size)
        slot = tokens
        while slot < end:
            page, first = divmod(slot, size)
            n = min(size - first, end - slot)
            cell = req.blocks[page]
            if grid[cell[1]][cell[0]] == req.id:
                yield cell, req.id, first, n
            slot += n


def pending(serving: Serving) -> Iterator[tuple[Cell, int]]:
    """(cell, request) for each block a request being prefilled in chunks is still to take at its
    placement, while that block is free: where its prompt's next chunks will land (if a block
    there is taken meanwhile, the chunk lands anywhere free)."""
    prefill = serving.prefill
    if prefill is None:
        return
    masks = serving.board.masks
    for req in prefill.queue:
        still = R.blocks_for(req.context) - len(req.blocks)
        for x, y in req.preferred:
            if still <= 0:
                break
            if not masks[y] >> x & 1:
                yield (x, y), req.id
                still -= 1


def holder(serving: Serving, cell: Cell) -> Request | None:
    """The running request whose block table has `cell`: its owner, or for a shared prefix's
    block the oldest of those that map it; None when free."""
    found = serving.cell_tokens(cell)
    if found is not None:
        return found[0]
    return min((r for r in serving.running.values() if cell in r.blocks), key=lambda r: r.order, default=None)
