"""pygame-ce frontend of VRAM Tetris: scenes, widgets, rendering, input, sound and storage."""
