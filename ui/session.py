"""One running game plus everything the UI derives from its events.

The engine only emits events; here they become log lines, sounds, board
animations and teaching cards. Nothing here writes to the game except `step` (its inputs):
which request's block table the player looks at is the session's, not the engine's.
"""
from __future__ import annotations

from typing import Callable, Protocol

from engine import PIECES, Game, Input, Kind
from engine import events as ev
from engine.outro import Moment
from engine import modes
from engine import rules as R
from engine.occupancy import holder
from engine.prefix_cache import PREFIX_OWNER
from engine.replay import Tape
from engine.workload import prefix_kind
from ui.cards import CardDeck
from ui.effects import Cascade, Effects, Fade, Highlight, Landing, Toast
from ui.i18n import DEFAULT, Catalogue, Msg, catalogue
from ui.i18n.game_text import event_message
from ui.layout import LOG
from ui.log_console import LogConsole

Cell = tuple[int, int]
Colour = tuple[int, int, int]

CRASH_SHAKE_MS = 450.0
# An arrival is logged only once the queue is this long (every arrival would flood the log).
ARRIVAL_LOG_QUEUE = 2  # an arrival is logged once the queue is 1/ARRIVAL_LOG_QUEUE full
DEADLINE_CARD = 0.6  # share of the deadline a request has waited when its card appears

# Warnings a player must notice even without reading the log (a phone, say): catalogue keys.
WARNING_TOASTS: dict[str, str] = {
    "vram_high": "toast.vram_high",
    "split_refused": "toast.split_refused",
    "split_no_room": "toast.split_no_room",
}
MIXED_TOAST = "toast.mixed"
PREEMPT_COLOUR: Colour = (255, 120, 60)


class SoundLike(Protocol):
    def play_events(self, events: list[ev.Event]) -> object: ...


def is_noise(event: ev.Event) -> bool:
    """Piece movement is too frequent to log."""
    return isinstance(event, (ev.Moved, ev.Rotated))


# Events after which the board holds other blocks than before.
BOARD_EVENTS = (ev.Locked, ev.PageSplit, ev.Admitted, ev.Grew, ev.Finished, ev.Preempted, ev.Oom,
                ev.Overloaded, ev.Victory)


