"""Teaching cards: the first time a mechanic happens, say what it means in a real serving engine.

Cards never block play; each is shown once (remembered in Settings.seen_cards)
and all of them can be switched off (Settings.cards_enabled). A card about particular blocks
points at them: the board outlines `CardDeck.cells` while the card is up.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import pygame

from engine import events as ev
from ui import theme
from ui.keys import CARDS_KEY
from ui.layout import CARD, RectT
from ui.text import TextCache, fit, wrap


@dataclass(frozen=True)
class Card:
    id: str
    title: str
    body: str


CARDS: dict[str, Card] = {c.id: c for c in (
    Card("reservation", "Reserved, still empty",
         "The outlined hatched block is held for this request's maximum length: reserved up "
         "front, still empty, freed only when the request finishes."),
    Card("released", "Reservation returned",
         "That request finished: the room it reserved and never filled is free again. Where a "
         "block covers it, it is now a hole."),
    Card("sealed_hole", "Sealed hole: fragmentation",
         "The outlined free cell is VRAM no contiguous request can reach: a block covers it. "
         "Only a paged allocator can use it."),
    Card("gc_row", "Full row: requests done",
         "Their KV blocks went back to the free pool. Rows drop on the board, but real VRAM "
         "never moves live blocks: freed ones are reused."),
    Card("split", "Split: PagedAttention",
         "You packed the request's pages into the outlined free blocks. Its block table maps "
         "logical pages to physical blocks, as in vLLM."),
    Card("paged_on_demand", "Paged on demand",
         "No unbroken range was free at the top, so each page got a free block wherever one was "
         "(outlined). vLLM always works this way."),
    Card("vram_high", "VRAM above 80 %",
         "Engines that reserve the maximum sequence length for every request fill VRAM "
         "early, which caps how many requests can run at once."),
    Card("split_refused", "Contiguous cannot split",
         "Without a block table a request's KV cache must sit in one unbroken range. "
         "Switch to PAGED to let requests scatter into free blocks."),
)}

Cell = tuple[int, int]

SHOW_MS = 9000.0
FADE_MS = 400.0
MIN_SHOW_MS = 4500.0  # a card with another one waiting behind it stays at least this long
PAD = 8


def card_for(event: ev.Event) -> tuple[str, tuple[Cell, ...]] | None:
    """Which teaching card an engine event triggers, if any, and the board cells it is about."""
    if isinstance(event, ev.Locked) and event.result.holes_sealed > 0:
        return "sealed_hole", event.result.sealed_cells
    if isinstance(event, ev.Reserved):
        return "reservation", event.cells
    if isinstance(event, ev.Released):
        return "released", event.cells
    if isinstance(event, ev.LinesCleared):
        return "gc_row", ()
    if isinstance(event, ev.PageSplit):
        cells = tuple(c for _, c in event.block_table.resident if c is not None)
        return ("paged_on_demand" if event.auto else "split"), cells
    if isinstance(event, ev.Alert) and event.code in ("vram_high", "split_refused"):
        return event.code, ()
    return None


class CardDeck:
    """Decides when a card appears, shows it for a while and remembers it was seen.

    `enabled` and `seen` are read through callables so the deck always follows
    the current Settings; `mark_seen` persists a card once it is shown. Two firsts in one
    moment (a split that completes a row) queue up: the second card waits until the first
    has been readable for MIN_SHOW_MS, so no card is marked seen without being shown.
    """

    def __init__(self, enabled: Callable[[], bool], seen: Callable[[], set[str]],
                 mark_seen: Callable[[str], None], rect: RectT = CARD,
                 sizes: tuple[int, int] = (theme.SMALL, theme.BODY), dismiss_hint: str = "click: dismiss") -> None:
        self._enabled = enabled
        self._seen = seen
        self._mark_seen = mark_seen
        self.rect = rect
        self.sizes = sizes  # (body, title) font sizes
        self.dismiss_hint = dismiss_hint
        self.current: Card | None = None
        self.cells: tuple[Cell, ...] = ()  # board cells the current card is about
        self.age = 0.0
        self.waiting: list[Card] = []
        self._cells_for: dict[str, tuple[Cell, ...]] = {}
        self._surfaces: dict[str, pygame.Surface] = {}
        self._plate: pygame.Surface | None = None

    def observe(self, event: ev.Event) -> None:
        found = card_for(event)
        if found is None or not self._enabled() or found[0] in self._seen():
            return
        card_id, cells = found
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

    def follow(self, rows: tuple[int, ...]) -> None:
        """Keep the outlined cells on their blocks when rows below them are cleared."""
        def after(cells: tuple[Cell, ...]) -> tuple[Cell, ...]:
            return tuple((x, y + sum(1 for r in rows if r > y)) for x, y in cells if y not in rows)
        self.cells = after(self.cells)
        self._cells_for = {k: after(v) for k, v in self._cells_for.items()}

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
        surf = self._surfaces.get(card.id)
        if surf is None:
            surf = self._surfaces[card.id] = self._render(card, text)
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

    def _render(self, card: Card, text: TextCache) -> pygame.Surface:
        w, h = self.rect[2], self.rect[3]
        small, body = self.sizes
        line_h = theme.font(small).get_linesize()
        surf = pygame.Surface((w, h)).convert()
        surf.fill((24, 20, 8))
        pygame.draw.rect(surf, theme.AMBER, surf.get_rect(), 2, border_radius=5)
        compact = self.dismiss_hint.startswith("tap")  # a phone: the hint shares the title's line
        hint_w = theme.font(small).size(self.dismiss_hint)[0] + 12 if compact else 0
        text.blit(surf, fit(card.title, body, w - 2 * PAD - hint_w), body, theme.AMBER, (PAD, 6))
        if compact:
            text.blit(surf, self.dismiss_hint, small, theme.TEXT_DIM, (w - PAD, 8), "topright")
        y = 8 + theme.font(body).get_linesize() if compact else 28
        for line in wrap(card.body, small, w - 2 * PAD):
            text.blit(surf, line, small, theme.TEXT, (PAD, y))
            y += line_h
        if not compact:
            text.blit(surf, f"{self.dismiss_hint}   {CARDS_KEY}: cards off", small, theme.TEXT_DIM,
                      (w - PAD, h - 6), "bottomright")
        return surf
