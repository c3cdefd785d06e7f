"""The chapters' screens: the list of chapters, a chapter's intro, and its outro.

The list opens every chapter reached (the first, and each after a met one) and says what each
adds; an intro says what is about to happen, the one new control and the goal; an outro, over
the board of the run it closes, sets the player's own figures beside the published ones (in
chapter 2, beside the same player's chapter-1 run on the same arrivals). Screens move on through
the app.
"""
from __future__ import annotations

import pygame

from engine.chapters import CHAPTERS, Chapter, chapter
from engine.outro import figures
from engine.reports import RunReport
from ui import theme
from ui.chapter_text import clock, ended, heading, intro_lines, meaning, outro_rows, summary
from ui.i18n.game_text import mode_name
from ui.input import Command
from ui.keys import PAUSE_KEY, RETRY_KEY, START_KEY
from ui.overlays import Overlay, draw_dialog, draw_row_button
from ui.storage import chapter_met, chapter_played, chapter_reached
from ui.text import fit, wrap
from ui.widgets import Button

PAD = 16
MEMORY_PARTS = ("tokens", "reserved", "tails", "sealed", "free")  # engine.outro.Figures.memory, in order
MEMORY_COLOURS = (theme.CYAN, theme.AMBER, theme.MAGENTA, theme.RED, (40, 52, 80))


def next_chapter(settings) -> int:
    """The chapter to continue with: the first not yet played; once every one has been, the first
    not yet met (the last, when all are)."""
    for ch in CHAPTERS:
        if not chapter_played(settings, ch.number):
            return ch.number
    for ch in CHAPTERS:
        if not chapter_met(settings, ch.number):
            return ch.number
    return CHAPTERS[-1].number


def _bottom_buttons(lay, rect: pygame.Rect, specs: list[tuple[str, str, str]],
                    weights: tuple[int, ...] | None = None) -> list[Button]:
    """A row of buttons along the bottom of `rect`, widths in proportion to `weights` (equal)."""
    h = lay.report_buttons_h
    n, gap = len(specs), 8
    weights = weights or (1,) * n
    room = rect.width - 2 * PAD - gap * (n - 1)
    keys = not lay.portrait
    out, x = [], rect.x + PAD
    for (name, label, hint), weight in zip(specs, weights):
        w = room * weight // sum(weights)
        out.append(Button(name, (x, rect.bottom - PAD - h, w, h), label, hint if keys else "", touch=lay.touch))
        x += w + gap
    return out


def _draw_button(surface, app, b: Button, hover, accent=theme.CYAN, dim: bool = False) -> None:
    r = pygame.Rect(b.rect)
    T = app.layout.text
    over = hover is not None and b.contains(hover) and not dim
    pygame.draw.rect(surface, theme.BUTTON_HOVER if over else theme.BUTTON, r, border_radius=5)
    pygame.draw.rect(surface, accent if (over or not dim) else theme.PANEL_EDGE, r, 1, border_radius=5)
    label = fit(b.label, T.body, r.width - 12)
    room = r.width - 28 - theme.font_for(label, T.body).size(label)[0]
    if b.hint and theme.font_for(b.hint, T.small).size(b.hint)[0] <= room:  # a key hint only where it fits
        app.text.blit(surface, label, T.body, theme.TEXT, (r.x + 10, r.centery), "midleft")
        app.text.blit(surface, b.hint, T.small, theme.TEXT_DIM, (r.right - 8, r.centery), "midright")
    else:
        app.text.blit(surface, label, T.body, theme.TEXT, r.center, "center")


class ChapterPage(Overlay):
    """A chapter screen run by keys as a dialog is: Esc (or Q) goes back, Enter goes on (`ahead`)."""

    ahead = ""

    def command(self, cmd: Command) -> None:
        if cmd in (Command.PAUSE, Command.QUIT):
            self.click("back")
        elif cmd is Command.START:
            self.click(self.ahead)


