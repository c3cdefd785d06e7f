"""The play console draws what the engine says: blocks filled by their tokens, the waiting queue,
the greyed request waiting to be paged, and no external fragmentation in paged mode."""
from __future__ import annotations

import pygame
import pytest
from tests.uikit import canvas, make_app

from engine import Game, Input
from engine import rules as R
from engine.board import Board
from ui import console_view as cv
from ui import theme
from ui.console_view import ConsoleView, ViewState
from ui.play_scene import PlayScene

HIDDEN = R.HIDDEN

GAME_DEFAULTS = Game.__init__.__defaults__ or ()  # seed, mode, endless, features, then the rest


def _recorded_text(app, monkeypatch) -> list[str]:
    drawn: list[str] = []
    blit = app.text.blit

    def recording(surface, text, px, colour, pos, anchor="topleft"):
        drawn.append(text)
        return blit(surface, text, px, colour, pos, anchor)

    monkeypatch.setattr(app.text, "blit", recording)
    return drawn


def _play(tmp_path, mode: str = "paged", layout: str = "landscape", seed: int = 11) -> tuple:
    canvas()
    app = make_app(tmp_path, layout=layout)
    play = PlayScene(app, mode=mode, seed=seed)
    app.reset(play)
    return app, play


def _draw(app, play) -> pygame.Surface:
    surface = pygame.Surface(app.layout.size)
    app.view.draw(surface, play.session, ViewState())
    return surface


def _split_landed(play) -> object:
    """Split the falling request and let its prompt's chunk land (chunked prefill): the request,
    holding its blocks."""
    game = play.game
    play.session.step(0.0, [Input.SPLIT])
    req = next(iter(game.serving.running.values()))
    while not req.blocks and not game.over:
        play.session.step(100.0)
    return req


def _pixel(surface: pygame.Surface, app, cell: tuple[int, int], dx: int, dy: int) -> tuple[int, int, int]:
    r = app.layout.cell_rect(cell[0], cell[1] - HIDDEN)
    return tuple(surface.get_at((r.x + dx, r.y + dy)))[:3]


