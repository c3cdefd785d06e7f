"""One running game plus everything the UI derives from its events.

The engine only emits events; here they become log lines, sounds, board
animations and teaching cards.
"""
from __future__ import annotations

from typing import Protocol

from engine import PIECES, Game, Input, Kind
from engine import events as ev
from ui.cards import CardDeck
from ui.effects import Cascade, Effects, Highlight, Landing, RowClear, Toast
from ui.layout import LOG
from ui.log_console import LogConsole

Cell = tuple[int, int]
Colour = tuple[int, int, int]

CRASH_SHAKE_MS = 450.0

# Warnings a player must notice even without reading the log (a phone, say).
WARNING_TOASTS: dict[str, str] = {
    "vram_high": "VRAM > 80 %",
    "split_uncharged": "SPLIT NOT CHARGED",
    "split_refused": "PAGED MODE ONLY",
}


class SoundLike(Protocol):
    def play_events(self, events: list[ev.Event]) -> object: ...


def is_noise(event: ev.Event) -> bool:
    """Piece movement is too frequent to log."""
    return isinstance(event, (ev.Moved, ev.Rotated))


class GameSession:
    """A Game with its console log, animations, sounds and cards."""

    def __init__(self, game: Game, *, sound: SoundLike | None = None,
                 cards: CardDeck | None = None) -> None:
        self.game = game
        self.log = LogConsole(LOG)
        self.effects = Effects()
        self.sound = sound
        self.cards = cards
        self.kinds: dict[int, Kind] = {}
        self.events_seen = 0
        self.board_version = 0  # bumped whenever locked cells change, for the view's cache
        # Where the pages of the last split live now (None: freed by a later clear).
        self.table_pages: tuple[tuple[int, Cell | None], ...] = ()
        self._before_active: list[Cell] = []
        self._before_grid: list[list[int]] = []
        self.log.add(0.0, "INFO", f"[BOOT] KV-cache allocator online: 200 blocks, mode {game.mode.upper()}")
        a = game.active
        if a is not None:
            self.kinds[a.request_id] = a.kind

    # ------------------------------------------------------------------ driving
    def step(self, dt_ms: float, inputs: list[Input] | tuple[Input, ...] = ()) -> list[ev.Event]:
        """One fixed step: inputs, then time, then the UI side of every event."""
        self._snapshot()
        events = self.game.update(dt_ms, inputs)
        self.effects.advance(dt_ms)
        if self.cards is not None:
            self.cards.update(dt_ms)
        self.consume(events)
        return events

    def _snapshot(self) -> None:
        g = self.game
        self._before_active = g.active.cells() if g.active is not None else []
        self._before_grid = [row[:] for row in g.board.grid]

    def consume(self, events: list[ev.Event]) -> None:
        locked_cells: dict[Cell, int] = {}
        # A split's own row clears are already in its block table's resident cells.
        split_now = any(isinstance(e, ev.PageSplit) for e in events)
        for e in events:
            self.events_seen += 1
            if isinstance(e, (ev.Locked, ev.PageSplit, ev.LinesCleared, ev.Oom, ev.Victory)):
                self.board_version += 1
            if isinstance(e, ev.Spawned):
                self.kinds[e.request_id] = e.kind
                if len(self.kinds) > 400:
                    live = set(self.game.requests)
                    self.kinds = {k: v for k, v in self.kinds.items() if k in live}
            elif isinstance(e, ev.Locked):
                for c in e.result.cells:
                    locked_cells[c] = e.result.request_id
                if not e.result.lines:
                    self.effects.landings.append(Landing(list(e.result.cells)))
            elif isinstance(e, ev.PageSplit):
                for _, c in e.block_table.entries:
                    locked_cells[c] = e.block_table.request_id
                self._start_cascade(e.block_table)
            elif isinstance(e, ev.LinesCleared):
                self._start_clear(e.rows, locked_cells)
                if e.count >= 2:
                    self.toast(f"{e.count} ROWS FREED  +{e.tokens} tok", (60, 240, 150))
                if not split_now:
                    self._follow_clear(e.rows)
            elif isinstance(e, ev.Oom):
                self.effects.shake = CRASH_SHAKE_MS
                self.toast("CUDA OOM", (255, 64, 88), 2000.0)
            elif isinstance(e, ev.Victory):
                self.toast("ALL SERVED", (60, 240, 150), 2000.0)
            elif isinstance(e, ev.LevelUp):
                self.toast(f"LEVEL {e.level_now}", (0, 229, 255))
            elif isinstance(e, ev.Alert) and e.code in WARNING_TOASTS:
                self.toast(WARNING_TOASTS[e.code], (255, 190, 40))
            if not is_noise(e):
                self.log.add(self.game.time_ms, e.level, e.text)
            if self.cards is not None:
                self.cards.observe(e)
        if self.sound is not None and events:
            self.sound.play_events(events)  # one sound per kind of event in a step

    def toast(self, text: str, colour: Colour, duration: float = 1300.0) -> None:
        """A short word over the board; a newer toast replaces an older one."""
        self.effects.toasts[:] = [Toast(text, colour, duration=duration)]

    def colour_of(self, request_id: int) -> Colour:
        kind = self.kinds.get(request_id)
        if kind is None:
            req = self.game.requests.get(request_id)
            if req is None:
                return (200, 200, 200)
            kind = req.kind
        return PIECES[kind].colour

    def _start_cascade(self, table: ev.BlockTable) -> None:
        origin = self._before_active
        colour = PIECES[table.kind].colour
        pages = []
        resident = dict(table.resident)
        for page, cell in table.entries:
            start = origin[page] if page < len(origin) else (cell[0], 0)
            end = resident.get(page) or cell
            pages.append((page, start, end, colour))
        self.effects.cascades.append(Cascade(pages))
        self.table_pages = tuple(table.resident)
        live = [(p, c) for p, c in table.resident if c is not None]
        self.effects.highlight = Highlight(live)

    def _follow_clear(self, rows: tuple[int, ...]) -> None:
        """Keep the block table on its pages while later rows are garbage-collected."""
        def after(cell: Cell | None) -> Cell | None:
            if cell is None or cell[1] in rows:
                return None
            return cell[0], cell[1] + sum(1 for r in rows if r > cell[1])
        self.table_pages = tuple((page, after(cell)) for page, cell in self.table_pages)
        hl = self.effects.highlight
        if hl is not None:
            hl.cells = [(page, cell) for page, cell in self.table_pages if cell is not None]

    def _start_clear(self, rows: tuple[int, ...], fresh: dict[Cell, int]) -> None:
        before = self._before_grid
        cells: dict[int, list[Colour | None]] = {}
        for y in rows:
            row: list[Colour | None] = []
            for x in range(self.game.board.width):
                rid = fresh.get((x, y)) or (before[y][x] if y < len(before) else 0)
                row.append(self.colour_of(rid) if rid else None)
            cells[y] = row
        self.effects.clears.append(RowClear(list(rows), cells))
