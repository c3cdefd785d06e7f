"""The scene protocol shared by every screen of the game.

A scene is one screen (title, play, pause, help, lab ...). The App keeps a
stack of scenes: only the top scene receives events and fixed-step updates,
while drawing starts at the topmost *opaque* scene so that overlays (pause,
crash report, help) are drawn over the screen they cover.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import pygame

if TYPE_CHECKING:  # pragma: no cover - typing only
    from ui.input import Command, InputMapper
    from ui.layout import Layout
    from ui.storage import Settings


class Scene:
    """Base class for a screen; override what the screen needs.

    `opaque` is False for overlays that let the scene below show through.
    """

    opaque: bool = True

    def handle(self, event: "pygame.event.Event") -> None:
        """React to one pygame event (keys, mouse, focus changes)."""

    def update(self, dt_ms: float) -> None:
        """Advance by one fixed simulation step of `dt_ms` milliseconds."""

    def draw(self, surface: "pygame.Surface") -> None:
        """Draw the whole scene onto the logical canvas."""

    def enter(self) -> None:
        """Called when the scene becomes the top of the stack again."""

    def leave(self) -> None:
        """Called when another scene is pushed above this one or it is removed."""

    def relayout(self) -> None:
        """The app's layout changed: recompute every rectangle from `app.layout`."""

    @property
    def can_relayout(self) -> bool:
        """True if this screen rearranges itself in place (it overrides `relayout`).

        A screen that cannot keeps its arrangement until it closes; the app waits till then.
        """
        return type(self).relayout is not Scene.relayout


class MenuScene(Scene):
    """A screen run by UI commands and pointer presses (the title and the overlays).

    Subclasses set `app`, `mapper` and `hover`, and say what a command and a press do.
    """

    app: Any
    mapper: "InputMapper"
    hover: tuple[int, int] | None

    def handle(self, event: "pygame.event.Event") -> None:
        for cmd in self.mapper.handle(event):
            self.command(cmd)
            if self.app.top is not self:
                return
        if event.type == pygame.MOUSEMOTION:
            self.hover = event.pos
        elif event.type == pygame.MOUSEBUTTONDOWN and event.button == 1:
            self.press(event.pos)

    def command(self, cmd: "Command") -> None:
        """React to a UI command (pause, help, start ...)."""

    def press(self, pos: tuple[int, int]) -> None:
        """React to a left click or a tap at `pos`."""


class App(Protocol):
    """What a scene may ask of the application that hosts it."""

    settings: "Settings"
    layout: "Layout"  # where everything sits (ui.layout); screens read their rectangles from it

    def push(self, scene: Scene) -> None:
        """Show `scene` above the current one."""

    def pop(self) -> None:
        """Remove the top scene and return to the one below."""

    def replace(self, scene: Scene) -> None:
        """Swap the top scene for `scene`."""

    def save_settings(self) -> None:
        """Persist `settings` (mute, cards, best scores, mode)."""

    # Screens move on through the app, never by importing each other.
    def show_title(self, seed: int | None = None) -> None:
        """Drop whatever runs and show the title screen."""

    def start_game(self, mode: str | None = None, *, seed: int | None = None, autoplay: bool = False,
                   endless: bool | None = None) -> Scene:
        """Start a new run in place of everything on screen."""

    def pause(self, play: Scene) -> None:
        """Freeze `play` under the pause menu."""

    def show_help(self) -> None:
        """Push the help and concept map."""

    def back(self) -> None:
        """Close the top screen."""

    def quit(self) -> None:
        """Ask the main loop to stop (desktop only; ignored in the browser)."""
