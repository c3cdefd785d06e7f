"""Keyboard, on-screen buttons and touch gestures turned into engine inputs and UI commands.

One table (KEYS) says what every key does. `InputMapper` applies it and owns the key-repeat
timing; `GestureReader` reads swipes and taps on a touch screen.

Repeat timing, precisely: a press fires at once, in the next `update()`. From then on the
held time accumulates every `update(dt_ms)` (including that first one). Left and right repeat
when the held time reaches DAS (170 ms) and then every ARR (50 ms): 170, 220, 270 ... so a key
held for T ms has fired 1 + (T >= 170 ? floor((T - 170) / 50) + 1 : 0) times — 6 after 400 ms.
Soft drop repeats at ARR straight away: 50, 100, 150 ... — 9 times after 400 ms.
Shift splits when it is released without another key pressed meanwhile (a tap): Shift + / is
the help key "?", and must not spend a split on the way. P splits at once.
With left and right both held the one pressed last wins; releasing it hands control back to
the other, which restarts its DAS delay without an extra move.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field
from types import MappingProxyType

import pygame

from engine import Input


class Command(enum.Enum):
    """What the player asks of the UI rather than of the game."""

    PAUSE = "pause"
    MUTE = "mute"
    HELP = "help"
    START = "start"
    LAB = "lab"
    TOGGLE_CARDS = "toggle_cards"
    TOGGLE_ENDLESS = "toggle_endless"  # a 40-line run or an endless one (title screen)
    QUIT = "quit"  # leave the current game for the title screen
    LANGUAGE = "language"  # English <-> Korean, live (title and pause)
    PICK_NEXT = "pick_next"  # the next of the first waiting requests is picked to run next
    CHAPTERS = "chapters"  # the chapter list (title screen)


# Action names, shared by keys, on-screen buttons and the help screen.
ACTIONS: MappingProxyType[str, Input] = MappingProxyType({
    "left": Input.LEFT,
    "right": Input.RIGHT,
    "soft_drop": Input.SOFT_DROP,
    "hard_drop": Input.HARD_DROP,
    "rotate_cw": Input.ROTATE_CW,
    "rotate_ccw": Input.ROTATE_CCW,
    "hold": Input.HOLD,
    "split": Input.SPLIT,
    "mode_contiguous": Input.MODE_CONTIGUOUS,
    "mode_paged": Input.MODE_PAGED,
    "mode_toggle": Input.MODE_TOGGLE,
    "preempt": Input.PREEMPT_TOGGLE,
    "budget_down": Input.BUDGET_DOWN,
    "budget_up": Input.BUDGET_UP,
    "spec_down": Input.SPEC_DOWN,
    "spec_up": Input.SPEC_UP,
})
BUTTONS: tuple[str, ...] = ("left", "right", "soft_drop", "hard_drop", "rotate_cw",
                            "rotate_ccw", "hold", "split")

DAS_MS = 170.0
ARR_MS = 50.0
HORIZONTAL: frozenset[str] = frozenset({"left", "right"})
MAX_REPEATS_PER_STEP = 10  # after a stall, a held key crosses the board at most once
_EPS = 1e-6  # float sums of 1000/60 must not miss a repeat by a rounding error


@dataclass(frozen=True, slots=True)
class Repeat:
    """Auto-repeat of a held action: first repeat after `delay_ms`, then every `interval_ms`."""

    delay_ms: float
    interval_ms: float

    def due(self, held_ms: float) -> int:
        """How many repeats a hold of `held_ms` has earned."""
        if held_ms + _EPS < self.delay_ms:
            return 0
        return int((held_ms - self.delay_ms + _EPS) // self.interval_ms) + 1


REPEATS: MappingProxyType[str, Repeat] = MappingProxyType({
    "left": Repeat(DAS_MS, ARR_MS),
    "right": Repeat(DAS_MS, ARR_MS),
    "soft_drop": Repeat(ARR_MS, ARR_MS),
})


@dataclass(frozen=True, slots=True)
class Binding:
    """One key: what it does (an action name or a Command) and how the help screen names it."""

    key: int
    target: str | Command
    label: str
    shift: bool = False  # only with Shift held (US "?" is Shift + /)
    on_tap: bool = False  # acts when released with no other key pressed meanwhile


KEYS: tuple[Binding, ...] = (
    Binding(pygame.K_LEFT, "left", "Left"),
    Binding(pygame.K_a, "left", "A"),
    Binding(pygame.K_RIGHT, "right", "Right"),
    Binding(pygame.K_d, "right", "D"),
    Binding(pygame.K_DOWN, "soft_drop", "Down"),
    Binding(pygame.K_s, "soft_drop", "S"),
    Binding(pygame.K_SPACE, "hard_drop", "Space"),
    Binding(pygame.K_UP, "rotate_cw", "Up"),
    Binding(pygame.K_w, "rotate_cw", "W"),
    Binding(pygame.K_x, "rotate_cw", "X"),
    Binding(pygame.K_z, "rotate_ccw", "Z"),
    Binding(pygame.K_c, "hold", "C"),
    # Shift is also half of "?" (help): it splits when tapped on its own, never as a modifier.
    Binding(pygame.K_LSHIFT, "split", "Shift", on_tap=True),
    Binding(pygame.K_RSHIFT, "split", "Shift", on_tap=True),
    Binding(pygame.K_p, "split", "P"),
    Binding(pygame.K_1, "mode_contiguous", "1"),
    Binding(pygame.K_2, "mode_paged", "2"),
    Binding(pygame.K_TAB, "mode_toggle", "Tab"),
    Binding(pygame.K_r, "preempt", "R"),
    Binding(pygame.K_LEFTBRACKET, "budget_down", "["),
    Binding(pygame.K_RIGHTBRACKET, "budget_up", "]"),
    Binding(pygame.K_MINUS, "spec_down", "-"),
    Binding(pygame.K_EQUALS, "spec_up", "="),
    Binding(pygame.K_n, Command.PICK_NEXT, "N"),
    Binding(pygame.K_ESCAPE, Command.PAUSE, "Esc"),
    Binding(pygame.K_m, Command.MUTE, "M"),
    Binding(pygame.K_h, Command.HELP, "H"),
    Binding(pygame.K_QUESTION, Command.HELP, "?"),
    Binding(pygame.K_SLASH, Command.HELP, "?", shift=True),
    Binding(pygame.K_RETURN, Command.START, "Enter"),
    Binding(pygame.K_KP_ENTER, Command.START, "Enter"),
    Binding(pygame.K_l, Command.LAB, "L"),
    Binding(pygame.K_t, Command.TOGGLE_CARDS, "T"),
    Binding(pygame.K_e, Command.TOGGLE_ENDLESS, "E"),
    Binding(pygame.K_q, Command.QUIT, "Q"),
    Binding(pygame.K_k, Command.LANGUAGE, "K"),
    Binding(pygame.K_g, Command.CHAPTERS, "G"),
)

# What each target does, in the words of the help screen.
DESCRIPTIONS: MappingProxyType[str | Command, str] = MappingProxyType({
    "left": "move left",
    "right": "move right",
    "soft_drop": "soft drop",
    "hard_drop": "hard drop",
    "rotate_cw": "rotate clockwise",
    "rotate_ccw": "rotate counter-clockwise",
    "hold": "hold (set the request aside; its deadline keeps running)",
    "split": "page split (paged mode)",
    "preempt": "preemption mode: swap / recompute",
    "budget_down": "step budget down (chunked prefill)",
    "budget_up": "step budget up (chunked prefill)",
    "spec_down": "one draft token fewer a step (speculative decoding)",
    "spec_up": "one draft token more a step (speculative decoding)",
    Command.PICK_NEXT: "pick the next waiting request to run (cache-aware scheduling)",
    "mode_contiguous": "contiguous allocator",
    "mode_paged": "paged allocator",
    "mode_toggle": "switch allocator",
    Command.PAUSE: "pause",
    Command.MUTE: "mute",
    Command.HELP: "help",
    Command.START: "start / restart",
    Command.LAB: "lab",
    Command.TOGGLE_CARDS: "teaching cards on/off",
    Command.TOGGLE_ENDLESS: "300-request run / endless (title)",
    Command.QUIT: "back to title",
    Command.LANGUAGE: "language (English / Korean)",
    Command.CHAPTERS: "the chapters: a guided run (title)",
})

FOCUS_LOST: frozenset[int] = frozenset(
    getattr(pygame, name) for name in ("WINDOWFOCUSLOST", "WINDOWHIDDEN", "WINDOWMINIMIZED")
    if hasattr(pygame, name))


def legend(bindings: Iterable[Binding] = KEYS) -> list[tuple[str, str]]:
    """(keys, what they do) rows for the help screen, e.g. ("Left / A", "move left")."""
    labels: dict[str | Command, list[str]] = {}
    for b in bindings:
        names = labels.setdefault(b.target, [])
        if b.label not in names:
            names.append(b.label)
    return [(" / ".join(names), DESCRIPTIONS[target]) for target, names in labels.items()]


@dataclass(slots=True)
class _Held:
    sources: set[Hashable] = field(default_factory=set)
    held_ms: float = 0.0
    fired: int = 0  # repeats already emitted since this hold became active


class InputMapper:
    """Turns key events and on-screen button presses into engine inputs with DAS/ARR repeat.

    `handle()` takes pygame events and returns UI commands at once; engine inputs come from
    `update(dt_ms)`, once per fixed step, so the timing is the same in every frame rate.
    """

    def __init__(self, bindings: Iterable[Binding] = KEYS) -> None:
        bindings = tuple(bindings)
        self._plain: dict[int, str | Command] = {}
        self._shifted: dict[int, str | Command] = {}
        for b in bindings:
            (self._shifted if b.shift else self._plain).setdefault(b.key, b.target)
        self._pending: list[Input] = []
        self._held: dict[str, _Held] = {}
        self._horizontal: list[str] = []  # held left/right, the one in control last
        self._keys_down: set[int] = set()
        self._tap_keys: frozenset[int] = frozenset(b.key for b in bindings if b.on_tap)
        self._tapping: dict[int, str] = {}  # tap keys down with no other key pressed since

    # ------------------------------------------------------------------ events
    def target_for(self, event: pygame.event.Event) -> str | Command | None:
        """What a KEYDOWN means: an action name, a Command, or None for unbound keys."""
        key = getattr(event, "key", None)
        if getattr(event, "unicode", "") == "?":  # any layout's question mark
            return Command.HELP
        if getattr(event, "mod", 0) & pygame.KMOD_SHIFT and key in self._shifted:
            return self._shifted[key]
        return None if key is None else self._plain.get(key)

    def handle(self, event: pygame.event.Event) -> list[Command]:
        if event.type == pygame.KEYDOWN:
            if event.key in self._keys_down:  # the OS's own key repeat: we do our own
                return []
            self._keys_down.add(event.key)
            self._tapping.clear()  # another key while Shift is down: Shift was a modifier
            target = self.target_for(event)
            if event.key in self._tap_keys and isinstance(target, str):
                self._tapping[event.key] = target
                return []
            if isinstance(target, Command):
                return [target]
            if target is not None:
                self._press(target, ("key", event.key))
        elif event.type == pygame.KEYUP:
            self._keys_down.discard(event.key)
            tapped = self._tapping.pop(event.key, None)
            if tapped is not None:
                self._pending.append(ACTIONS[tapped])
            self._release_source(("key", event.key))
        elif event.type in FOCUS_LOST:
            self.reset()  # key-ups are not delivered to an unfocused window
        return []

    def press(self, name: str) -> None:
        """An on-screen button went down; it repeats like its key while held."""
        if name not in ACTIONS:
            raise ValueError(f"unknown action {name!r}; known: {', '.join(ACTIONS)}")
        self._press(name, ("button", name))

    def release(self, name: str) -> None:
        if name not in ACTIONS:
            raise ValueError(f"unknown action {name!r}; known: {', '.join(ACTIONS)}")
        self._release(name, ("button", name))

    def reset(self) -> None:
        """Forget held keys and presses not yet delivered (pause, focus loss, scene change)."""
        self._pending.clear()
        self._held.clear()
        self._horizontal.clear()
        self._keys_down.clear()
        self._tapping.clear()

    def is_held(self, name: str) -> bool:
        return name in self._held

    # ------------------------------------------------------------------ time
    def update(self, dt_ms: float) -> list[Input]:
        """The engine inputs due in this step: new presses first, then repeats of held keys."""
        out, self._pending = self._pending, []
        active = self._horizontal[-1] if self._horizontal else None
        for name, held in self._held.items():
            rule = REPEATS.get(name)
            if rule is None or (name in HORIZONTAL and name != active):
                continue
            held.held_ms += dt_ms
            due = rule.due(held.held_ms)
            if due > held.fired:
                out.extend([ACTIONS[name]] * min(due - held.fired, MAX_REPEATS_PER_STEP))
                held.fired = due
        return out

    # ------------------------------------------------------------------ internals
    def _press(self, name: str, source: Hashable) -> None:
        held = self._held.get(name)
        if held is not None:  # already down through another key or button: not a new press
            held.sources.add(source)
            return
        self._held[name] = _Held({source})
        self._pending.append(ACTIONS[name])
        if name in HORIZONTAL:
            self._horizontal.append(name)

    def _release(self, name: str, source: Hashable) -> None:
        held = self._held.get(name)
        if held is None:
            return
        held.sources.discard(source)
        if held.sources:
            return
        del self._held[name]
        if name in self._horizontal:
            was_active = self._horizontal[-1] == name
            self._horizontal.remove(name)
            if was_active and self._horizontal:
                other = self._held[self._horizontal[-1]]
                other.held_ms = 0.0  # back in control: DAS starts over, no extra move
                other.fired = 0

    def _release_source(self, source: Hashable) -> None:
        for name in [n for n, h in self._held.items() if source in h.sources]:
            self._release(name, source)


# --------------------------------------------------------------------------- touch gestures


@dataclass(frozen=True, slots=True)
class GestureTuning:
    """Thresholds of the touch gestures, in canvas pixels and milliseconds."""

    cell_px: float = 22.0  # one board column/row: the distance that moves a piece one cell
    tap_slop_px: float = 10.0  # a tap may wander this far
    tap_ms: float = 250.0
    long_press_ms: float = 450.0
    flick_window_ms: float = 160.0  # a downward drag this young may still become a flick
    flick_px_per_ms: float = 0.8
    flick_min_cells: float = 2.0
    swipe_up_cells: float = 2.0
    two_finger_ms: float = 350.0


TUNING = GestureTuning()
_TOUCH_MOUSE = ("touch-mouse",)  # pointer id of a touch seen only through its mouse copy


def finger_position(event: pygame.event.Event, canvas_size: tuple[int, int]) -> tuple[float, float] | None:
    """A finger event's position on the canvas, or None when its coordinates are not finite
    numbers (a driver's glitch must not crash the game). SDL normalises them to the window; a
    finger slightly outside stays outside, a wild value is held to twice the canvas."""
    try:
        x, y = float(event.x), float(event.y)
    except (AttributeError, TypeError, ValueError):
        return None
    if not (math.isfinite(x) and math.isfinite(y)):
        return None
    return (min(max(x, -1.0), 2.0) * canvas_size[0], min(max(y, -1.0), 2.0) * canvas_size[1])


@dataclass(slots=True)
class _Pointer:
    start: tuple[float, float]
    pos: tuple[float, float]
    start_ms: float
    anchor_x: float = 0.0
    cells_down: int = 0  # whole cells dragged downwards so far
    drops_sent: int = 0
    axis: str | None = None  # "x" or "y" once the drag leaves the tap slop
    moved: bool = False  # left the slop at some point: no longer a tap or long press
    acted: bool = False  # produced a move, drop or split already


class GestureReader:
    """Swipes and taps on the board, for phones reading the article.

    - drag sideways: move one column per cell width dragged
    - tap: rotate clockwise
    - drag down: soft drop one row per cell (after a short wait, so a flick is not also a drag)
    - flick down fast: hard drop
    - swipe up: hold
    - long press, or a two-finger tap: page split

    Reads FINGERDOWN/FINGERMOTION/FINGERUP (coordinates normalised to the window) and, when
    `accept_mouse` is set, mouse button 1 drags; mouse events SDL synthesises from touches are
    ignored once real finger events have been seen. `region` (canvas px) limits where a gesture
    may start. Call `update(dt_ms)` every fixed step: long presses and drags need the clock.
    """

    def __init__(self, canvas_size: tuple[int, int] = (800, 580),
                 region: pygame.Rect | tuple[int, int, int, int] | None = None,
                 accept_mouse: bool = False, tuning: GestureTuning = TUNING) -> None:
        self.canvas_size = canvas_size
        self.region = pygame.Rect(region) if region is not None else None
        self.accept_mouse = accept_mouse
        self.tuning = tuning
        self._now = 0.0
        self._pointers: dict[Hashable, _Pointer] = {}
        self._primary: Hashable | None = None
        self._multi = False  # a second finger joined: a two-finger gesture
        self._multi_moved = False
        self._started_ms = 0.0
        self._seen_fingers = False

    def reset(self) -> None:
        self._pointers.clear()
        self._primary = None
        self._multi = False
        self._multi_moved = False

    @property
    def active(self) -> bool:
        """A gesture is in progress (the scene may skip its own pointer handling)."""
        return bool(self._pointers)

    # ------------------------------------------------------------------ events
    def handle(self, event: pygame.event.Event) -> list[Input]:
        t = event.type
        pid: Hashable
        if t in (pygame.FINGERDOWN, pygame.FINGERMOTION, pygame.FINGERUP):
            pid = ("finger", getattr(event, "touch_id", 0), event.finger_id)
            found = finger_position(event, self.canvas_size)
            if found is None:  # NaN or infinite coordinates: a lift still ends its gesture
                held = self._pointers.get(pid)
                if t != pygame.FINGERUP or held is None:
                    return []
                found = held.pos
            pos = found
            if t == pygame.FINGERDOWN:
                self._adopt(pid)
            self._seen_fingers = True
        elif t in (pygame.MOUSEBUTTONDOWN, pygame.MOUSEMOTION, pygame.MOUSEBUTTONUP):
            if not self.accept_mouse or t != pygame.MOUSEMOTION and event.button != 1:
                return []
            if getattr(event, "touch", False):  # SDL's mouse copy of a touch
                if self._seen_fingers:
                    return []
                pid = _TOUCH_MOUSE
            else:
                pid = ("mouse",)
            pos = (float(event.pos[0]), float(event.pos[1]))
        else:
            return []
        if t in (pygame.FINGERDOWN, pygame.MOUSEBUTTONDOWN):
            return self._down(pid, pos)
        if t in (pygame.FINGERMOTION, pygame.MOUSEMOTION):
            return self._move(pid, pos)
        return self._up(pid, pos)

    def _adopt(self, pid: Hashable) -> None:
        """SDL sends a touch's mouse copy before the finger itself: let the finger take over."""
        pointer = self._pointers.pop(_TOUCH_MOUSE, None)
        if pointer is not None:
            self._pointers[pid] = pointer
            if self._primary == _TOUCH_MOUSE:
                self._primary = pid

    def update(self, dt_ms: float) -> list[Input]:
        self._now += dt_ms
        p = self._pointers.get(self._primary) if self._primary is not None else None
        if p is None or self._multi:
            return []
        if not p.moved and not p.acted and self._now - p.start_ms >= self.tuning.long_press_ms:
            p.acted = True
            return [Input.SPLIT]
        return self._soft_drops(p)

    # ------------------------------------------------------------------ internals
    def _down(self, pid: Hashable, pos: tuple[float, float]) -> list[Input]:
        if self.region is not None and not self.region.collidepoint(pos):
            return []  # e.g. a second finger on an on-screen button: not part of this gesture
        if self._pointers:
            if pid in self._pointers:
                return []
            self._multi = True  # a second finger: this is a two-finger gesture now
            primary = self._pointers.get(self._primary)
            if primary is not None and primary.acted:
                self._multi_moved = True  # the first finger already moved the piece
            self._pointers[pid] = _Pointer(pos, pos, self._now)
            return []
        self._pointers[pid] = _Pointer(pos, pos, self._now, anchor_x=pos[0])
        self._primary = pid
        self._started_ms = self._now
        self._multi = False
        self._multi_moved = False
        return []

    def _move(self, pid: Hashable, pos: tuple[float, float]) -> list[Input]:
        p = self._pointers.get(pid)
        if p is None:
            return []
        p.pos = pos
        dx, dy = pos[0] - p.start[0], pos[1] - p.start[1]
        slop = self.tuning.tap_slop_px
        if abs(dx) > slop or abs(dy) > slop:
            p.moved = True
            if p.axis is None:
                p.axis = "x" if abs(dx) >= abs(dy) else "y"
        if self._multi:
            self._multi_moved = self._multi_moved or p.moved
            return []
        if pid != self._primary or p.axis is None:
            return []
        cell = self.tuning.cell_px
        out: list[Input] = []
        if p.axis == "x":
            while pos[0] - p.anchor_x >= cell:
                p.anchor_x += cell
                out.append(Input.RIGHT)
            while p.anchor_x - pos[0] >= cell:
                p.anchor_x -= cell
                out.append(Input.LEFT)
        else:
            p.cells_down = max(p.cells_down, int(dy // cell))
            out.extend(self._soft_drops(p))
        if out:
            p.acted = True
        return out

    def _soft_drops(self, p: _Pointer) -> list[Input]:
        """Rows dragged down, released once the drag is too old to be a flick."""
        if p.axis != "y" or self._now - p.start_ms < self.tuning.flick_window_ms:
            return []
        n = p.cells_down - p.drops_sent
        if n <= 0:
            return []
        p.drops_sent = p.cells_down
        p.acted = True
        return [Input.SOFT_DROP] * n

    def _up(self, pid: Hashable, pos: tuple[float, float]) -> list[Input]:
        if pid not in self._pointers:
            return []
        out = self._move(pid, pos)
        p = self._pointers.pop(pid)
        if self._multi:
            self._multi_moved = self._multi_moved or p.moved or p.acted
            if self._pointers:  # wait for the last finger
                return out
            split = (not self._multi_moved
                     and self._now - self._started_ms <= self.tuning.two_finger_ms)
            self.reset()
            return [Input.SPLIT] if split else []
        self._primary = None
        if p.acted and p.axis != "y":
            return out
        tune = self.tuning
        duration = max(1.0, self._now - p.start_ms)
        dy = pos[1] - p.start[1]
        if not p.moved:
            if not p.acted and duration <= tune.tap_ms:
                return out + [Input.ROTATE_CW]
            return out
        if p.axis == "y":
            cell = tune.cell_px
            if (dy >= tune.flick_min_cells * cell and dy / duration >= tune.flick_px_per_ms
                    and p.drops_sent == 0):
                return out + [Input.HARD_DROP]
            if dy <= -tune.swipe_up_cells * cell:
                return out + [Input.HOLD]
            if p.cells_down > p.drops_sent:  # a slow short drag: deliver its rows now
                out += [Input.SOFT_DROP] * (p.cells_down - p.drops_sent)
                p.drops_sent = p.cells_down
        return out
