"""What the help screen says: the controls and the concept map, as data."""
from __future__ import annotations

CONTROLS: tuple[tuple[str, str], ...] = (
    ("Left / Right, A / D", "move the request"),
    ("Up, W, X  /  Z", "rotate cw / ccw"),
    ("Down, S", "soft drop"),
    ("Space", "hard drop"),
    ("C", "hold (preempt)"),
    ("P, or tap Shift", "split into pages (PAGED)"),
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
