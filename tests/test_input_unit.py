"""Unit tests of ui.input alone (no scene, no app): keyboard map, DAS/ARR repeat timing,
on-screen buttons and touch gestures. tests/test_input_through_play_scene.py drives the same
input through SDL's event queue and a running play scene."""

from __future__ import annotations

import os

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

import pygame
import pytest
from hypothesis import given, settings, strategies as st

from engine import Game, Input
from engine import events as ev
from ui.input import (
    ACTIONS,
    ARR_MS,
    BUTTONS,
    DAS_MS,
    KEYS,
    MAX_REPEATS_PER_STEP,
    TUNING,
    Command,
    GestureReader,
    InputMapper,
    legend,
)

STEP = 1000.0 / 60.0


def down(key: int, mod: int = 0, unicode: str = "") -> pygame.event.Event:
    return pygame.event.Event(pygame.KEYDOWN, key=key, mod=mod, unicode=unicode, scancode=0)


def up(key: int, mod: int = 0) -> pygame.event.Event:
    return pygame.event.Event(pygame.KEYUP, key=key, mod=mod, unicode="", scancode=0)


def run(mapper: InputMapper, ms: float, step: float = 10.0) -> list[Input]:
    """Advance in fixed steps for `ms` milliseconds; all inputs emitted on the way."""
    out: list[Input] = []
    steps = round(ms / step)
    for _ in range(steps):
        out += mapper.update(step)
    return out


def held_for(key: int, ms: float, step: float = 10.0) -> list[Input]:
    m = InputMapper()
    assert m.handle(down(key)) == []
    return run(m, ms, step)


