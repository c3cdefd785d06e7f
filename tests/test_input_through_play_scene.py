"""Keys, mouse, touch buttons and board gestures posted to SDL's event queue reach the engine
through a running play scene (tests/test_input_unit.py covers ui.input alone)."""
from __future__ import annotations

import pygame
import pytest
from tests.uikit import canvas, centre, click, key, make_app, pump

from ui import layout as L
from ui.play_scene import PlayScene


@pytest.fixture
def play(tmp_path):
    canvas()
    pygame.event.clear()
    app = make_app(tmp_path)
    scene = PlayScene(app, mode="paged", seed=11)
    app.reset(scene)
    pump(app, 2)
    return app, scene


def test_left_and_right_keys_move_the_piece(play):
    app, scene = play
    x = scene.game.active.x
    key(app, pygame.K_LEFT)
    assert scene.game.active.x == x - 1
    key(app, pygame.K_d)
    key(app, pygame.K_d)
    assert scene.game.active.x == x + 1


def test_rotate_keys_turn_the_piece(play):
    app, scene = play
    r = scene.game.active.rotation
    key(app, pygame.K_UP)
    assert scene.game.active.rotation == (r + 1) % 4
    key(app, pygame.K_z)
    assert scene.game.active.rotation == r


def test_hard_drop_and_hold(play):
    app, scene = play
    first = scene.game.active.kind
    key(app, pygame.K_c)
    assert scene.game.hold_kind == first
    for _ in range(3000):  # the next request arrives on its own clock
        if scene.game.active is not None:
            break
        pump(app, 1)
    pieces = scene.game.pieces
    key(app, pygame.K_SPACE)
    assert scene.game.pieces == pieces + 1


def test_split_key_in_paged_mode_fills_the_block_table(play):
    app, scene = play
    assert scene.game.split_ready
    need = scene.game.serving.need(scene.game.falling)  # its prompt's blocks: paged holds no more
    key(app, pygame.K_LSHIFT)
    for _ in range(300):  # its prompt lands a chunk a step (chunked prefill), here in one
        bt = scene.game.block_table
        if bt is not None and len(bt.entries) == need:
            break
        pump(app, 1)
    assert bt is not None and len(bt.entries) == need and bt.reserved == 0
    assert scene.session.effects.highlight is not None  # cells outlined on the board
    assert any("[PAGED]" in e.text for e in scene.session.log.entries)


def test_r_switches_the_preemption_mode_and_the_replay_keeps_it(play):
    app, scene = play
    from engine import Input
    assert scene.game.preempt_mode == "recompute"
    key(app, pygame.K_r)
    assert scene.game.preempt_mode == "swap"
    assert any(Input.PREEMPT_TOGGLE in inputs for _, inputs in scene.tape.replay.steps)
    assert any("preemption mode -> SWAP" in e.text for e in scene.session.log.entries)
    key(app, pygame.K_r)
    assert scene.game.preempt_mode == "recompute"


@pytest.mark.parametrize("layout", ["landscape", "portrait"])
def test_the_preemption_switch_answers_a_click_or_a_tap(tmp_path, layout):
    canvas()
    pygame.event.clear()
    app = make_app(tmp_path, layout=layout)
    scene = PlayScene(app, mode="paged", seed=11)
    app.reset(scene)
    pump(app, 2)
    click(app, centre(app.view.preempt.rect))
    assert scene.game.preempt_mode == "swap"
    click(app, centre(app.view.preempt.rect))
    assert scene.game.preempt_mode == "recompute"


def test_a_click_on_a_block_shows_that_requests_table_and_turns_nothing(play):
    app, scene = play
    game = scene.game
    from engine import Input, rules as R
    for _ in range(4):  # a few requests running, each split into pages
        for _ in range(3000):
            if game.active is not None:
                break
            pump(app, 1)
        scene.session.step(0.0, [Input.SPLIT])
    oldest = min(game.serving.running.values(), key=lambda r: r.order)
    assert scene.session.focus_table().request_id != oldest.id
    x, y = oldest.blocks[0]
    pose = (game.active.rotation, game.active.x) if game.active is not None else None
    click(app, centre(app.layout.cell_rect(x, y - R.HIDDEN)), steps=0)
    assert scene.session.focus_table().request_id == oldest.id
    assert (game.active.rotation, game.active.x) == pose if pose is not None else True


def test_split_refused_in_contiguous_mode_shows_its_card(tmp_path):
    canvas()
    pygame.event.clear()
    app = make_app(tmp_path)
    scene = PlayScene(app, mode="contiguous", seed=2)
    app.reset(scene)
    key(app, pygame.K_p)
    assert scene.game.block_table is None
    assert scene.cards.current is not None and scene.cards.current.id == "split_refused"
    assert "split_refused" in app.settings.seen_cards


def test_mode_buttons_switch_the_allocator_and_persist(play):
    app, scene = play
    click(app, centre(L.MODE_CONTIGUOUS_BTN))
    assert scene.game.mode == "contiguous"
    assert app.storage.load().mode == "contiguous"
    click(app, centre(L.MODE_PAGED_BTN))
    assert scene.game.mode == "paged"
    assert any("[MODE]" in e.text for e in scene.session.log.entries)


