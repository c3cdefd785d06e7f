"""VRAM Tetris engine: the pure-Python game core (standard library only)."""

from . import events, memory, modes, paging
from .board import Board
from .events import BlockTable, LockResult
from .game import MODES, Active, Game, Input
from .request import Request
from .pieces import KINDS, PIECES, Kind, PieceDef
from .reports import RunReport
from .telemetry import Telemetry

__all__ = [
    "events", "memory", "modes", "paging", "Board", "BlockTable", "LockResult", "MODES", "Active", "Game", "Input", "Request",
    "KINDS", "PIECES", "Kind", "PieceDef", "RunReport", "Telemetry",
]
