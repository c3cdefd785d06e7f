"""One running game plus everything the UI derives from its events.

The engine only emits events; here they become log lines, sounds, board
animations and teaching cards.
"""
from __future__ import annotations

from typing import Protocol

from engine import PIECES, Game, Input, Kind
from engine import events as ev
from engine import rules as R
from engine.replay import Tape
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
MIXED_TOAST = "MIXED RUN: NO BEST SCORE"


class SoundLike(Protocol):
    def play_events(self, events: list[ev.Event]) -> object: ...


def is_noise(event: ev.Event) -> bool:
    """Piece movement is too frequent to log."""
    return isinstance(event, (ev.Moved, ev.Rotated))


class GameSession:
    """A Game with its console log, animations, sounds and cards."""

    def __init__(self, game: Game, *, sound: SoundLike | None = None,
                 cards: CardDeck | None = None, tape: Tape | None = None) -> None:
        self.game = game
        self.tape = tape  # every step given to the game, written down for its replay
        self.log = LogConsole(LOG)
        self.effects = Effects()
        self.sound = sound
        self.cards = cards
        self.kinds: dict[int, Kind] = {}
        self.events_seen = 0
        self.board_version = 0  # bumped whenever held cells change, for the view's cache
        # Where the pages of the last paged request live now (None: freed by a later clear).
        self.table_pages: tuple[tuple[int, Cell | None], ...] = ()
        self._was_mixed = game.mixed
        self.log.add(0.0, "INFO", f"[BOOT] KV-cache allocator online: {R.VISIBLE_CELLS} blocks of "
                                  f"{R.TOKENS_PER_BLOCK} tokens, mode {game.allocator.label}")
        a = game.active
        if a is not None:
            self.kinds[a.request_id] = a.kind

    # ------------------------------------------------------------------ driving
    def step(self, dt_ms: float, inputs: list[Input] | tuple[Input, ...] = ()) -> list[ev.Event]:
        """One fixed step: inputs, then time, then the UI side of every event."""
        tape = self.tape
        if tape is not None:
            tape.record(dt_ms, tuple(inputs))
        events = self.game.update(dt_ms, inputs)
        self.effects.advance(dt_ms)
        if self.cards is not None:
            self.cards.update(dt_ms)
        self.consume(events)
        return events

    def consume(self, events: list[ev.Event]) -> None:
        for e in events:
            self.events_seen += 1
            if isinstance(e, (ev.Locked, ev.PageSplit, ev.LinesCleared, ev.Reserved, ev.Released,
                              ev.Oom, ev.Victory)):
                self.board_version += 1
            if isinstance(e, ev.Spawned):
                self.kinds[e.request_id] = e.kind
                if len(self.kinds) > 400:
                    live = set(self.game.requests)
                    self.kinds = {k: v for k, v in self.kinds.items() if k in live}
            elif isinstance(e, ev.Locked):
                if not e.result.lines:
                    self.effects.landings.append(Landing(list(e.result.cells)))
            elif isinstance(e, ev.PageSplit):
                self._start_cascade(e)
                if e.auto:
                    self.toast("PAGED ON DEMAND", (255, 46, 170))
            elif isinstance(e, ev.LinesCleared):
                self._start_clear(e)
                if e.count >= 2:
                    self.toast(f"{e.count} ROWS FREED  +{e.tokens} tok", (60, 240, 150))
                self._follow_table(e.table)
            elif isinstance(e, ev.ModeSwitched) and self.game.mixed and not self._was_mixed:
                self._was_mixed = True
                self.toast(MIXED_TOAST, (255, 190, 40), 2000.0)
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
                if isinstance(e, ev.LinesCleared):
                    self.cards.follow(e.rows)
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

    def _start_cascade(self, split: ev.PageSplit) -> None:
        table = split.block_table
        origin = split.origin
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

    def _follow_table(self, table: ev.BlockTable | None) -> None:
        """The engine keeps the block table on its pages through later clears: show that."""
        if table is None:
            return
        self.table_pages = tuple(table.resident)
        hl = self.effects.highlight
        if hl is not None:
            hl.cells = [(page, cell) for page, cell in self.table_pages if cell is not None]

    def _start_clear(self, cleared: ev.LinesCleared) -> None:
        cells: dict[int, list[Colour | None]] = {}
        for y, owners in zip(cleared.rows, cleared.owners):
            cells[y] = [self.colour_of(rid) if rid else None for rid in owners]
        self.effects.clears.append(RowClear(list(cleared.rows), cells))
