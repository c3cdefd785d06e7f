"""Teaching cards: the first time a mechanic happens, say what it means in a real serving engine.

Cards never block play; each is shown once (remembered in Settings.seen_cards)
and all of them can be switched off (Settings.cards_enabled). A card about particular blocks
points at them: the board outlines `CardDeck.cells` while the card is up (memory never moves,
so the cells stay right for as long as the card shows).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import pygame

from engine import events as ev
from ui import theme
from ui.i18n import DEFAULT, Catalogue, catalogue
from engine import rules as R
from ui.keys import BUDGET_KEYS, CARDS_KEY, PICK_KEY, PREEMPT_KEY, SPLIT_KEY
from ui.layout import CARD, RectT
from ui.text import TextCache, fit, wrap


@dataclass(frozen=True)
class Card:
    id: str
    title: str
    body: str


CARD_IDS: tuple[str, ...] = ("finished", "reservation", "reservation_wasted", "sealed_hole", "paged_grow",
                             "preempted", "queue_filling", "deadline", "vram_high", "split", "paged_on_demand",
                             "split_refused", "prefix_hit", "chunked_prefill", "picked")


def card_in(tr: Catalogue, card_id: str, queue_max: int = R.QUEUE_MAX) -> Card:
    """A card's words in `tr`'s language (catalogue keys card.<id>.title and card.<id>.body), for
    a run whose queue holds `queue_max`."""
    return Card(card_id, tr.t(f"card.{card_id}.title"),
                tr.t(f"card.{card_id}.body", key=PREEMPT_KEY, split=SPLIT_KEY, max=queue_max,
                     deadline=round(R.DEADLINE_MS / 1000), pick_key=PICK_KEY, budget_keys=BUDGET_KEYS))


CARDS: dict[str, Card] = {card_id: card_in(catalogue(DEFAULT), card_id) for card_id in CARD_IDS}

Cell = tuple[int, int]

SHOW_MS = 9000.0
FADE_MS = 400.0
MIN_SHOW_MS = 4500.0  # a card with another one waiting behind it stays at least this long
PAD = 8
CLICK_HINT = "card.dismiss_click"  # catalogue keys: how a card is put away on a desktop ...
TAP_HINT = "card.dismiss_tap"  # ... and on a phone (the hint then shares the title's line)
QUEUE_CARD = 2  # the queue's card appears when this few more requests would overload it


def card_for(event: ev.Event, fragments: bool = True) -> tuple[str, tuple[Cell, ...]] | None:
    """Which teaching card an engine event triggers, if any, and the board cells it is about.

    `fragments`: the allocator the event happened under can seal free blocks off (contiguous);
    under one that cannot (paged) no card speaks of external fragmentation.
    """
    if isinstance(event, ev.Locked) and event.result.holes_sealed > 0 and fragments:
        return "sealed_hole", event.result.sealed_cells
    if isinstance(event, ev.Admitted) and event.table.reserved:
        return "reservation", tuple(c for _, c in event.table.entries[-event.table.reserved:])
    if isinstance(event, ev.Admitted) and event.cached:
        return "prefix_hit", tuple(c for _, c in event.table.entries[:event.cached])
    if isinstance(event, ev.Admitted) and event.chunked and not event.resumed:
        return "chunked_prefill", tuple(c for _, c in event.table.entries)
    if isinstance(event, ev.Picked) and event.place > 0:
        return "picked", ()
    if isinstance(event, ev.Finished):
        if event.wasted:
            return "reservation_wasted", event.cells[-event.wasted:]
        return "finished", event.cells
    if isinstance(event, ev.Grew):
        return "paged_grow", (event.cell,)
    if isinstance(event, ev.Preempted):
        return "preempted", event.cells
    if isinstance(event, ev.Arrived) and event.waiting >= event.queue_max - QUEUE_CARD:
        return "queue_filling", ()
    if isinstance(event, ev.PageSplit):
        cells = tuple(c for _, c in event.block_table.entries)
        return ("paged_on_demand" if event.auto else "split"), cells
    if isinstance(event, ev.Alert) and event.code in ("vram_high", "split_refused"):
        return event.code, ()
    return None


class CardDeck:
    """Decides when a card appears, shows it for a while and remembers it was seen.

    `enabled` and `seen` are read through callables so the deck always follows
    the current Settings; `mark_seen` persists a card once it is shown. Two firsts in one
    moment (a request that finishes as another is preempted) queue up: the second card waits until the first
    has been readable for MIN_SHOW_MS, so no card is marked seen without being shown.
    """

    def __init__(self, enabled: Callable[[], bool], seen: Callable[[], set[str]],
                 mark_seen: Callable[[str], None], rect: RectT = CARD,
                 sizes: tuple[int, int] = (theme.SMALL, theme.BODY), dismiss_hint: str = CLICK_HINT,
                 tr: Callable[[], Catalogue] | None = None) -> None:
        self._tr: Callable[[], Catalogue] = tr if tr is not None else (lambda: catalogue(DEFAULT))
        self._enabled = enabled
        self._seen = seen
        self._mark_seen = mark_seen
        self.rect = rect
        self.sizes = sizes  # (body, title) font sizes
        self.dismiss_hint = dismiss_hint
        self.current: Card | None = None
        self.queue_max = R.QUEUE_MAX  # the run's queue (a chapter's may be longer): cards say it
        self.cells: tuple[Cell, ...] = ()  # board cells the current card is about
        self.age = 0.0
        self.waiting: list[Card] = []
        self._cells_for: dict[str, tuple[Cell, ...]] = {}
        self._surfaces: dict[tuple[str, str, int], pygame.Surface] = {}  # (language, card id, queue)
        self._plate: pygame.Surface | None = None

    def observe(self, event: ev.Event, fragments: bool = True) -> None:
        found = card_for(event, fragments)
        if found is not None:
            self.trigger(*found)

    def wants(self, card_id: str) -> bool:
        """The card would be shown if it were triggered now (on, and not seen yet)."""
        return self._enabled() and card_id not in self._seen()

    def trigger(self, card_id: str, cells: tuple[Cell, ...] = ()) -> None:
        """The first time something happens: show its card (or queue it behind the current one)."""
        if not self.wants(card_id):
            return
        card = CARDS[card_id]
        self._cells_for[card_id] = cells
        if card is self.current or card in self.waiting:
            return
        if self.current is None:
            self._present(card)
        else:
            self.waiting.append(card)

    def _present(self, card: Card) -> None:
        self.current = card
        self.cells = self._cells_for.pop(card.id, ())
        self.age = 0.0
        self._mark_seen(card.id)

    def show(self, card_id: str, cells: tuple[Cell, ...] = ()) -> None:
        """Show a card regardless of history (screenshots, benchmarks)."""
        self.current = CARDS[card_id]
        self.cells = cells
        self.age = 0.0

    def update(self, dt: float) -> None:
        if not self._enabled():
            self.current = None
            self.cells = ()
            self.waiting.clear()
            return
        if self.current is None:
            return
        self.age += dt
        if self.waiting and MIN_SHOW_MS <= self.age < SHOW_MS - FADE_MS:
            self.age = SHOW_MS - FADE_MS  # someone is waiting: start fading out now
        if self.age >= SHOW_MS:
            self._next()

    def dismiss(self) -> None:
        self._next()

    def _next(self) -> None:
        self.current = None
        self.cells = ()
        if self.waiting:
            self._present(self.waiting.pop(0))

    def restyle(self, rect: RectT, sizes: tuple[int, int], dismiss_hint: str) -> None:
        """Show cards in another place or type size (the layout changed)."""
        if (rect, sizes, dismiss_hint) != (self.rect, self.sizes, self.dismiss_hint):
            self.rect, self.sizes, self.dismiss_hint = rect, sizes, dismiss_hint
            self._surfaces.clear()
            self._plate = None

    def contains(self, pos: tuple[int, int]) -> bool:
        return self.current is not None and pygame.Rect(self.rect).collidepoint(pos)

    def draw(self, surface: pygame.Surface, text: TextCache) -> None:
        card = self.current
        if card is None:
            return
        tr = self._tr()
        key = (tr.code, card.id, self.queue_max)
        surf = self._surfaces.get(key)
        if surf is None:
            surf = self._surfaces[key] = self._render(card_in(tr, card.id, self.queue_max), text, tr)
        alpha = 255
        if self.age < FADE_MS:
            alpha = int(255 * self.age / FADE_MS)
        elif self.age > SHOW_MS - FADE_MS:
            alpha = int(255 * (SHOW_MS - self.age) / FADE_MS)
        if alpha < 255:
            # Hide the log lines under a fading card faster than the card fades, so the two
            # texts never show through each other at half strength.
            plate = self._plate
            if plate is None or plate.get_size() != surf.get_size():
                plate = self._plate = pygame.Surface(surf.get_size()).convert()
                plate.fill(theme.PANEL)
            plate.set_alpha(min(255, alpha * 3))
            surface.blit(plate, self.rect[:2])
        # A surface alpha of exactly 255 takes a slow blending path in SDL: switch it off instead.
        surf.set_alpha(None if alpha >= 255 else max(0, alpha))
        # Slide in from the left while fading in.
        slide = int(max(0.0, 1.0 - self.age / FADE_MS) * -30)
        surface.blit(surf, (self.rect[0] + slide, self.rect[1]))

    def _render(self, card: Card, text: TextCache, tr: Catalogue) -> pygame.Surface:
        w, h = self.rect[2], self.rect[3]
        small, body = self.sizes
        line_h = theme.font_for(card.body, small).get_linesize()
        hint = tr.t(self.dismiss_hint)
        surf = pygame.Surface((w, h)).convert()
        surf.fill((24, 20, 8))
        pygame.draw.rect(surf, theme.AMBER, surf.get_rect(), 2, border_radius=5)
        compact = self.dismiss_hint == TAP_HINT  # a phone: the hint shares the title's line
        hint_w = theme.font_for(hint, small).size(hint)[0] + 12 if compact else 0
        text.blit(surf, fit(card.title, body, w - 2 * PAD - hint_w), body, theme.AMBER, (PAD, 6))
        if compact:
            text.blit(surf, hint, small, theme.TEXT_DIM, (w - PAD, 8), "topright")
        y = 8 + theme.font_for(card.title, body).get_linesize() if compact else 28
        for line in wrap(card.body, small, w - 2 * PAD):
            text.blit(surf, line, small, theme.TEXT, (PAD, y))
            y += line_h
        if not compact:
            text.blit(surf, tr.t("card.dismiss_line", hint=hint, key=CARDS_KEY), small, theme.TEXT_DIM,
                      (w - PAD, h - 6), "bottomright")
        return surf
