"""Draw the web bundle's pictures: the favicon and the 1200 x 630 social preview card.

The card frames a screenshot of the running game (made by ``main.py --headless --screenshot``)
with the title, so a link shared on Dev.to, Mastodon or Slack shows the game itself. Without a
screenshot it draws the same card around a stylised board, so the build never lacks an image.

Usage:
    python tools/social_card.py icon OUT.png
    python tools/social_card.py card OUT.png [--screenshot SHOT.png]
"""

from __future__ import annotations

import sys
from pathlib import Path

import _headless  # noqa: F401  (SDL set up, the project importable, before pygame loads)

from engine import cli_args  # noqa: E402

CARD_SIZE = (1200, 630)
ICON_SIZE = 64

BG = (7, 9, 20)
GRID = (16, 22, 42)
EDGE = (32, 64, 96)
TEXT = (214, 226, 240)
DIM = (130, 146, 172)
CYAN = (0, 229, 255)
MAGENTA = (255, 46, 170)
AMBER = (255, 190, 40)
GREEN = (60, 240, 150)
VIOLET = (160, 110, 255)

TITLE = "VRAM TETRIS"
KICKER = "PAGEDATTENTION"
TAGLINE = "How LLM serving engines pack the KV cache into GPU memory"
FOOTER = "vLLM · TensorRT-LLM · TGI  —  play it in the browser"

# A small board: rows of (column, colour) cells, with holes = external fragmentation.
BOARD_ROWS: tuple[str, ...] = (
    "..........",
    "....MM....",
    ".....MM...",
    "..........",
    "C.........",
    "CC.....AA.",
    "C..G...AA.",
    "VV.GG.CCCC",
    "VVV.G.MM.A",
    "AA.VVV.MMA",
)
CELL_COLOURS = {"C": CYAN, "M": MAGENTA, "A": AMBER, "G": GREEN, "V": VIOLET}


def _font(size: int, bold: bool = False):
    import pygame

    for name in ("dejavusansmono", "liberationmono", "couriernew", "monospace"):
        path = pygame.font.match_font(name, bold=bold)
        if path:
            return pygame.font.Font(path, size)
    return pygame.font.Font(None, int(size * 1.3))


def _grid(surface, step: int) -> None:
    import pygame

    w, h = surface.get_size()
    for x in range(0, w, step):
        pygame.draw.line(surface, GRID, (x, 0), (x, h))
    for y in range(0, h, step):
        pygame.draw.line(surface, GRID, (0, y), (w, y))


