"""Starting a run from a given memory layout (puzzles, lessons, tests: Game.set_board): which
boards a run can hold, and the static requests that hold a layout's blocks."""

from __future__ import annotations

from . import rules as R
from .board import Board, block_at
from .kvpool import BlockPool
from .prefill import ChunkedPrefill
from .prefix_cache import BoardCache
from .request import RUNNING, Request
from .serving import Serving


def check_board(board: Board) -> None:
    """ValueError unless `board` is a layout a run can hold: HEIGHT rows of WIDTH owners (request
    ids), its masks and reservations agreeing with them."""
    grid = board.grid
    if len(grid) != R.HEIGHT or any(len(row) != R.WIDTH for row in grid):
        raise ValueError(f"a board is {R.HEIGHT} rows of {R.WIDTH} blocks")
    if len(board.masks) != R.HEIGHT or len(board.reserved) != R.HEIGHT:
        raise ValueError(f"a board has {R.HEIGHT} row masks and {R.HEIGHT} reservation masks")
    for y, row in enumerate(grid):
        bits = sum(1 << x for x, owner in enumerate(row) if owner)
        if any(not isinstance(owner, int) or owner < 0 for owner in row):
            raise ValueError(f"row {y}: owners are request ids (whole numbers from 0)")
        if board.masks[y] != bits or board.reserved[y] & ~bits:
            raise ValueError(f"row {y}: its masks disagree with its owners (write a board through "
                             "Board.place, reserve and free)")


def clear_running(s: Serving) -> None:
    """Forget every running request and free its blocks, and whatever the prefix cache held (a
    puzzle sets up a new board)."""
    for req in s.running.values():
        s.board.free(req.blocks)
        req.version += 1
        s.requests.pop(req.id, None)
    s.running.clear()
    s.reserved = s.token_base = s.static_running = s.growth = 0
    s._live_prefixes.clear()
    s.board.cache(s.board.cached_cells(), False)
    s.pool = BlockPool(R.VISIBLE_CELLS, R.TOKENS_PER_BLOCK)
    if s.cache is not None:
        s.cache = BoardCache(s.board, s.pool)
    if s.prefill is not None:  # no prompt is half prefilled any more
        for req in s.prefill.queue:
            req.prefill_left = 0
        s.prefill = ChunkedPrefill(s, s.prefill.budget)


def hold_static(s: Serving, req: Request) -> None:
    """Count `req`, already on the board, as running: it holds its blocks full of tokens and
    never decodes, grows or finishes."""
    req.static = True
    req.state = RUNNING
    s.requests[req.id] = req
    s.running[req.id] = req
    s.static_running += 1
    s.token_base += req.context
    for cell in req.blocks:
        if cell[1] >= R.HIDDEN:  # a layout may block the entry above VRAM: not memory
            s.pool.take(block_at(cell))
    s.reserved += req.reserved
