"""What the help screen says: the controls and the concept map, as data."""
from __future__ import annotations

from ui.input import Command
from ui.keys import SHORT_CONTROL_LABELS as BUTTON
from ui.keys import key_hint

CONTROLS: tuple[tuple[str, str], ...] = (  # the keys named from the one key table (ui.input.KEYS)
    (f"{key_hint('left')}, {key_hint('right')}", "move the request"),
    (f"{key_hint('rotate_cw')}  /  {key_hint('rotate_ccw')}", "rotate cw / ccw"),
    (key_hint("soft_drop"), "soft drop"),
    (key_hint("hard_drop"), "hard drop"),
    (key_hint("hold"), "hold (preempt)"),
    (key_hint("split"), "split into pages, PAGED (Shift: a tap on its own)"),
    (f"{key_hint('mode_contiguous')} / {key_hint('mode_paged')} / {key_hint('mode_toggle')}",
     "contiguous / paged / switch"),
    (key_hint(Command.PAUSE), "pause"),
    (f"{key_hint(Command.MUTE)}  /  {key_hint(Command.TOGGLE_CARDS)}  /  {key_hint(Command.TOGGLE_ENDLESS)}",
     "sound / cards / endless run (title)"),
    (f"{key_hint(Command.HELP)}  /  {key_hint(Command.LAB)}", "this help / memory lab"),
    (f"{key_hint(Command.START, 1)}  /  {key_hint(Command.QUIT)}", "start, restart / quit (in pause)"),
    ("Touch", "on-screen buttons, or on the board: drag to move, tap to rotate, flick down "
              "to drop, swipe up to hold, long press to split"),
)

# (game mechanic, what it is in a real LLM serving engine)
CONCEPTS: tuple[tuple[str, str], ...] = (
    ("Falling piece", "An inference request asking for KV-cache blocks."),
    ("Board, 200 cells", "GPU memory; one cell is one KV block of 16 tokens."),
    ("Hatched block", "CONTIGUOUS: room reserved for the maximum length, empty until the "
                      "request finishes (vLLM paper, sec. 3)."),
    ("Hole under blocks", "External fragmentation: free memory no whole request can reach."),
    ("Full row cleared", "Requests finished, blocks freed. Real VRAM never moves live blocks; "
                         "the game lets rows drop."),
    ("Stack hits the top", "CUDA out of memory; the report says why: holes, reservations or "
                           "memory really full."),
    ("PAGED mode", "vLLM's PagedAttention: blocks on demand, anywhere free; OOM only when "
                   "none is left."),
    ("Block table", "Per-request map from logical pages to physical blocks."),
    ("Split, meter", "Game rules (Shift/P, paced by its meter): vLLM pages every request."),
    ("Hold", "Preemption: park a request and resume it later."),
    ("Usable free", "Free blocks the falling request could get now."),
)

# The same controls for a finger: the buttons under the board, and gestures on the board itself.
TOUCH_CONTROLS: tuple[tuple[str, str], ...] = (
    ("Drag sideways", "move the request one column per cell"),
    ("Tap the board", f"rotate clockwise ({BUTTON['rotate_ccw']} / {BUTTON['rotate_cw']} buttons too)"),
    ("Drag down", "soft drop"),
    ("Flick down", f"hard drop ({BUTTON['hard_drop']} button)"),
    ("Swipe up", f"hold: preempt the request ({BUTTON['hold']} button)"),
    ("Long press", f"split into pages, PAGED mode ({BUTTON['split']} button)"),
    ("ALLOCATOR", "tap to switch CONTIGUOUS / PAGED"),
    ("DETAILS", "system log, block table, every statistic"),
)