class ChapterListScene(ChapterPage):
    """Every chapter: what it adds, its goal, the best run of it; the ones reached open."""

    ahead = "continue"

    shade_alpha = 190

    def __init__(self, app) -> None:
        super().__init__(app)
        self.notice = ""
        self.selected = next_chapter(app.settings)  # the row Enter opens; the arrow keys move it
        self.build()

    def build(self) -> None:
        lay, tr = self.app.layout, self.app.tr
        r = pygame.Rect(lay.dialog)
        self.rect = r
        self.lead = wrap(tr.t("chapter.list.lead"), lay.text.small, r.width - 2 * PAD)[:2]
        top = r.y + 48 + len(self.lead) * (lay.text.small + 4) + 6
        self.buttons = _bottom_buttons(lay, r, [
            ("back", tr.t("chapter.back"), PAUSE_KEY),
            ("continue", tr.t("chapter.list.continue" if self.selected == next_chapter(self.app.settings)
                              else "chapter.list.play", n=self.selected), START_KEY)],
            weights=(1, 2))
        bottom = self.buttons[0].rect[1] - 10
        n, gap = len(CHAPTERS), 6
        h = min(64, (bottom - top - gap * (n - 1)) // n)
        self.rows = [Button(f"ch{c.number}", (r.x + PAD, top + i * (h + gap), r.width - 2 * PAD, h),
                            tr.t("chapter.list.row", n=c.number, name=tr.t(f"chapter.{c.key}.name")),
                            touch=lay.touch) for i, c in enumerate(CHAPTERS)]
        self.buttons = self.buttons + self.rows
        self.statuses = [fit(self.status(c), lay.text.small, r.width - 2 * PAD - 20) for c in CHAPTERS]

    def status(self, ch: Chapter) -> str:
        tr, s = self.app.tr, self.app.settings
        if not chapter_reached(s, ch.number):
            return tr.t("chapter.list.locked", n=ch.number - 1)
        mode = mode_name(tr, ch.mode)
        parts = [tr.t("chapter.list.goal", mode=mode, goal=tr.num(ch.goal)) if ch.goal is not None
                 else tr.t("chapter.list.goal_endless", mode=mode)]
        served = s.chapters.get(str(ch.number), 0)
        if ch.goal is None and s.chapter_scores.get(str(ch.number), 0):
            parts.append(tr.t("chapter.list.best_score", score=tr.num(s.chapter_scores[str(ch.number)])))
        elif served:
            parts.append(tr.t("chapter.list.best", served=tr.num(served)))
        return " · ".join(parts)

    def handle(self, event: pygame.event.Event) -> None:
        if event.type == pygame.KEYDOWN and event.key in (pygame.K_UP, pygame.K_DOWN):
            step = -1 if event.key == pygame.K_UP else 1
            reached = [c.number for c in CHAPTERS if chapter_reached(self.app.settings, c.number)]
            self.selected = min(max(self.selected + step, reached[0]), reached[-1])
            self.notice = ""
            self.build()  # the button says which chapter Enter opens
            return
        super().handle(event)

    def click(self, name: str) -> None:
        app = self.app
        if name == "back":
            app.back()
        elif name == "continue":  # Enter: the chapter the arrow keys chose (at first, the one to continue)
            self.click(f"ch{self.selected}")
        elif name.startswith("ch"):
            n = int(name[2:])
            if chapter_reached(app.settings, n):
                app.show_chapter_intro(n)
            else:
                self.notice = app.tr.t("chapter.list.locked", n=n - 1)

    def draw(self, surface: pygame.Surface) -> None:
        self.draw_backdrop(surface)
        lay, tr, t = self.app.layout, self.app.tr, self.app.text
        T = lay.text
        r = draw_dialog(surface, (self.rect.x, self.rect.y, self.rect.w, self.rect.h), theme.CYAN)
        t.blit(surface, tr.t("chapter.list.title"), T.title, theme.CYAN, (r.x + PAD, r.y + 10))
        for i, line in enumerate(self.lead):
            t.blit(surface, line, T.small, theme.TEXT_DIM, (r.x + PAD, r.y + 48 + i * (T.small + 4)))
        s = self.app.settings
        for b, ch, status in zip(self.rows, CHAPTERS, self.statuses):
            reached = chapter_reached(s, ch.number)
            met = chapter_met(s, ch.number)
            br = pygame.Rect(b.rect)
            over = reached and ((self.hover is not None and b.contains(self.hover)) or ch.number == self.selected)
            pygame.draw.rect(surface, theme.BUTTON_HOVER if over else theme.BUTTON, br, border_radius=5)
            edge = theme.GREEN if met else theme.CYAN if reached else theme.PANEL_EDGE
            pygame.draw.rect(surface, edge, br, 1, border_radius=5)
            colour = theme.TEXT if reached else theme.TEXT_DIM
            room = br.width - 20
            if met:
                mark = tr.t("chapter.list.met")
                mr = t.blit(surface, mark, T.small, theme.GREEN, (br.right - 10, br.y + 8), "topright")
                room = mr.x - br.x - 18
            t.blit(surface, fit(b.label, T.body, room), T.body, colour, (br.x + 10, br.y + 6))
            t.blit(surface, status, T.small, theme.TEXT_DIM, (br.x + 10, br.bottom - T.small - 8))
        if self.notice:
            top = self.buttons[0].rect[1]
            t.blit(surface, fit(self.notice, T.small, r.width - 2 * PAD), T.small, theme.AMBER,
                   (r.centerx, top - 6), "midbottom")
        for b in self.buttons[:2]:
            _draw_button(surface, self.app, b, self.hover)


INTRO_GAP = 24  # between an intro's last line and its buttons


class ChapterIntroScene(ChapterPage):
    """One screen before a chapter: what is about to happen, the one new control, the goal."""

    ahead = "start"

    shade_alpha = 190

    def __init__(self, app, number: int) -> None:
        super().__init__(app)
        self.chapter = chapter(number)
        self.build()

    def build(self) -> None:
        lay, tr = self.app.layout, self.app.tr
        dialog = pygame.Rect(lay.dialog)
        T = lay.text
        width = dialog.width - 2 * PAD
        sizes = {"of": T.small, "name": T.title, "intro": T.body, "new": T.body, "goal": T.body, "note": T.small}
        self.parts = []
        for role, text in intro_lines(tr, self.chapter, lay.portrait):
            size = sizes[role]
            if role == "name" and theme.font_for(text, size).size(text)[0] > width:
                size = T.large
            self.parts.append((role, size, wrap(text, size, width)))
        # As tall as its text and buttons need (a short intro is a short card), centred where the
        # dialog is, never taller than it.
        text_h = 14 + sum(theme.font_for(lines[0] if lines else "", size).get_linesize() * len(lines) + 10
                          for _, size, lines in self.parts)
        height = min(dialog.height, max(dialog.height // 2, text_h + INTRO_GAP + lay.report_buttons_h + PAD))
        self.rect = pygame.Rect(dialog.x, dialog.centery - height // 2, dialog.width, height)
        self.buttons = _bottom_buttons(lay, self.rect, [("back", tr.t("chapter.back"), PAUSE_KEY),
                                                        ("start", tr.t("chapter.start"), START_KEY)])

    def click(self, name: str) -> None:
        if name == "back":
            self.app.back()
        elif name == "start":
            self.app.start_chapter(self.chapter.number)

    def draw(self, surface: pygame.Surface) -> None:
        self.draw_backdrop(surface)
        t = self.app.text
        r = draw_dialog(surface, (self.rect.x, self.rect.y, self.rect.w, self.rect.h), theme.CYAN)
        colours = {"of": theme.TEXT_DIM, "name": theme.CYAN, "intro": theme.TEXT, "new": theme.AMBER,
                   "goal": theme.GREEN, "note": theme.TEXT_DIM}
        y = r.y + 14
        for role, size, lines in self.parts:
            lh = theme.font_for(lines[0] if lines else "", size).get_linesize()
            for line in lines:
                t.blit(surface, line, size, colours[role], (r.x + PAD, y))
                y += lh
            y += 10
        for b in self.buttons:
            _draw_button(surface, self.app, b, self.hover, accent=theme.GREEN if b.name == "start" else theme.CYAN)


LEGEND_THREE_WIDE = 540  # the memory bar's width from which its legend runs three to a line


class ChapterOutroScene(Overlay):
    """The end of a chapter's run, over its board: met or not, the player's figures beside the
    published ones, one line of what it means; next, again, the run report, the chapters."""

    shade_alpha = 175

    def __init__(self, app, play, report: RunReport | None) -> None:
        super().__init__(app)
        self.play = play
        self.report = report
        self.chapter = chapter(play.chapter)
        game = play.game
        self.figures = figures(game)
        self.won = report is not None and report.outcome == "victory"
        self.met = self.chapter.met(self.figures.served, self.won)
        self.score = game.score
        self.build()

    def build(self) -> None:
        lay, tr = self.app.layout, self.app.tr
        ch = self.chapter
        self.rect = pygame.Rect(lay.outro)
        last = ch.number == len(CHAPTERS)
        # The next chapter is open once a run of this one has ended: it is what Enter does. A run
        # that missed its goal may be tried again in its place beside it (the chapters: Esc).
        if last:
            specs = [("retry", tr.t("chapter.retry"), START_KEY), ("report", tr.t("chapter.report"), "R"),
                     ("chapters", tr.t("chapter.list"), PAUSE_KEY)]
        elif self.met:
            specs = [("next", tr.t("chapter.next"), START_KEY), ("report", tr.t("chapter.report"), "R"),
                     ("chapters", tr.t("chapter.list"), PAUSE_KEY)]
        else:
            specs = [("next", tr.t("chapter.next"), START_KEY), ("retry", tr.t("chapter.retry"), RETRY_KEY),
                     ("report", tr.t("chapter.report"), "R")]
        self.buttons = _bottom_buttons(lay, self.rect, specs, weights=(4, 3, 3))
        T = lay.text
        width = self.rect.width - 2 * PAD
        self.heading = heading(tr, ch, self.figures.served, self.won)
        self.summary = wrap(summary(tr, ch, self.figures, self.score), T.body, width)
        self.ended = wrap(ended(tr, self.report), T.small, width)  # why the run ended, as its report says
        pair = getattr(self.play, "pair", None)
        moment = getattr(self.play, "moment", None)
        self.at: list[str] = []  # chapter 2: the moment its figures are read at
        if ch.arrivals_of is not None:
            at = (tr.t("chapter.outro.at", clock=clock(pair.end_ms)) if pair is not None and moment is not None
                  and moment.running is not None else tr.t("chapter.outro.no_pair"))
            self.at = wrap(at, T.small, width)
        self.rows = outro_rows(tr, ch, self.figures, self.report, pair, moment)
        self.notes = {i: [line for note in row.notes for line in wrap(note, T.small, width - 12)]
                      for i, row in enumerate(self.rows)}
        self.meaning = wrap(meaning(tr, ch, self.report, self.figures, pair, moment), T.body, width)
        # Where the memory went, as a bar and its legend (what the chapter is about: reservations
        # and holes in contiguous memory, next to nothing of them paged).
        self.memory_parts = [(tr.t(f"chapter.memory.{name}"), slots, colour)
                             for name, slots, colour in zip(MEMORY_PARTS, self.figures.memory, MEMORY_COLOURS)]

    def command(self, cmd: Command) -> None:
        if cmd is Command.START:
            self.click(self.buttons[0].name)
        elif cmd in (Command.PAUSE, Command.QUIT):
            self.click("chapters")

    def handle(self, event: pygame.event.Event) -> None:
        if event.type == pygame.KEYDOWN and event.key in (pygame.K_r, pygame.K_t):  # REPORT, RETRY_KEY
            self.click("report" if event.key == pygame.K_r else "retry")
            return
        super().handle(event)

    def click(self, name: str) -> None:
        app, n = self.app, self.chapter.number
        if name == "next":
            app.show_chapter_intro(n + 1, fresh=True)
        elif name == "retry":  # its intro was read a run ago: straight into the run
            app.start_chapter(n)
        elif name == "report" and self.report is not None:  # in place of this screen: the board under it
            app.pop()
            app.show_result(self.play, self.report, getattr(self.play, "new_best", False))
        elif name == "chapters":
            app.show_chapters()

    def draw(self, surface: pygame.Surface) -> None:
        self.draw_backdrop(surface)
        lay, t = self.app.layout, self.app.text
        T = lay.text
        r = draw_dialog(surface, (self.rect.x, self.rect.y, self.rect.w, self.rect.h), theme.GREEN if self.met else theme.RED)
        y = r.y + 12
        t.blit(surface, fit(self.heading, T.title, r.width - 2 * PAD), T.title,
               theme.GREEN if self.met else theme.RED, (r.x + PAD, y))
        y += theme.font(T.title).get_linesize() + 2
        body_h = theme.font_for(self.summary[0] if self.summary else "", T.body).get_linesize()
        for line in self.summary:
            t.blit(surface, line, T.body, theme.TEXT, (r.x + PAD, y))
            y += body_h
        for line in self.ended:
            t.blit(surface, line, T.small, theme.RED, (r.x + PAD, y + 2))
            y += T.small + 4
        if self.at:
            y += 4
            for line in self.at:
                t.blit(surface, line, T.small, theme.CYAN, (r.x + PAD, y))
                y += T.small + 4
        y += 6
        small_h = T.small + 4
        for i, row in enumerate(self.rows):
            t.blit(surface, fit(row.label, T.body, r.width - 2 * PAD - 90), T.body, theme.TEXT_DIM, (r.x + PAD, y))
            t.blit(surface, row.value, T.body, theme.TEXT, (r.right - PAD, y), "topright")
            y += body_h
            for line in self.notes.get(i, ()):
                t.blit(surface, line, T.small, theme.TEXT_DIM, (r.x + PAD + 12, y))
                y += small_h
            y += 4
        y = self._draw_memory(surface, r, y + 4)
        y += 4
        meaning_h = theme.font_for(self.meaning[0] if self.meaning else "", T.body).get_linesize()
        for line in self.meaning:
            t.blit(surface, line, T.body, theme.AMBER, (r.x + PAD, y))
            y += meaning_h
        self.content_bottom = y
        for b in self.buttons:
            _draw_button(surface, self.app, b, self.hover, accent=theme.GREEN if b.name == "next" else theme.CYAN)


    def _draw_memory(self, surface: pygame.Surface, r: pygame.Rect, y: int) -> int:
        """The bar of where the memory went, and its legend (two or three to a line); returns the y under it."""
        total = sum(slots for _, slots, _ in self.memory_parts)
        if not total:
            return y
        t, T, tr = self.app.text, self.app.layout.text, self.app.tr
        t.blit(surface, tr.t("chapter.memory"), T.small, theme.PANEL_TITLE, (r.x + PAD, y))
        y += T.small + 6
        bar = pygame.Rect(r.x + PAD, y, r.width - 2 * PAD, 14)
        x = bar.x
        for i, (_, slots, colour) in enumerate(self.memory_parts):
            w = bar.right - x if i == len(self.memory_parts) - 1 else round(bar.width * slots / total)
            if w > 0:
                pygame.draw.rect(surface, colour, (x, bar.y, w, bar.height))
            x += w
        pygame.draw.rect(surface, theme.PANEL_EDGE, bar, 1)
        y = bar.bottom + 6
        cols = 3 if bar.width >= LEGEND_THREE_WIDE else 2  # a wide dialog: three to a line
        col = bar.width // cols
        for i, (name, slots, colour) in enumerate(self.memory_parts):
            cx = bar.x + (i % cols) * col
            pygame.draw.rect(surface, colour, (cx, y + 3, 10, 10))
            label = f"{name} {tr.pct(slots / total)}"
            t.blit(surface, fit(label, T.small, col - 18), T.small, theme.TEXT, (cx + 14, y))
            if i % cols == cols - 1:
                y += T.small + 6
        return y + (T.small + 6) * bool(len(self.memory_parts) % cols)
