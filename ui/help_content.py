"""What the help screen says: the controls and the concept map, as data."""
from __future__ import annotations

CONTROLS: tuple[tuple[str, str], ...] = (
    ("Left / Right, A / D", "move the request"),
    ("Up, W, X  /  Z", "rotate cw / ccw"),
    ("Down, S", "soft drop"),
    ("Space", "hard drop"),
    ("C", "hold (preempt)"),
    ("P, or tap Shift", "split into pages"),
    ("1 / 2 / Tab", "contiguous / paged / switch"),
    ("Esc", "pause"),
    ("M  /  T  /  E", "sound / cards / endless run (title)"),
    ("H, ?  /  L", "this help / memory lab"),
    ("Enter  /  Q", "start, restart / quit (in pause)"),
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
    ("Tap the board", "rotate clockwise (ROT L / ROT R buttons too)"),
    ("Drag down", "soft drop"),
    ("Flick down", "hard drop (DROP button)"),
    ("Swipe up", "hold: preempt the request (HOLD button)"),
    ("Long press", "split into pages, PAGED mode (SPLIT button)"),
    ("ALLOCATOR", "tap to switch CONTIGUOUS / PAGED"),
    ("DETAILS", "system log, block table, every statistic"),
)