class GameSession:
    """A Game with its console log, animations, sounds and cards."""

    def __init__(self, game: Game, *, sound: SoundLike | None = None,
                 cards: CardDeck | None = None, tape: Tape | None = None,
                 tr: Callable[[], Catalogue] | None = None, moment: Moment | None = None) -> None:
        self.game = game
        self.moment = moment  # read after every step (a chapter-2 run, at chapter 1's end)
        self.tape = tape  # every step given to the game, written down for its replay
        self.tr: Callable[[], Catalogue] = tr if tr is not None else (lambda: catalogue(DEFAULT))
        self.log = LogConsole(LOG)
        self.effects = Effects()
        self.sound = sound
        self.cards = cards
        self.kinds: dict[int, Kind] = {}
        self.events_seen = 0
        self.board_version = 0  # bumped whenever held cells change, for the view's cache
        self.pinned: int | None = None  # the request whose block table the player picked
        self._was_mixed = game.mixed
        # The allocator events are logged under: a sealed hole is external fragmentation only
        # for an allocator that has it (paged never says so).
        self._fragments = modes.get(game.mode).allocator.external_fragmentation
        self.log.add(0.0, "INFO", Msg.of("log.boot", blocks=R.VISIBLE_CELLS, tokens=R.TOKENS_PER_BLOCK,
                                         mode=Msg.of(f"mode.{game.mode}.label")))
        a = game.active
        if a is not None:
            self.kinds[a.request_id] = a.kind

    # ------------------------------------------------------------------ reading
    @property
    def focus_id(self) -> int | None:
        """The request whose block table the panel shows: the one the player picked while it
        runs, else the engine's focus (the last admitted) while it runs, else the newest running."""
        running = self.game.serving.running
        for rid in (self.pinned, self.game.focus):
            if rid is not None and rid in running:
                return rid
        newest = max(running.values(), key=lambda r: r.order, default=None)
        return newest.id if newest is not None else None

    def focus_table(self) -> ev.BlockTable | None:
        """The block table the panel shows now (read from the engine every time): the picked
        request's while it runs, else the engine's focus, else the newest running request's."""
        rid = self.focus_id
        return self.game.table_of(rid) if rid is not None else None

    def pick(self, cell: Cell | None) -> int | None:
        """Show the block table of the request holding board cell `cell` (x, board row); a free
        cell (or None) goes back to the last admitted. Reads the engine, changes nothing there."""
        found = holder(self.game.serving, cell) if cell is not None else None
        self.pinned = found.id if found is not None else None
        return self.pinned

    # ------------------------------------------------------------------ driving
    def step(self, dt_ms: float, inputs: list[Input] | tuple[Input, ...] = ()) -> list[ev.Event]:
        """One fixed step: inputs, then time, then the UI side of every event."""
        tape = self.tape
        if tape is not None:
            tape.record(dt_ms, tuple(inputs))
        events = self.game.update(dt_ms, inputs)
        if self.moment is not None:
            self.moment.read(self.game)
        self.effects.advance(dt_ms)
        if self.cards is not None:
            self.cards.update(dt_ms)
        self.consume(events)
        if self.cards is not None and dt_ms > 0:
            self._watch_deadlines()
        return events

    def consume(self, events: list[ev.Event]) -> None:
        tr = self.tr
        for e in events:
            self.events_seen += 1
            if isinstance(e, BOARD_EVENTS):
                self.board_version += 1
            level = e.level
            if isinstance(e, (ev.Spawned, ev.Arrived)):
                self.kinds[e.request_id] = e.kind
                if len(self.kinds) > 400:
                    live = set(self.game.requests)
                    self.kinds = {k: v for k, v in self.kinds.items() if k in live}
            if isinstance(e, ev.Locked):
                self.effects.landings.append(Landing(list(e.result.cells)))
                if not self._fragments:  # paged: a whole placement seals nothing off, a normal event
                    level = "INFO"
            elif isinstance(e, ev.PageSplit):
                self._start_cascade(e)
                if e.auto:
                    self.toast(tr().t("toast.paged_on_demand"), (255, 46, 170))
            elif isinstance(e, ev.Grew):
                self.effects.landings.append(Landing([e.cell]))
            elif isinstance(e, ev.Finished):
                self.effects.fades.append(Fade(list(e.cells), PIECES[e.kind].colour))
            elif isinstance(e, ev.Preempted):
                self.effects.fades.append(Fade(list(e.cells), PIECES[e.kind].colour, e.how))
                self.toast(tr().t(f"toast.preempted.{e.how}"), PREEMPT_COLOUR)
            elif isinstance(e, ev.PreemptModeSwitched):
                self.toast(tr().t(f"toast.preempt_mode.{e.mode}"), (0, 229, 255))
            elif isinstance(e, ev.ModeSwitched):
                self._fragments = modes.get(e.mode).allocator.external_fragmentation
                if self.game.mixed and not self._was_mixed:
                    self._was_mixed = True
                    self.toast(tr().t(MIXED_TOAST), (255, 190, 40), 2000.0)
            elif isinstance(e, ev.Oom):
                self.effects.shake = CRASH_SHAKE_MS
                self.toast(tr().t("toast.oom"), (255, 64, 88), 2000.0)
            elif isinstance(e, ev.Overloaded):
                self.effects.shake = CRASH_SHAKE_MS
                self.toast(tr().t("toast.overloaded"), (255, 64, 88), 2000.0)
            elif isinstance(e, ev.Victory):
                self.toast(tr().t("toast.all_served"), (60, 240, 150), 2000.0)
            elif isinstance(e, ev.LevelUp):
                self.toast(tr().t("toast.level", level=e.level_now), (0, 229, 255))
            elif isinstance(e, ev.Alert) and e.code in WARNING_TOASTS:
                self.toast(tr().t(WARNING_TOASTS[e.code]), (255, 190, 40))
            if isinstance(e, ev.Arrived):
                if e.waiting >= e.queue_max // ARRIVAL_LOG_QUEUE:
                    self.log.add(self.game.time_ms, "WARN" if e.waiting >= e.queue_max - 1 else "INFO",
                                 event_message(e))
            elif not is_noise(e):
                self.log.add(self.game.time_ms, level, event_message(e, fragments=self._fragments))
            if self.cards is not None:
                self.cards.observe(e, fragments=self._fragments)
        if self.sound is not None and events:
            self.sound.play_events(events)  # one sound per kind of event in a step

    def _watch_deadlines(self) -> None:
        """The first time a request has waited most of its deadline, its card says why it matters."""
        cards = self.cards
        assert cards is not None
        if not cards.wants("deadline"):
            return
        g = self.game
        near = DEADLINE_CARD * R.DEADLINE_MS
        for req in (g.falling, g.blocked, g.hold, *g.serving.waiting):
            if req is not None and g.wait_ms(req) >= near:
                cards.trigger("deadline")
                return

    def toast(self, text: str, colour: Colour, duration: float = 1300.0) -> None:
        """A short word over the board; a newer toast replaces an older one."""
        self.effects.toasts[:] = [Toast(text, colour, duration=duration)]

    def colour_of(self, request_id: int) -> Colour:
        if request_id >= PREFIX_OWNER:  # a shared prefix's block: its workload's colour
            return PIECES[prefix_kind(request_id - PREFIX_OWNER)].colour
        req = self.game.requests.get(request_id)
        kind = req.kind if req is not None else self.kinds.get(request_id)
        if kind is None:
            return (200, 200, 200)
        return PIECES[kind].colour

    def _start_cascade(self, split: ev.PageSplit) -> None:
        """A split's pages travel from where the piece was to their blocks, then stay outlined."""
        table = split.block_table
        origin = split.origin
        colour = PIECES[table.kind].colour
        pages = []
        for page, cell in table.entries:
            start = origin[page] if page < len(origin) else (cell[0], 0)
            pages.append((page, start, cell, colour))
        self.effects.cascades.append(Cascade(pages))
        self.effects.highlight = Highlight(list(table.entries))
