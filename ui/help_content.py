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
    (key_hint("split"), "split into pages (Shift: a tap on its own)"),
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
    ("Board, 200 cells", "GPU memory (VRAM) for the KV cache; one cell is one block."),
    ("Hole under blocks", "External fragmentation: free memory a contiguous request can never use."),
    ("Full row cleared", "Requests finished; their blocks are garbage-collected back to the pool."),
    ("Stack hits the top", "CUDA out of memory: the engine cannot admit the next request."),
    ("CONTIGUOUS mode", "Reserve one unbroken range per request, sized for the maximum sequence."),
    ("PAGED mode, split", "PagedAttention (vLLM): fixed-size pages placed in any free block."),
    ("Block table", "Per-request map from logical pages to scattered physical blocks."),
    ("Split meter", "Page-table bookkeeping has a cost, so splits are rationed."),
    ("Hold", "Preemption: park a request and resume it later."),
    ("Paging efficiency", "Share of free VRAM the allocator can hand out right now; "
                          "tokens/s counts tokens of finished requests."),
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
