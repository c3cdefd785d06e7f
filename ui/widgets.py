"""Small drawing helpers shared by every scene: panels, bars, buttons, icons."""
from __future__ import annotations

import math
from dataclasses import dataclass

import pygame

from ui import theme
from ui.layout import RectT
from ui.text import TextCache

Colour = tuple[int, int, int]


def draw_panel(surface: pygame.Surface, r: RectT, text: TextCache, title: str = "",
               edge: Colour = theme.PANEL_EDGE, size: int = theme.SMALL) -> None:
    """A console panel: dark fill, thin neon edge, small caps title."""
    rect = pygame.Rect(r)
    pygame.draw.rect(surface, theme.PANEL, rect, border_radius=4)
    pygame.draw.rect(surface, edge, rect, 1, border_radius=4)
    if title:
        text.blit(surface, title, size, theme.PANEL_TITLE, (rect.x + 7, rect.y + 4))


def draw_bar(surface: pygame.Surface, r: RectT, fraction: float, colour: Colour,
             back: Colour = (28, 36, 60)) -> None:
    """A horizontal meter filled to `fraction` (0..1)."""
    rect = pygame.Rect(r)
    pygame.draw.rect(surface, back, rect, border_radius=2)
    f = 0.0 if fraction < 0 else 1.0 if fraction > 1 else fraction
    if f > 0:
        fill = rect.copy()
        fill.width = max(2, round(rect.width * f))
        pygame.draw.rect(surface, colour, fill, border_radius=2)


def dim(surface: pygame.Surface, alpha: int = 170) -> None:
    """Darken the whole surface (under an overlay)."""
    shade = pygame.Surface(surface.get_size(), pygame.SRCALPHA)
    shade.fill((0, 0, 0, alpha))
    surface.blit(shade, (0, 0))


TOUCH_MIN = 44  # smallest tap target, in logical px, whatever a button looks like


def touch_target(r: RectT, min_size: int = TOUCH_MIN) -> pygame.Rect:
    """`r` grown evenly around its centre to at least min_size x min_size."""
    rect = pygame.Rect(r)
    grow_w = max(0, min_size - rect.width)
    grow_h = max(0, min_size - rect.height)
    return rect.inflate(grow_w + grow_w % 2, grow_h + grow_h % 2)


LABEL_PAD = 6  # the least room between a button's label and each of its sides


@dataclass(frozen=True)
class Button:
    """A clickable, tappable rectangle with a label and an optional key hint.

    A slim button (a header switch, say) still answers a finger anywhere in its
    TOUCH_MIN-sized target around it.
    """

    name: str
    rect: RectT
    label: str
    hint: str = ""
    touch: int = TOUCH_MIN  # the layout's smallest finger target

    @property
    def target(self) -> pygame.Rect:
        return touch_target(self.rect, self.touch)

    def contains(self, pos: tuple[int, int]) -> bool:
        return self.target.collidepoint(pos)

    def draw(self, surface: pygame.Surface, text: TextCache, *, active: bool = False,
             hover: bool = False, label: str | None = None, accent: Colour = theme.CYAN,
             size: int = theme.SMALL) -> None:
        rect = pygame.Rect(self.rect)
        fill = theme.BUTTON_ACTIVE if active else theme.BUTTON_HOVER if hover else theme.BUTTON
        pygame.draw.rect(surface, fill, rect, border_radius=4)
        pygame.draw.rect(surface, accent if (active or hover) else theme.PANEL_EDGE, rect, 1,
                         border_radius=4)
        shown = label if label is not None else self.label
        colour = theme.TEXT if not active else (255, 255, 255)
        if self.hint:
            text.blit(surface, shown, size, colour,
                      (rect.centerx, rect.centery - 8), "center")
            text.blit(surface, self.hint, size, theme.TEXT_DIM,
                      (rect.centerx, rect.centery + 9), "center")
        else:
            text.blit(surface, shown, size, colour, rect.center, "center")


def hit(buttons: list[Button] | tuple[Button, ...], pos: tuple[int, int]) -> Button | None:
    """The button under pos, if any."""
    for b in buttons:
        if b.contains(pos):
            return b
    return None


def draw_icon(surface: pygame.Surface, name: str, center: tuple[int, int], colour: Colour,
              size: int = 10) -> None:
    """Vector icons for the control buttons (fonts may lack arrow glyphs)."""
    cx, cy = center
    s = size
    if name == "left":
        pygame.draw.polygon(surface, colour, [(cx - s, cy), (cx + s // 2, cy - s), (cx + s // 2, cy + s)])
    elif name == "right":
        pygame.draw.polygon(surface, colour, [(cx + s, cy), (cx - s // 2, cy - s), (cx - s // 2, cy + s)])
    elif name in ("rotate_cw", "rotate_ccw"):
        box = pygame.Rect(0, 0, 2 * s, 2 * s)
        box.center = center
        cw = name == "rotate_cw"
        # Open circle with an arrow head at the end that shows the turning direction.
        start, stop = (math.radians(-60), math.radians(200)) if cw else (math.radians(-20), math.radians(240))
        pygame.draw.arc(surface, colour, box, start, stop, 3)
        ang = start if cw else stop
        tip = (cx + s * math.cos(ang), cy - s * math.sin(ang))
        d = -1 if cw else 1
        tangent = (-math.sin(ang) * d, -math.cos(ang) * d)
        normal = (math.cos(ang), -math.sin(ang))
        h = s * 0.6
        pygame.draw.polygon(surface, colour, [
            (tip[0] + tangent[0] * h, tip[1] + tangent[1] * h),
            (tip[0] + normal[0] * h * 0.7, tip[1] + normal[1] * h * 0.7),
            (tip[0] - normal[0] * h * 0.7, tip[1] - normal[1] * h * 0.7),
        ])
    elif name == "soft_drop":
        pygame.draw.polygon(surface, colour, [(cx - s, cy - s // 2), (cx + s, cy - s // 2), (cx, cy + s // 2 + 2)])
    elif name == "hard_drop":
        pygame.draw.polygon(surface, colour, [(cx - s, cy - s), (cx + s, cy - s), (cx, cy)])
        pygame.draw.polygon(surface, colour, [(cx - s, cy - 1), (cx + s, cy - 1), (cx, cy + s - 1)])
        pygame.draw.line(surface, colour, (cx - s, cy + s), (cx + s, cy + s), 2)
    elif name == "hold":
        pygame.draw.rect(surface, colour, (cx - s, cy - s + 2, 2 * s, 2 * s - 4), 2, border_radius=2)
        pygame.draw.line(surface, colour, (cx - s // 2, cy), (cx + s // 2, cy), 2)
    elif name == "split":
        q = max(4, s * 3 // 4)
        g = 2
        for ox, oy in ((-q - g, -q - g), (g, -q - g), (-q - g, g), (g, g)):
            pygame.draw.rect(surface, colour, (cx + ox, cy + oy, q, q))


def pulse(time_ms: float, period_ms: float = 900.0) -> float:
    """0..1 triangle-ish wave for blinking highlights."""
    return 0.5 + 0.5 * math.sin(time_ms * 2 * math.pi / period_ms)
