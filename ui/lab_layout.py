"""Where everything on the LAB screen sits, computed from the canvas size.

Landscape (800 x 580): the two memory maps side by side above the plot and the
info panel. Portrait (420 x 700, a phone): the maps stacked, the buttons in two
rows, no plot (the counters carry the same figures), and no text under 14 px.
"""
from __future__ import annotations

from dataclasses import dataclass

from ui.layout import SIZES, CanvasSized, RectT

LANDSCAPE = SIZES["landscape"]  # the game's two canvases (ui.layout): the LAB fills the same ones
PORTRAIT = SIZES["portrait"]
LAYOUTS: dict[str, tuple[int, int]] = dict(SIZES)

# Buttons: name, relative width, label, key hint.
BUTTONS: tuple[tuple[str, int, str, str], ...] = (
    ("pause", 70, "PAUSE", "Space"),
    ("x1", 40, "x1", "1"),
    ("x4", 40, "x4", "2"),
    ("x16", 44, "x16", "3"),
    ("dataset", 112, "", "D"),
    ("scenario", 104, "", "S"),
    ("contiguous", 120, "", "C"),
    ("restart", 88, "NEW TRACE", "R"),
    ("back", 96, "BACK", "Esc / L"),
)
PORTRAIT_ROWS = (("pause", "x1", "x4", "x16", "back"), ("dataset", "scenario", "contiguous", "restart"))


@dataclass(frozen=True)
class LabLayout(CanvasSized):
    size: tuple[int, int]
    portrait: bool
    header: RectT
    buttons: dict[str, RectT]
    maps: tuple[RectT, RectT]  # panels of the contiguous and the paged map
    plot: RectT | None
    info: RectT
    map_top_pad: int  # panel title above the map
    map_bottom_pad: int  # two rows of counters below it
    small: int  # font sizes in logical pixels
    body: int
    large: int
    line: int  # line height of small text

    def map_area(self, i: int) -> RectT:
        x, y, w, h = self.maps[i]
        return (x + 8, y + self.map_top_pad, w - 16, h - self.map_top_pad - self.map_bottom_pad)


def _row(names: tuple[str, ...], x0: int, y: int, width: int, height: int, gap: int) -> dict[str, RectT]:
    """Buttons of one row sharing ``width`` in proportion to their relative widths."""
    weights = {name: w for name, w, _, _ in BUTTONS}
    total = sum(weights[n] for n in names)
    room = width - gap * (len(names) - 1)
    out, x = {}, x0
    for k, name in enumerate(names):
        w = room - (x - x0 - gap * k) if k == len(names) - 1 else round(room * weights[name] / total)
        out[name] = (x, y, w, height)
        x += w + gap
    return out


def lab_layout(width: int, height: int) -> LabLayout:
    """The LAB's rectangles for a canvas of ``width`` x ``height``: portrait when taller than wide."""
    margin, gap = 10, 8
    header = (0, 0, width, 34)
    if height > width:
        buttons = {}
        y = 40
        for names in PORTRAIT_ROWS:
            buttons.update(_row(names, margin, y, width - 2 * margin, 34, 5))
            y += 38
        info_h = 146
        top = y + 2
        panel_h = (height - top - info_h - margin - 2 * gap) // 2
        maps = ((margin, top, width - 2 * margin, panel_h), (margin, top + panel_h + gap, width - 2 * margin, panel_h))
        info = (margin, top + 2 * (panel_h + gap), width - 2 * margin, height - margin - top - 2 * (panel_h + gap))
        return LabLayout((width, height), True, header, buttons, maps, None, info, 26, 46, 14, 15, 19, 18)
    buttons = _row(tuple(name for name, *_ in BUTTONS), margin, 40, width - 2 * margin, 32, 6)
    top = 78
    lower_h = 186
    panel_w = (width - 2 * margin - gap - 2) // 2
    panel_h = height - top - lower_h - gap - margin + 2
    maps = ((margin, top, panel_w, panel_h), (width - margin - panel_w, top, panel_w, panel_h))
    lower_y = top + panel_h + gap
    plot = (margin, lower_y, panel_w, height - margin - lower_y + 2)
    info = (width - margin - panel_w, lower_y, panel_w, height - margin - lower_y + 2)
    return LabLayout((width, height), False, header, buttons, maps, plot, info, 24, 44, 13, 15, 19, 17)
