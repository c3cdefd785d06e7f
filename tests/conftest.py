"""Every test runs headless: pygame gets SDL's dummy video and audio drivers."""

import os

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

import pytest


@pytest.fixture
def clean_event_queue():
    """A display and an empty SDL event queue around a UI test (modules opt in with usefixtures)."""
    import pygame

    from tests.uikit import canvas

    canvas()
    pygame.event.clear()
    yield
    pygame.event.clear()
