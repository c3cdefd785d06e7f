"""pygame-ce frontend of VRAM Tetris: scenes, widgets, rendering, input, sound and storage."""

import os

# pygame prints a banner on import unless told not to; every entry point (main.py, python -m ui.lab_scene)
# imports this package first.
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