@pytest.mark.parametrize("tokens", [1, 8, 16])
def test_a_block_fills_from_the_bottom_as_far_as_the_engine_says(tmp_path, monkeypatch, tokens):
    app, play = _play(tmp_path)
    game = play.game
    req = _split_landed(play)
    play.session.effects.clear()  # no landing flash or cascade over the blocks
    cell = req.blocks[0]
    asked: list[object] = []

    def told(serving):  # the engine's answer, whatever the request's real token count is
        asked.append(serving)
        return [(c, req.id, tokens) for c in req.blocks]

    monkeypatch.setattr(cv, "fills", told)
    surface = _draw(app, play)
    assert asked == [game.serving]  # the fills were asked of the engine, once for the layer
    c = app.layout.cell
    colour = game.serving.requests[req.id].kind
    from engine import PIECES
    filled = cv._shade(PIECES[colour].colour, 0.42)
    empty = cv._shade(PIECES[colour].colour, 0.16)
    height = cv.block_fill(tokens, c)
    low, high = _pixel(surface, app, cell, c // 2, c - 3), _pixel(surface, app, cell, c // 2, 4)
    assert low != empty  # the bottom fills first
    assert (high == empty) == (height < c - 6)
    if height > 2:
        assert _pixel(surface, app, cell, c // 2, c - 2 - height // 2) == filled


def test_the_fill_follows_decoding_without_the_view_counting_tokens(tmp_path):
    app, play = _play(tmp_path)
    game = play.game
    _split_landed(play)
    play.session.effects.clear()
    top = None
    for _ in range(200):  # decode until some request's last block has room to fill further
        for req in game.serving.running.values():
            found = game.serving.cell_tokens(req.blocks[-1])
            if found is not None and found[2] <= R.TOKENS_PER_BLOCK - 4:
                top = req.blocks[-1]
        if top is not None:
            break
        play.session.step(R.DECODE_STEP_MS)
    assert top is not None
    play.session.effects.clear()
    c = app.layout.cell
    before = game.serving.cell_tokens(top)[2]
    probe = (c // 2, c - 2 - cv.block_fill(before, c) - 1)  # just above the fill line
    was = _pixel(_draw(app, play), app, top, *probe)
    for _ in range(40):  # decoding steps on: more tokens, more fill
        found = game.serving.cell_tokens(top)
        if found is None or found[2] >= before + 3:
            break
        play.session.step(R.DECODE_STEP_MS / 4)
    found = game.serving.cell_tokens(top)
    assert found is not None and found[2] >= before + 3
    now = _pixel(_draw(app, play), app, top, *probe)
    assert was != now


def test_the_queue_panel_lists_each_waiting_request_with_its_size_and_wait(tmp_path, monkeypatch):
    app, play = _play(tmp_path)
    game = play.game
    for _ in range(2000):  # nobody presses anything: a queue builds
        if len(game.serving.waiting) >= 3 or game.over:
            break
        play.session.step(250.0)
    assert not game.over
    waiting = list(game.serving.waiting)
    old = waiting[0]
    old.queued_ms = game.time_ms - 0.9 * R.DEADLINE_MS  # close to its deadline
    bars: list[tuple[tuple[int, int, int, int], float, tuple[int, int, int]]] = []
    draw_bar = cv.draw_bar
    monkeypatch.setattr(cv, "draw_bar", lambda s, r, f, colour: (bars.append((r, f, colour)), draw_bar(s, r, f, colour)))
    drawn = _recorded_text(app, monkeypatch)
    _draw(app, play)
    assert f"{len(waiting)}/{R.QUEUE_MAX}" in drawn
    rows = app.view.queue_rows(game)
    assert rows[0] == (game.falling, True) and [r for r, _ in rows[1:]] == waiting
    for req in waiting:
        assert f"{req.context} tok {game.serving.need(req)} blk" in drawn
    qx, qy, qw, qh = app.layout.panels["queue"]
    in_queue = [(f, colour) for (x, y, _, _), f, colour in bars if qx <= x < qx + qw and qy <= y < qy + qh]
    assert any(abs(f - 0.9) < 1e-6 and colour == theme.RED for f, colour in in_queue)
    assert any(colour == theme.GREEN for _, colour in in_queue)  # the newest has waited little


def test_a_full_queue_says_how_many_more_wait(tmp_path, monkeypatch):
    app, play = _play(tmp_path)
    game = play.game
    for _ in range(2000):
        if len(game.serving.waiting) >= 7 or game.over:
            break
        play.session.step(250.0)
        for req in game.serving.waiting:  # keep everyone inside the deadline
            req.queued_ms = game.time_ms
        if game.falling is not None:
            game.falling.queued_ms = game.time_ms
    assert len(game.serving.waiting) >= 6
    drawn = _recorded_text(app, monkeypatch)
    _draw(app, play)
    assert any(t.startswith("+") and t.endswith("more") for t in drawn)


@pytest.mark.parametrize("layout", ["landscape", "portrait"])
def test_paged_shows_no_external_fragmentation_ever(tmp_path, monkeypatch, layout):
    app, play = _play(tmp_path, layout=layout)
    game = play.game
    # Free blocks covered by held ones: contiguous calls them sealed off; paged can use them.
    game.set_board(Board.from_strings(["##########", "#.#.#.#.#.", "#.#.#.#.#."]))
    tele = game.telemetry()
    assert tele.sealed_holes == 0 and tele.fragmentation == 0.0
    drawn = _recorded_text(app, monkeypatch)
    _draw(app, play)
    assert "frag 0 %" in drawn
    high = type("Tele", (), {"fragmentation": 0.9})()
    assert ConsoleView._fragmentation(game, high) == (0.0, False)  # never red, whatever it is told
    contiguous = Game(seed=1, mode="contiguous")
    assert ConsoleView._fragmentation(contiguous, high) == (0.9, True)


def test_the_waste_gauge_shows_a_share_only_once_enough_requests_run(tmp_path, monkeypatch):
    app, play = _play(tmp_path)
    game = play.game
    _split_landed(play)
    tele = game.telemetry()
    assert 0 < tele.resident < R.WASTE_SHOWN_FROM and tele.waste_share > 0  # one part-filled tail
    drawn = _recorded_text(app, monkeypatch)
    _draw(app, play)
    dashes = drawn.count("-")  # the gauge's, beside the step budget's "-" button
    assert dashes and app.tr.pct(tele.waste_share) not in drawn
    while game.telemetry().resident < R.WASTE_SHOWN_FROM and not game.over:
        play.session.step(250.0, [Input.SPLIT])
    drawn.clear()
    _draw(app, play)
    assert drawn.count("-") == dashes - 1 and app.tr.pct(game.telemetry().waste_share) in drawn


def test_contiguous_counts_the_sealed_blocks_in_its_gauge(tmp_path, monkeypatch):
    app, play = _play(tmp_path, mode="contiguous")
    game = play.game
    game.set_board(Board.from_strings(["##########", "#.#.#.#.#.", "#.#.#.#.#."]))
    tele = game.telemetry()
    assert tele.sealed_holes == 10
    drawn = _recorded_text(app, monkeypatch)
    _draw(app, play)
    assert f"frag {round(tele.fragmentation * 100)} %" in drawn and f"{tele.usable_free}" in drawn


@pytest.mark.parametrize("layout", ["landscape", "portrait"])
def test_a_request_waiting_to_be_paged_is_greyed_at_the_spawn_with_what_to_do(tmp_path, monkeypatch, layout):
    app, play = _play(tmp_path, layout=layout)
    game = play.game
    rows = ["##########"] * 2 + ["#########."] * 18  # the top of VRAM is full, a column is free
    game.set_board(Board.from_strings(rows))
    for _ in range(400):
        if game.blocked is not None or game.over:
            break
        play.session.step(theme.STEP_MS)
    assert game.blocked is not None
    drawn = _recorded_text(app, monkeypatch)
    _draw(app, play)
    assert "WAITING TO BE PAGED" in drawn
    hint = "SPLIT: page it now" if layout == "portrait" else "Shift / P: page it now"
    assert hint in drawn
    bars: list[float] = []
    monkeypatch.setattr(cv, "draw_bar", lambda surface, rect, value, colour: bars.append(value))
    _draw(app, play)
    assert game.paged_in_ms() is not None and game.paged_in_ms() / R.DECODE_STEP_MS in bars
    assert any("cannot be placed whole" in e.text for e in play.session.log.entries)


def test_the_block_table_panel_shows_the_tokens_of_each_page(tmp_path, monkeypatch):
    app, play = _play(tmp_path)
    game = play.game
    play.session.step(0.0, [Input.SPLIT])
    bt = play.session.focus_table()
    assert bt is not None
    drawn = _recorded_text(app, monkeypatch)
    app.view._table = None
    _draw(app, play)
    assert f"{bt.tokens}/{R.MAX_SEQ_TOKENS} tok" in drawn
    for page, _ in bt.entries:
        held = max(0, min(R.TOKENS_PER_BLOCK, bt.tokens - page * R.TOKENS_PER_BLOCK))
        assert f"{held}/{R.TOKENS_PER_BLOCK}" in drawn
    assert game.board.version == game.board.version  # drawing wrote nothing


def _shared_and_cached(tmp_path, monkeypatch) -> tuple:
    """A paged play with prefix caching (rules 4's switch): two requests of one workload map
    the same prefix block; then one of another workload finishes, its prefix block cached-free."""
    from engine.features import Features
    from engine.pieces import Kind
    from engine.workload import Arrival, Scripted, prefix_id
    from tests.enginekit import drop, run_until

    features = Features(prefixes=True, prefix_cache=True)
    monkeypatch.setattr(Game.__init__, "__defaults__", (0, "contiguous", False, features, *GAME_DEFAULTS[4:]))
    app, play = _play(tmp_path)
    game = play.game
    game.set_workload(Scripted(()))
    search = prefix_id(Kind.T, 0)  # one block of a search pipeline's instructions
    first = game.falling
    first.prefix, first.prompt, first.output = search, 20, 60
    drop(game, Kind.O, x=0)
    game.set_workload(Scripted([Arrival(50, Kind.T, game.time_ms, 20, 60, search),
                                Arrival(51, Kind.S, game.time_ms, 33, 2, prefix_id(Kind.S, 0))]))
    game.update(0.001)
    drop(game, Kind.O, x=2)
    drop(game, Kind.O, x=6)
    third = game.serving.requests[51]
    cached = third.blocks[:2]
    run_until(game, lambda: third.state == "finished")
    play.session.effects.clear()
    return app, play, first.blocks[0], cached


def test_a_shared_block_shows_how_many_requests_map_it(tmp_path, monkeypatch):
    app, play, shared, _ = _shared_and_cached(tmp_path, monkeypatch)
    assert play.game.serving.cache.refs(shared) == 2
    drawn = _recorded_text(app, monkeypatch)
    app.view._layer_key = None
    _draw(app, play)
    assert "2" in drawn
    assert play.session.colour_of(play.game.board.grid[shared[1]][shared[0]]) == cv.PIECES[cv.Kind.T].colour


def test_a_cached_free_block_is_drawn_apart_from_free_and_held_ones(tmp_path, monkeypatch):
    app, play, _, cached = _shared_and_cached(tmp_path, monkeypatch)
    game = play.game
    assert set(cached) <= set(game.board.cached_cells())
    surface = _draw(app, play)
    free_cell = next((x, y) for y in range(R.HEIGHT - 1, HIDDEN, -1) for x in range(R.WIDTH)
                     if not game.board.masks[y] >> x & 1 and not game.board.cached[y] >> x & 1)
    edge = _pixel(surface, app, cached[0], 2, 2)
    assert edge != _pixel(surface, app, free_cell, 2, 2)  # its dashed outline
    assert edge != cv.PIECES[cv.Kind.S].colour  # not drawn as held


@pytest.mark.parametrize("layout", ["landscape", "portrait"])
def test_a_click_on_a_waiting_request_picks_it_to_run_next(tmp_path, monkeypatch, layout):
    from engine.features import Features
    from engine.pieces import Kind
    from engine.workload import Arrival, Scripted

    features = Features(pick=True)
    monkeypatch.setattr(Game.__init__, "__defaults__", (0, "contiguous", False, features, *GAME_DEFAULTS[4:]))
    app, play = _play(tmp_path, layout=layout)
    game = play.game
    game.set_workload(Scripted([Arrival(50 + i, Kind.O, game.time_ms, 8, 8) for i in range(3)]))
    game.update(0.001)
    view = app.view
    x, y, w, h = app.layout.panels["queue"]
    spots = [(x + w // 2, y + 24 + i * (view.T.small + (6 if app.layout.portrait else 8)) + 3)
             for i in range(4)]
    assert view.queue_pick_at(game, spots[0]) is None  # the falling request's own row
    shown = len(view._queue_layout(view.queue_rows(game), app.layout.panels["queue"])[0]) - 1
    assert [view.queue_pick_at(game, p) for p in spots[1:]] == [0, 1, 2][:shown] + [None] * (3 - shown)
    last = spots[shown]  # the last waiting request the panel shows (a phone's shows two)
    play.pointer_down(last)
    play.update(1000 / 60)
    assert game.picked == 50 + shown - 1
    drawn = _recorded_text(app, monkeypatch)
    surface = _draw(app, play)
    outline = surface.get_at((x + 3, last[1]))[:3]
    assert outline == theme.MAGENTA  # the picked row is outlined
    assert drawn  # the panel drew its rows
    plain = Features()
    monkeypatch.setattr(Game.__init__, "__defaults__", (0, "contiguous", False, plain, *GAME_DEFAULTS[4:]))
    app2, play2 = _play(tmp_path, layout=layout)
    assert app2.view.queue_pick_at(play2.game, spots[1]) is None  # rules 3: first come, first served


def test_the_queue_shows_how_many_blocks_of_a_request_are_cached(tmp_path, monkeypatch):
    from engine.features import Features
    from engine.pieces import Kind
    from engine.workload import Arrival, Scripted, prefix_id

    features = Features(prefixes=True, prefix_cache=True)
    monkeypatch.setattr(Game.__init__, "__defaults__", (0, "contiguous", False, features, *GAME_DEFAULTS[4:]))
    app, play = _play(tmp_path)
    game = play.game
    game.set_workload(Scripted(()))
    agent = prefix_id(Kind.S, 0)
    first = game.falling
    first.prefix, first.prompt, first.output = agent, 40, 60
    game.update(0, [Input.HARD_DROP])
    game.set_workload(Scripted([Arrival(60, Kind.S, game.time_ms, 40, 10, agent),
                                Arrival(61, Kind.S, game.time_ms, 40, 10, agent)]))
    game.update(0.001)
    assert len(game.serving.waiting) == 1
    drawn = _recorded_text(app, monkeypatch)
    _draw(app, play)
    assert drawn.count("+2") == 2  # the falling one and the waiting one find two blocks cached


def test_the_decode_step_panel_shows_the_steps_length_and_without_a_budget_no_buttons(tmp_path, monkeypatch):
    from engine.features import RULES3

    monkeypatch.setattr(Game.__init__, "__defaults__", (0, "contiguous", False, RULES3, *GAME_DEFAULTS[4:]))
    app, play = _play(tmp_path)
    drawn = _recorded_text(app, monkeypatch)
    _draw(app, play)
    assert app.tr.t("hud.step_length", seconds=R.DECODE_STEP_MS / 1000.0) in drawn
    down, up = app.view.step_buttons()
    assert app.view.step_button_at(play.game, down.center) == 0  # rules 3: prefill stalls, no budget


def test_the_step_budget_buttons_set_the_budget_through_the_game(tmp_path, monkeypatch):
    from engine.features import Features

    features = Features(chunked_prefill=True)
    monkeypatch.setattr(Game.__init__, "__defaults__", (0, "contiguous", False, features, *GAME_DEFAULTS[4:]))
    app, play = _play(tmp_path)
    game = play.game
    down, up = app.view.step_buttons()
    play.pointer_down(up.center)
    play.update(1000 / 60)
    assert game.serving.prefill.budget == R.BUDGETS[R.BUDGETS.index(R.DEFAULT_BUDGET) + 1]
    assert Input.BUDGET_UP in [i for _, inputs in play.tape.replay.steps for i in inputs]  # replayable
    play.pointer_down(down.center)
    play.pointer_down(down.center)
    play.update(1000 / 60)
    budget = game.serving.prefill.budget
    assert budget == R.BUDGETS[R.BUDGETS.index(R.DEFAULT_BUDGET) - 1]
    drawn = _recorded_text(app, monkeypatch)
    _draw(app, play)
    assert any(text.startswith(app.tr.t("hud.step_budget", budget=budget, seconds=0.0).split(",")[0])
               for text in drawn)


def test_n_picks_the_next_waiting_request_in_turn(tmp_path, monkeypatch):
    from engine.features import Features
    from engine.pieces import Kind
    from engine.workload import Arrival, Scripted
    from ui.input import Command

    monkeypatch.setattr(Game.__init__, "__defaults__", (0, "contiguous", False, Features(pick=True), *GAME_DEFAULTS[4:]))
    app, play = _play(tmp_path)
    game = play.game
    game.set_workload(Scripted([Arrival(70 + i, Kind.O, game.time_ms, 8, 8) for i in range(4)]))
    game.update(0.001)
    seen = []
    for _ in range(4):
        play.command(Command.PICK_NEXT)
        play.update(1000 / 60)
        seen.append(game.picked)
    assert seen == [70, 71, 72, 70]  # the front (next anyway), the second, the third, the front...


def test_a_frame_that_redraws_the_board_leaves_new_log_lines_to_the_next_never_two_running(tmp_path, monkeypatch):
    app, play = _play(tmp_path)
    _draw(app, play)
    _draw(app, play)  # a frame with the board as it was
    drawn = _recorded_text(app, monkeypatch)
    play.session.log.add(play.game.time_ms, "INFO", "first new line")
    app.view._layer_key = None  # the board layer is drawn again this frame
    _draw(app, play)
    assert not any("first new line" in t for t in drawn)  # the log waits a frame...
    _draw(app, play)
    assert any("first new line" in t for t in drawn)  # ...and only one
    drawn.clear()
    play.session.log.add(play.game.time_ms, "INFO", "second new line")
    for _ in range(2):  # the board is drawn again two frames running: the second draws the log
        app.view._layer_key = None
        _draw(app, play)
    assert any("second new line" in t for t in drawn)


def test_the_console_shows_the_prefix_hit_rate_and_the_time_to_first_token_as_they_stand(tmp_path, monkeypatch):
    from engine.ending import serving_figures

    app, play = _play(tmp_path)
    game = play.game
    for _ in range(400):  # requests split as they fall, until some found their prompt cached
        play.session.step(250.0, [Input.SPLIT])
        figures = serving_figures(game)
        if figures["prefix_hit_rate"] and figures["ttft_ms_mean"] is not None:
            break
    drawn = _recorded_text(app, monkeypatch)
    _draw(app, play)
    tr = app.tr
    assert tr.t("hud.hit_rate", percent=tr.pct(figures["prefix_hit_rate"])) in drawn
    counts = tr.t("hud.counts_ttft", running=game.telemetry().resident, seconds=figures["ttft_ms_mean"] / 1000,
                  tokens=tr.num(game.telemetry().tokens))
    assert any(t == counts or (t.endswith("...") and len(t) > 20 and counts.startswith(t[:-3])) for t in drawn)