def test_on_screen_buttons_work_with_the_mouse(play):
    app, scene = play
    rects = L.control_rects()
    x = scene.game.active.x
    click(app, centre(rects["left"]))
    assert scene.game.active.x == x - 1
    r = scene.game.active.rotation
    click(app, centre(rects["rotate_cw"]))
    assert scene.game.active.rotation == (r + 1) % 4
    kind = scene.game.active.kind
    click(app, centre(rects["hold"]))
    assert scene.game.hold_kind == kind


def test_held_on_screen_button_repeats_after_das(play):
    app, scene = play
    x0 = scene.game.active.x
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONDOWN, pos=centre(L.control_rects()["right"]),
                                         button=1, touch=False))
    pump(app, 1)
    assert scene.game.active.x == x0 + 1
    assert "right" in scene.state.pressed
    pump(app, 14)  # ~250 ms: DAS 170 ms then ARR 50 ms
    assert scene.game.active.x >= x0 + 2
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONUP, pos=(0, 0), button=1, touch=False))
    pump(app, 1)
    assert not scene.state.pressed


def test_fingers_hold_their_own_controls(play):
    app, scene = play
    rects = L.control_rects()
    w, h = 800, 580
    lx, ly = centre(rects["left"])
    rx, ry = centre(rects["rotate_cw"])
    x0, r0 = scene.game.active.x, scene.game.active.rotation
    pygame.event.post(pygame.event.Event(pygame.FINGERDOWN, touch_id=1, finger_id=1, x=lx / w, y=ly / h,
                                         dx=0, dy=0, pressure=1))
    pygame.event.post(pygame.event.Event(pygame.FINGERDOWN, touch_id=1, finger_id=2, x=rx / w, y=ry / h,
                                         dx=0, dy=0, pressure=1))
    pump(app, 1)
    assert scene.game.active.x == x0 - 1
    assert scene.game.active.rotation == (r0 + 1) % 4
    assert scene.state.pressed == {"left", "rotate_cw"}
    pygame.event.post(pygame.event.Event(pygame.FINGERUP, touch_id=1, finger_id=1, x=lx / w, y=ly / h,
                                         dx=0, dy=0, pressure=0))
    pygame.event.post(pygame.event.Event(pygame.FINGERUP, touch_id=1, finger_id=2, x=rx / w, y=ry / h,
                                         dx=0, dy=0, pressure=0))
    pump(app, 1)
    assert not scene.state.pressed


def test_tapping_the_board_rotates(play):
    app, scene = play
    r = scene.game.active.rotation
    click(app, centre(L.BOARD))
    assert scene.game.active.rotation == (r + 1) % 4


def test_engine_events_become_log_lines_but_moves_do_not(play):
    app, scene = play
    before = len(scene.session.log.entries)
    key(app, pygame.K_LEFT)
    assert len(scene.session.log.entries) == before
    key(app, pygame.K_SPACE)
    texts = [e.text for e in scene.session.log.entries]
    assert any(t.startswith("[ALLOC]") or t.startswith("[SCHED]") for t in texts[before:])


def test_header_buttons(play):
    app, scene = play
    click(app, centre(L.HEADER_BUTTONS["mute"]))
    assert app.settings.muted and app.sound.muted
    click(app, centre(L.HEADER_BUTTONS["pause"]))
    assert type(app.top).__name__ == "PauseScene"


def test_cascade_animation_targets_the_block_table_cells(play):
    app, scene = play
    key(app, pygame.K_p, steps=0)
    cascades = scene.session.effects.cascades
    assert cascades, "a split starts the page cascade"
    targets = cascades[0].targets()
    pump(app, 60)
    assert not scene.session.effects.cascades
    for _ in range(300):  # the pages land where the cascade went as the prompt's chunk does
        bt = scene.game.block_table
        if bt is not None and bt.resident:
            break
        pump(app, 1)
    assert targets and targets == {c for _, c in bt.resident if c is not None}


def test_slim_header_buttons_answer_a_finger_just_outside_them(play):
    app, scene = play
    x, y, w, h = L.HEADER_BUTTONS["pause"]
    click(app, (x + w // 2, y + h + 8))  # below the drawn button, inside its tap target
    assert type(app.top).__name__ == "PauseScene"
    app.pop()
    x, y, w, h = L.MODE_CONTIGUOUS_BTN
    click(app, (x + w // 2, y - 6))
    assert scene.game.mode == "contiguous"


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf"), 1e308])
def test_fingers_with_broken_coordinates_never_crash_the_play_screen(play, bad):
    app, scene = play
    rects = L.control_rects()
    lx, ly = centre(rects["left"])
    for t in (pygame.FINGERDOWN, pygame.FINGERMOTION, pygame.FINGERUP):
        for x, y in ((bad, 0.5), (0.5, bad), (bad, bad)):
            pygame.event.post(pygame.event.Event(t, touch_id=1, finger_id=7, x=x, y=y, dx=bad, dy=bad, pressure=1))
    pump(app, 3)
    # A finger that went down properly is still released by a lift with broken coordinates.
    pygame.event.post(pygame.event.Event(pygame.FINGERDOWN, touch_id=1, finger_id=8, x=lx / 800, y=ly / 580,
                                         dx=0, dy=0, pressure=1))
    pump(app, 1)
    assert scene.state.pressed == {"left"}
    pygame.event.post(pygame.event.Event(pygame.FINGERUP, touch_id=1, finger_id=8, x=bad, y=bad,
                                         dx=0, dy=0, pressure=0))
    pump(app, 1)
    assert not scene.state.pressed
    app.draw()