def _cell(surface, rect, colour) -> None:
    import pygame

    pygame.draw.rect(surface, colour, rect)
    inner = pygame.Rect(rect).inflate(-max(2, rect[2] // 5), -max(2, rect[3] // 5))
    lighter = tuple(min(255, c + 60) for c in colour)
    pygame.draw.rect(surface, lighter, inner, width=max(1, rect[2] // 10))


def draw_board(surface, origin: tuple[int, int], cell: int) -> None:
    import pygame

    x0, y0 = origin
    frame = pygame.Rect(x0 - 4, y0 - 4, cell * 10 + 8, cell * len(BOARD_ROWS) + 8)
    pygame.draw.rect(surface, (5, 7, 16), frame)
    pygame.draw.rect(surface, EDGE, frame, width=2)
    for r, row in enumerate(BOARD_ROWS):
        for c, ch in enumerate(row):
            rect = (x0 + c * cell + 1, y0 + r * cell + 1, cell - 2, cell - 2)
            if ch in CELL_COLOURS:
                _cell(surface, rect, CELL_COLOURS[ch])
            else:
                pygame.draw.rect(surface, (14, 20, 38), rect, width=1)


def make_icon(out: Path) -> None:
    import pygame

    pygame.init()
    s = pygame.Surface((ICON_SIZE, ICON_SIZE))
    s.fill(BG)
    cell = 14
    # A T piece split into pages: three resident blocks and one block placed elsewhere.
    for (cx, cy), colour in (((1, 1), CYAN), ((2, 1), CYAN), ((3, 1), CYAN), ((2, 2), MAGENTA), ((0, 3), MAGENTA)):
        _cell(s, (4 + cx * cell, 4 + cy * cell, cell - 1, cell - 1), colour)
    pygame.draw.rect(s, EDGE, s.get_rect(), width=2)
    pygame.image.save(s, str(out))


def make_card(out: Path, screenshot: Path | None) -> bool:
    """Return True when the card shows a real screenshot."""
    import pygame

    pygame.init()
    w, h = CARD_SIZE
    card = pygame.Surface(CARD_SIZE)
    card.fill(BG)
    _grid(card, 30)

    shot = None
    if screenshot is not None and screenshot.is_file():
        try:
            shot = pygame.image.load(str(screenshot))
        except pygame.error as exc:
            print(f"social card: cannot read screenshot {screenshot}: {exc}", file=sys.stderr)

    text_x = 56
    if shot is not None:
        # Screenshot on the right, title block in the 430 px column on the left.
        area = pygame.Rect(520, 40, w - 520 - 40, h - 80)
        scale = min(area.w / shot.get_width(), area.h / shot.get_height())
        size = (int(shot.get_width() * scale), int(shot.get_height() * scale))
        shot = pygame.transform.smoothscale(shot.convert(card), size)
        pos = (area.right - size[0], (h - size[1]) // 2)
        pygame.draw.rect(card, CYAN, pygame.Rect(pos, size).inflate(8, 8), width=2)
        card.blit(shot, pos)
        title_px, tag_px, wrap, foot_wrap = 56, 26, 26, 38
    else:
        cell = 44
        draw_board(card, (w - 56 - 10 * cell, (h - len(BOARD_ROWS) * cell) // 2), cell)
        title_px, tag_px, wrap, foot_wrap = 64, 28, 26, 60

    card.blit(_font(22, bold=True).render(KICKER, True, MAGENTA), (text_x, 150))
    card.blit(_font(title_px, bold=True).render(TITLE, True, CYAN), (text_x, 182))
    pygame.draw.line(card, MAGENTA, (text_x, 182 + title_px + 12), (text_x + 160, 182 + title_px + 12), 3)
    y = 182 + title_px + 30
    for line in _wrap(TAGLINE, wrap):
        card.blit(_font(tag_px).render(line, True, TEXT), (text_x, y))
        y += tag_px + 10
    foot = _wrap(FOOTER, foot_wrap)
    for i, line in enumerate(foot):
        card.blit(_font(18).render(line, True, DIM), (text_x, h - 50 - 26 * (len(foot) - i)))
    pygame.image.save(card, str(out))
    return shot is not None


def _wrap(text: str, width: int) -> list[str]:
    lines: list[str] = []
    line = ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    if line:
        lines.append(line)
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = cli_args.parser("social_card.py", __doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    png = cli_args.output_file(".png")
    icon = sub.add_parser("icon", help="draw the 64 x 64 favicon", allow_abbrev=False,
                          formatter_class=cli_args.HelpFormatter)
    icon.add_argument("out", type=png, help="PNG file to write")
    card = sub.add_parser("card", help="draw the 1200 x 630 social preview card", allow_abbrev=False,
                          formatter_class=cli_args.HelpFormatter)
    card.add_argument("out", type=png, help="PNG file to write")
    card.add_argument("--screenshot", type=Path, default=None, help="game screenshot to frame (default: a drawn board)")
    args = parser.parse_args(argv)

    if args.what == "card" and args.screenshot is not None and not args.screenshot.is_file():
        print(f"social card: no screenshot at {args.screenshot}; drawing the board instead", file=sys.stderr)

    if args.what == "icon":
        make_icon(args.out)
        print(f"icon: {args.out} ({ICON_SIZE}x{ICON_SIZE})")
    else:
        real = make_card(args.out, args.screenshot)
        print(f"card: {args.out} ({CARD_SIZE[0]}x{CARD_SIZE[1]}, {'game screenshot' if real else 'drawn board'})")
    return 0


if __name__ == "__main__":
    sys.exit(cli_args.run(main, prog="social_card.py"))