def expected_moves(ms: float) -> int:
    """The rule from the brief: 1 + floor((T - DAS) / ARR) + 1 once T >= DAS."""
    return 1 + (int((ms - DAS_MS) // ARR_MS) + 1 if ms >= DAS_MS else 0)


# ------------------------------------------------------------------ the key table

SPEC_ACTIONS = [
    (pygame.K_LEFT, Input.LEFT), (pygame.K_a, Input.LEFT),
    (pygame.K_RIGHT, Input.RIGHT), (pygame.K_d, Input.RIGHT),
    (pygame.K_DOWN, Input.SOFT_DROP), (pygame.K_s, Input.SOFT_DROP),
    (pygame.K_UP, Input.ROTATE_CW), (pygame.K_w, Input.ROTATE_CW), (pygame.K_x, Input.ROTATE_CW),
    (pygame.K_z, Input.ROTATE_CCW),
    (pygame.K_SPACE, Input.HARD_DROP),
    (pygame.K_c, Input.HOLD),
    (pygame.K_LSHIFT, Input.SPLIT), (pygame.K_RSHIFT, Input.SPLIT), (pygame.K_p, Input.SPLIT),
    (pygame.K_1, Input.MODE_CONTIGUOUS), (pygame.K_2, Input.MODE_PAGED),
    (pygame.K_TAB, Input.MODE_TOGGLE),
    (pygame.K_r, Input.PREEMPT_TOGGLE),
    (pygame.K_LEFTBRACKET, Input.BUDGET_DOWN), (pygame.K_RIGHTBRACKET, Input.BUDGET_UP),
    (pygame.K_MINUS, Input.SPEC_DOWN), (pygame.K_EQUALS, Input.SPEC_UP),
]
SPEC_COMMANDS = [
    (pygame.K_ESCAPE, 0, "", Command.PAUSE),
    (pygame.K_m, 0, "m", Command.MUTE),
    (pygame.K_h, 0, "h", Command.HELP),
    (pygame.K_QUESTION, 0, "?", Command.HELP),
    (pygame.K_SLASH, pygame.KMOD_LSHIFT, "?", Command.HELP),
    (pygame.K_SLASH, pygame.KMOD_RSHIFT, "", Command.HELP),
    (pygame.K_COMMA, pygame.KMOD_SHIFT, "?", Command.HELP),  # AZERTY's question mark
    (pygame.K_RETURN, 0, "\r", Command.START),
    (pygame.K_KP_ENTER, 0, "\r", Command.START),
    (pygame.K_l, 0, "l", Command.LAB),
    (pygame.K_t, 0, "t", Command.TOGGLE_CARDS),
    (pygame.K_e, 0, "e", Command.TOGGLE_ENDLESS),
    (pygame.K_q, 0, "q", Command.QUIT),
    (pygame.K_k, 0, "k", Command.LANGUAGE),
    (pygame.K_n, 0, "n", Command.PICK_NEXT),
    (pygame.K_g, 0, "g", Command.CHAPTERS),
]


@pytest.mark.parametrize("key, expected", SPEC_ACTIONS)
def test_every_action_key_maps(key: int, expected: Input) -> None:
    m = InputMapper()
    assert m.handle(down(key)) == []
    if key in (pygame.K_LSHIFT, pygame.K_RSHIFT):  # Shift acts when tapped: on release
        assert m.update(STEP) == []
        m.handle(up(key))
    assert m.update(STEP) == [expected]


@pytest.mark.parametrize("shift", [pygame.K_LSHIFT, pygame.K_RSHIFT])
def test_shift_splits_when_tapped_but_not_as_the_question_mark(shift: int) -> None:
    m = InputMapper()
    m.handle(down(shift))
    run(m, 300)
    m.handle(up(shift))
    assert m.update(STEP) == [Input.SPLIT]  # a tap, however long
    m.handle(down(shift))
    assert m.handle(down(pygame.K_SLASH, pygame.KMOD_SHIFT, "?")) == [Command.HELP]
    m.handle(up(pygame.K_SLASH, pygame.KMOD_SHIFT))
    m.handle(up(shift))
    assert run(m, 200) == [], "typing ? must not spend a split"
    m.handle(down(shift))
    m.handle(down(pygame.K_LEFT))
    m.handle(up(shift))
    assert run(m, 20) == [Input.LEFT]
    m.handle(up(pygame.K_LEFT))
    m.handle(down(shift))
    m.reset()  # focus lost while Shift was down: its key-up never comes
    m.handle(up(shift))
    assert run(m, 20) == []


def test_p_splits_at_once() -> None:
    m = InputMapper()
    m.handle(down(pygame.K_p))
    assert m.update(STEP) == [Input.SPLIT]


@pytest.mark.parametrize("key, mod, uni, expected", SPEC_COMMANDS)
def test_every_command_key_maps(key: int, mod: int, uni: str, expected: Command) -> None:
    m = InputMapper()
    assert m.handle(down(key, mod, uni)) == [expected]
    assert m.update(STEP) == [], "commands never reach the engine"


def test_table_has_nothing_the_spec_does_not_know() -> None:
    spec_keys = {k for k, _ in SPEC_ACTIONS} | {k for k, *_ in SPEC_COMMANDS}
    assert {b.key for b in KEYS} <= spec_keys
    assert {b.target for b in KEYS if isinstance(b.target, str)} <= set(ACTIONS)
    assert set(BUTTONS) <= set(ACTIONS)


def test_p_is_split_never_pause() -> None:
    m = InputMapper()
    assert m.handle(down(pygame.K_p, unicode="p")) == []
    assert m.update(STEP) == [Input.SPLIT]
    assert Command.PAUSE not in m.handle(down(pygame.K_p, pygame.KMOD_SHIFT, "P"))
    assert m.handle(down(pygame.K_ESCAPE)) == [Command.PAUSE]


def test_plain_slash_and_unbound_keys_do_nothing() -> None:
    m = InputMapper()
    for key in (pygame.K_SLASH, pygame.K_F5, pygame.K_j, pygame.K_0):
        assert m.handle(down(key)) == []
        m.handle(up(key))
    assert m.update(STEP) == []


def test_legend_names_every_target() -> None:
    rows = dict((what, keys) for keys, what in legend())
    assert rows["move left"] == "Left / A"
    assert rows["rotate clockwise"] == "Up / W / X"
    assert rows["page split (paged mode)"] == "Shift / P"
    assert rows["help"] == "H / ?"
    assert rows["pause"] == "Esc"
    assert len(rows) == len({b.target for b in KEYS})


# ------------------------------------------------------------------ DAS / ARR


def test_held_right_for_400ms_moves_six_times() -> None:
    assert expected_moves(400) == 6
    assert held_for(pygame.K_RIGHT, 400) == [Input.RIGHT] * 6


def test_repeat_moments_are_exact() -> None:
    m = InputMapper()
    m.handle(down(pygame.K_LEFT))
    fired_at = []
    for i in range(1, 41):  # 10 ms steps to 400 ms
        if m.update(10.0):
            fired_at.append(i * 10)
    assert fired_at == [10, 170, 220, 270, 320, 370]


@pytest.mark.parametrize("ms", [10, 160, 170, 180, 210, 220, 400, 1000, 2000])
def test_das_arr_formula(ms: int) -> None:
    assert len(held_for(pygame.K_d, ms)) == expected_moves(ms)


def test_das_arr_at_60hz_steps() -> None:
    # 24 steps of 1000/60 ms are 400 ms: float sums must not lose a repeat
    assert held_for(pygame.K_RIGHT, 400, STEP) == [Input.RIGHT] * 6
    assert len(held_for(pygame.K_RIGHT, 1000, STEP)) == expected_moves(1000)


def test_soft_drop_repeats_at_arr_straight_away() -> None:
    assert held_for(pygame.K_DOWN, 400) == [Input.SOFT_DROP] * 9  # 0, 50, 100 ... 400
    assert held_for(pygame.K_s, 40) == [Input.SOFT_DROP]
    assert held_for(pygame.K_s, 50) == [Input.SOFT_DROP] * 2


@pytest.mark.parametrize("key", [pygame.K_SPACE, pygame.K_UP, pygame.K_z, pygame.K_c,
                                 pygame.K_p, pygame.K_1, pygame.K_TAB])
def test_one_shot_actions_do_not_repeat(key: int) -> None:
    assert len(held_for(key, 2000)) == 1


def test_a_tap_inside_one_frame_still_counts() -> None:
    m = InputMapper()
    m.handle(down(pygame.K_LEFT))
    m.handle(up(pygame.K_LEFT))
    assert m.update(STEP) == [Input.LEFT]
    assert run(m, 500) == []


def test_release_stops_repeats() -> None:
    m = InputMapper()
    m.handle(down(pygame.K_RIGHT))
    assert len(run(m, 250)) == expected_moves(250)
    m.handle(up(pygame.K_RIGHT))
    assert run(m, 1000) == []


def test_os_key_repeat_is_ignored() -> None:
    m = InputMapper()
    m.handle(down(pygame.K_RIGHT))
    out = m.update(10)
    for _ in range(5):
        m.handle(down(pygame.K_RIGHT))  # what SDL sends with key repeat on
        out += m.update(10)
    assert out == [Input.RIGHT]
    m.handle(down(pygame.K_SPACE))
    m.handle(down(pygame.K_SPACE))
    assert m.update(10).count(Input.HARD_DROP) == 1


def test_most_recent_direction_wins() -> None:
    m = InputMapper()
    m.handle(down(pygame.K_LEFT))
    out = run(m, 100)
    assert out == [Input.LEFT]
    m.handle(down(pygame.K_RIGHT))  # both held now: right takes over at once
    out = run(m, 400)
    assert out == [Input.RIGHT] * expected_moves(400)
    m.handle(up(pygame.K_RIGHT))  # left is back in control, DAS starts over, no extra move
    assert run(m, 160) == []
    assert run(m, 10) == [Input.LEFT]
    assert run(m, 50) == [Input.LEFT]


def test_pressing_the_older_direction_again_takes_control() -> None:
    m = InputMapper()
    m.handle(down(pygame.K_LEFT))
    m.handle(down(pygame.K_RIGHT))
    assert m.update(10) == [Input.LEFT, Input.RIGHT]
    m.handle(up(pygame.K_LEFT))  # releasing the one not in control changes nothing
    assert run(m, 160) == [Input.RIGHT]  # its DAS: 10 + 160 = 170 ms


def test_two_keys_for_one_action_are_one_hold() -> None:
    m = InputMapper()
    m.handle(down(pygame.K_LEFT))
    run(m, 100)
    m.handle(down(pygame.K_a))  # same action, already held: not a new press
    assert run(m, 70) == [Input.LEFT]  # the repeat at 170 ms, from the first press
    m.handle(up(pygame.K_LEFT))  # still held through A
    assert run(m, 50) == [Input.LEFT]
    m.handle(up(pygame.K_a))
    assert run(m, 500) == []


def test_soft_drop_and_direction_repeat_together() -> None:
    m = InputMapper()
    m.handle(down(pygame.K_DOWN))
    m.handle(down(pygame.K_RIGHT))
    out = run(m, 400)
    assert out.count(Input.SOFT_DROP) == 9
    assert out.count(Input.RIGHT) == 6


def test_stall_catch_up_is_capped() -> None:
    m = InputMapper()
    m.handle(down(pygame.K_RIGHT))
    out = m.update(10_000)
    assert out.count(Input.RIGHT) == 1 + MAX_REPEATS_PER_STEP
    assert m.update(10) == []  # the missed repeats are dropped, not queued


def test_reset_clears_held_keys() -> None:
    m = InputMapper()
    m.handle(down(pygame.K_RIGHT))
    m.handle(down(pygame.K_SPACE))
    m.reset()
    assert m.update(STEP) == [], "presses not yet delivered are dropped too"
    assert run(m, 1000) == []
    assert not m.is_held("right")
    m.handle(up(pygame.K_RIGHT))  # the late key-up is harmless
    m.handle(down(pygame.K_RIGHT))  # and the key works again
    assert m.update(STEP) == [Input.RIGHT]


@pytest.mark.parametrize("name", ["WINDOWFOCUSLOST", "WINDOWHIDDEN", "WINDOWMINIMIZED"])
def test_focus_loss_releases_everything(name: str) -> None:
    m = InputMapper()
    m.handle(down(pygame.K_LEFT))
    m.update(STEP)
    assert m.handle(pygame.event.Event(getattr(pygame, name))) == []
    assert run(m, 1000) == []


# ------------------------------------------------------------------ on-screen buttons


@pytest.mark.parametrize("name", BUTTONS)
def test_every_button_name_works(name: str) -> None:
    m = InputMapper()
    m.press(name)
    assert m.update(STEP) == [ACTIONS[name]]
    m.release(name)
    assert run(m, 500) == []


def test_buttons_repeat_like_keys() -> None:
    m = InputMapper()
    m.press("right")
    assert run(m, 400) == [Input.RIGHT] * 6
    m.release("right")
    m.press("soft_drop")
    assert run(m, 400) == [Input.SOFT_DROP] * 9
    m.release("soft_drop")
    m.press("hard_drop")
    assert run(m, 1000) == [Input.HARD_DROP]


def test_button_and_key_share_one_hold() -> None:
    m = InputMapper()
    m.press("left")
    m.handle(down(pygame.K_LEFT))
    assert m.update(10) == [Input.LEFT]
    m.release("left")
    assert run(m, 160) == [Input.LEFT]  # still held by the key: the 170 ms repeat
    m.handle(up(pygame.K_LEFT))
    assert run(m, 500) == []


def test_unknown_button_is_an_error() -> None:
    m = InputMapper()
    with pytest.raises(ValueError):
        m.press("jump")
    with pytest.raises(ValueError):
        m.release("jump")


def test_mapper_drives_a_real_game() -> None:
    game = Game(seed=5, mode="paged")
    m = InputMapper()
    start_x = game.active.x
    m.handle(down(pygame.K_RIGHT))
    moved = 0
    for _ in range(24):  # 400 ms at 60 Hz
        moved += sum(e.dx for e in game.update(STEP, m.update(STEP)) if isinstance(e, ev.Moved))
    assert game.active.x - start_x == moved == min(6, moved)
    assert moved >= 3  # it reached the wall or made all six moves


# ------------------------------------------------------------------ properties

key_choices = st.sampled_from([pygame.K_LEFT, pygame.K_RIGHT, pygame.K_a, pygame.K_d,
                               pygame.K_DOWN, pygame.K_SPACE, pygame.K_p, pygame.K_ESCAPE])
actions = st.lists(st.tuples(st.sampled_from(["down", "up", "step", "press", "release"]),
                             key_choices, st.floats(0, 120), st.sampled_from(BUTTONS)),
                   max_size=60)


@given(actions)
@settings(max_examples=200, deadline=None)
def test_no_input_after_everything_is_released(script: list) -> None:
    m = InputMapper()
    keys: set[int] = set()
    buttons: set[str] = set()
    for op, key, dt, button in script:
        if op == "down":
            m.handle(down(key))
            keys.add(key)
        elif op == "up":
            m.handle(up(key))
            keys.discard(key)
        elif op == "press":
            m.press(button)
            buttons.add(button)
        elif op == "release":
            m.release(button)
            buttons.discard(button)
        else:
            out = m.update(dt)
            assert len(out) <= 3 * (MAX_REPEATS_PER_STEP + 1) + 8
    for key in keys:
        m.handle(up(key))
    for button in buttons:
        m.release(button)
    m.update(STEP)  # presses still queued are delivered once
    assert m.update(STEP) == [] and m.update(5000) == []


@given(st.lists(st.integers(1, 50), min_size=1, max_size=120))
@settings(max_examples=200, deadline=None)
def test_held_key_count_matches_rule_for_any_step_sizes(dts: list[int]) -> None:
    m = InputMapper()
    m.handle(down(pygame.K_RIGHT))
    total = sum(len(m.update(dt)) for dt in dts)
    assert total == expected_moves(sum(dts))


# ------------------------------------------------------------------ gestures

W, H = 800, 580
CELL = TUNING.cell_px


def finger(kind: int, x: float, y: float, fid: int = 0) -> pygame.event.Event:
    return pygame.event.Event(kind, x=x / W, y=y / H, dx=0.0, dy=0.0, touch_id=1, finger_id=fid,
                              pressure=1.0)


def drag(g: GestureReader, points: list[tuple[float, float]], ms_per_point: float,
         fid: int = 0) -> list[Input]:
    out = g.handle(finger(pygame.FINGERDOWN, *points[0], fid))
    for p in points[1:]:
        out += g.update(ms_per_point)
        out += g.handle(finger(pygame.FINGERMOTION, *p, fid))
    out += g.update(ms_per_point)
    out += g.handle(finger(pygame.FINGERUP, *points[-1], fid))
    return out


def test_tap_rotates() -> None:
    g = GestureReader((W, H))
    assert drag(g, [(400, 300), (403, 302)], 40) == [Input.ROTATE_CW]


def test_slow_tap_is_not_a_tap() -> None:
    g = GestureReader((W, H))
    g.handle(finger(pygame.FINGERDOWN, 400, 300))
    out = g.update(300)
    out += g.handle(finger(pygame.FINGERUP, 400, 300))
    assert out == []


def test_long_press_splits_once() -> None:
    g = GestureReader((W, H))
    g.handle(finger(pygame.FINGERDOWN, 400, 300))
    out = []
    for _ in range(60):
        out += g.update(STEP)  # one second
    out += g.handle(finger(pygame.FINGERUP, 400, 300))
    assert out == [Input.SPLIT]


@pytest.mark.parametrize("cells, expected", [(3, Input.RIGHT), (-2, Input.LEFT)])
def test_horizontal_swipe_moves_by_cells(cells: int, expected: Input) -> None:
    g = GestureReader((W, H))
    x0 = 400
    points = [(x0 + i * cells * CELL / 10, 300 + i * 0.3) for i in range(11)]
    out = drag(g, points, 20)
    assert out == [expected] * abs(cells)


def test_swipe_moves_as_the_finger_goes() -> None:
    g = GestureReader((W, H))
    g.handle(finger(pygame.FINGERDOWN, 300, 300))
    g.update(STEP)
    assert g.handle(finger(pygame.FINGERMOTION, 300 + CELL * 1.5, 302)) == [Input.RIGHT]
    assert g.handle(finger(pygame.FINGERMOTION, 300 + CELL * 2.1, 302)) == [Input.RIGHT]
    assert g.handle(finger(pygame.FINGERMOTION, 300 + CELL * 0.9, 302)) == [Input.LEFT]
    assert g.handle(finger(pygame.FINGERUP, 300 + CELL * 0.9, 302)) == []


def test_fast_swipe_down_hard_drops() -> None:
    g = GestureReader((W, H))
    points = [(400, 200 + i * 30) for i in range(6)]  # 150 px in ~100 ms
    assert drag(g, points, 16) == [Input.HARD_DROP]


def test_slow_drag_down_soft_drops_per_cell() -> None:
    g = GestureReader((W, H))
    points = [(400, 200 + i * CELL / 2) for i in range(9)]  # 4 cells over ~480 ms
    out = drag(g, points, 60)
    assert out == [Input.SOFT_DROP] * 4


def test_swipe_up_holds() -> None:
    g = GestureReader((W, H))
    assert drag(g, [(400, 400), (401, 360), (402, 320)], 30) == [Input.HOLD]


def test_two_finger_tap_splits() -> None:
    g = GestureReader((W, H))
    out = g.handle(finger(pygame.FINGERDOWN, 350, 300, 0))
    out += g.update(30)
    out += g.handle(finger(pygame.FINGERDOWN, 450, 300, 1))
    out += g.update(60)
    out += g.handle(finger(pygame.FINGERUP, 350, 300, 0))
    out += g.update(20)
    out += g.handle(finger(pygame.FINGERUP, 451, 301, 1))
    assert out == [Input.SPLIT]


def test_two_finger_drag_or_slow_release_does_nothing() -> None:
    g = GestureReader((W, H))
    g.handle(finger(pygame.FINGERDOWN, 350, 300, 0))
    g.handle(finger(pygame.FINGERDOWN, 450, 300, 1))
    out = g.handle(finger(pygame.FINGERMOTION, 350 + 3 * CELL, 300, 0))
    out += g.handle(finger(pygame.FINGERUP, 350 + 3 * CELL, 300, 0))
    out += g.handle(finger(pygame.FINGERUP, 450, 300, 1))
    assert out == []
    g.handle(finger(pygame.FINGERDOWN, 350, 300, 0))
    g.handle(finger(pygame.FINGERDOWN, 450, 300, 1))
    out = g.update(600)  # no long press with two fingers down
    out += g.handle(finger(pygame.FINGERUP, 350, 300, 0))
    out += g.handle(finger(pygame.FINGERUP, 450, 300, 1))
    assert out == []


def test_gestures_start_only_in_the_region() -> None:
    g = GestureReader((W, H), region=(290, 42, 220, 440))
    assert drag(g, [(100, 300), (101, 300)], 30) == []
    assert drag(g, [(100, 300), (100 + 4 * CELL, 300)], 30) == []
    assert drag(g, [(400, 300), (401, 300)], 30) == [Input.ROTATE_CW]


def test_a_finger_outside_the_region_does_not_join_the_gesture() -> None:
    """One finger drags on the board while another presses an on-screen button."""
    g = GestureReader((W, H), region=(290, 42, 220, 440))
    out = g.handle(finger(pygame.FINGERDOWN, 400, 300, 0))
    out += g.handle(finger(pygame.FINGERDOWN, 700, 500, 1))  # the button, outside the board
    out += g.update(30)
    out += g.handle(finger(pygame.FINGERMOTION, 400 + CELL * 1.2, 301, 0))
    out += g.handle(finger(pygame.FINGERUP, 700, 500, 1))
    out += g.handle(finger(pygame.FINGERUP, 400 + CELL * 1.2, 301, 0))
    assert out == [Input.RIGHT]


def mouse(kind: int, pos: tuple[int, int], button: int = 1, touch: bool = False,
          buttons: tuple[int, int, int] = (1, 0, 0)) -> pygame.event.Event:
    if kind == pygame.MOUSEMOTION:
        return pygame.event.Event(kind, pos=pos, rel=(0, 0), buttons=buttons, touch=touch)
    return pygame.event.Event(kind, pos=pos, button=button, touch=touch)


def test_mouse_is_ignored_unless_asked_for() -> None:
    g = GestureReader((W, H))
    g.handle(mouse(pygame.MOUSEBUTTONDOWN, (400, 300)))
    g.update(50)
    assert g.handle(mouse(pygame.MOUSEBUTTONUP, (400, 300))) == []


def test_mouse_drags_when_accepted() -> None:
    g = GestureReader((W, H), accept_mouse=True)
    out = g.handle(mouse(pygame.MOUSEBUTTONDOWN, (400, 300)))
    out += g.update(50)
    out += g.handle(mouse(pygame.MOUSEBUTTONUP, (400, 300)))
    assert out == [Input.ROTATE_CW]
    out = g.handle(mouse(pygame.MOUSEBUTTONDOWN, (400, 300)))
    out += g.handle(mouse(pygame.MOUSEMOTION, (400 - 2 * int(CELL) - 1, 300)))
    out += g.handle(mouse(pygame.MOUSEBUTTONUP, (400 - 2 * int(CELL) - 1, 300)))
    assert out == [Input.LEFT, Input.LEFT]
    out = g.handle(mouse(pygame.MOUSEBUTTONDOWN, (400, 300), button=3))
    out += g.handle(mouse(pygame.MOUSEBUTTONUP, (400, 300), button=3))
    assert out == [] and not g.active


def test_mouse_copy_arriving_before_the_finger_is_one_pointer() -> None:
    """SDL posts a touch's synthetic mouse events before the finger events themselves."""
    g = GestureReader((W, H), accept_mouse=True)
    out = g.handle(mouse(pygame.MOUSEBUTTONDOWN, (400, 300), touch=True))
    out += g.handle(finger(pygame.FINGERDOWN, 400, 300))
    out += g.update(40)
    out += g.handle(mouse(pygame.MOUSEBUTTONUP, (400, 300), touch=True))
    out += g.handle(finger(pygame.FINGERUP, 400, 300))
    assert out == [Input.ROTATE_CW]
    assert not g.active


def test_touch_mouse_alone_still_works() -> None:
    """Where a browser delivers only the mouse copy of touches, gestures still read."""
    g = GestureReader((W, H), accept_mouse=True)
    out = g.handle(mouse(pygame.MOUSEBUTTONDOWN, (400, 300), touch=True))
    out += g.handle(mouse(pygame.MOUSEMOTION, (400 + int(CELL) + 1, 300), touch=True))
    out += g.handle(mouse(pygame.MOUSEBUTTONUP, (400 + int(CELL) + 1, 300), touch=True))
    assert out == [Input.RIGHT]


def test_touch_synthesised_mouse_is_not_read_twice() -> None:
    g = GestureReader((W, H), accept_mouse=True)
    out = g.handle(finger(pygame.FINGERDOWN, 400, 300))
    out += g.handle(mouse(pygame.MOUSEBUTTONDOWN, (400, 300), touch=True))
    out += g.update(40)
    out += g.handle(finger(pygame.FINGERUP, 400, 300))
    out += g.handle(mouse(pygame.MOUSEBUTTONUP, (400, 300), touch=True))
    assert out == [Input.ROTATE_CW]


def test_gesture_reset_forgets_fingers() -> None:
    g = GestureReader((W, H))
    g.handle(finger(pygame.FINGERDOWN, 400, 300))
    assert g.active
    g.reset()
    assert not g.active
    assert g.handle(finger(pygame.FINGERUP, 400, 300)) == []
    assert g.update(1000) == []


def test_gestures_drive_a_real_game() -> None:
    game = Game(seed=2, mode="paged")
    g = GestureReader((W, H))
    x0 = game.active.x
    game.update(STEP, drag(g, [(300, 300), (300 + 2 * CELL + 2, 301)], 30))
    assert game.active.x == x0 + 2
    inputs = drag(g, [(400, 100 + i * 40) for i in range(6)], 16)
    assert inputs == [Input.HARD_DROP]
    locked = [e for e in game.update(STEP, inputs) if isinstance(e, ev.Locked)]
    assert len(locked) == 1 and locked[0].result.drop_cells > 0
