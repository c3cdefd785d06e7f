"""LAB screen: headless render, memory maps, selection, controls, leaving."""
from __future__ import annotations

import pygame
import pytest
from tests.uikit import canvas, centre, click, key, make_app, pump

from engine.lab import generate
from ui import lab_scene, theme
from ui.lab_scene import (
    BLOCK_CHOICES,
    FREE,
    MAX_LAG_S,
    MAX_PAINT,
    TRACE_CHUNK,
    TRACE_REQUESTS,
    Grid,
    LabScene,
    MemoryMap,
    _main,
    cell_state,
)
from ui.title_scene import TitleScene

pytestmark = pytest.mark.usefixtures("clean_event_queue")


def open_lab(tmp_path, steps: int = 300) -> tuple[object, LabScene]:
    app = make_app(tmp_path)
    app.reset(TitleScene(app, seed=1))
    assert app.open_lab()
    lab = app.top
    assert isinstance(lab, LabScene)
    pump(app, steps)
    return app, lab


SETUP_FRAMES = -(-TRACE_REQUESTS // TRACE_CHUNK) + 2  # trace slices, then one engine a frame


def button(lab: LabScene, name: str):
    return next(b for b in lab.buttons if b.name == name)


def test_lab_renders_both_maps_headless(tmp_path):
    app, lab = open_lab(tmp_path)
    surface = pygame.Surface(theme.CANVAS_SIZE)
    app.draw(surface)
    contiguous, paged = lab.sides
    assert contiguous.sim.allocator == "oracle" and paged.sim.paged
    assert contiguous.sim.clock > 0 and paged.sim.clock > 0
    # Both maps show the same memory in the same geometry: one cell per block.
    assert contiguous.map.grid.cells == paged.map.grid.cells == 983
    assert contiguous.map.grid.cell == paged.map.grid.cell
    assert Grid.fit(983, lab._map_area(1)) == paged.map.grid
    for side in lab.sides:
        g = side.map.grid
        assert g.cols * g.cell <= 385 and g.rows * g.cell <= 300
        assert any(side.map.owner(i) is not None for i in range(g.cells)), "requests hold memory"
    # The paged map's cells are painted: a held block is not the free colour.
    rid, cells = next(iter(paged.map.owned.items()))
    assert surface.get_at(paged.map.grid.rect(cells[0]).center)[:3] != (20, 26, 48)


def test_paged_map_matches_block_tables(tmp_path):
    _, lab = open_lab(tmp_path, steps=240)
    paged = lab.sides[1]
    paged.dirty = True
    paged.refresh_map(limit=None)
    for rid, table in paged.sim.block_tables().items():
        assert paged.map.owned[rid] == table
        for b in table:
            assert paged.map.owner(b) == rid


def test_clicking_a_block_selects_its_request(tmp_path):
    app, lab = open_lab(tmp_path)
    paged = lab.sides[1]
    rid, cells = max(paged.map.owned.items(), key=lambda item: len(item[1]))
    click(app, paged.map.grid.rect(cells[-1]).center, steps=0)
    assert lab.selected == rid
    surface = pygame.Surface(theme.CANVAS_SIZE)
    app.draw(surface)
    # Every block of the request is outlined in white.
    for i in cells:
        r = paged.map.grid.rect(i).inflate(2, 2)
        assert surface.get_at(r.topleft)[:3] == (255, 255, 255)
    # Clicking free memory clears the selection.
    free = [i for i in range(paged.map.grid.cells) if paged.map.owner(i) is None]
    if free:
        click(app, paged.map.grid.rect(free[0]).center, steps=0)
        assert lab.selected is None


def test_clicking_the_contiguous_map_selects_too(tmp_path):
    app, lab = open_lab(tmp_path)
    contiguous = lab.sides[0]
    rid, cells = next(iter(contiguous.map.owned.items()))
    click(app, contiguous.map.grid.rect(cells[0]).center, steps=0)
    assert lab.selected == rid


def test_escape_and_l_return_to_the_title(tmp_path):
    app, lab = open_lab(tmp_path, steps=5)
    key(app, pygame.K_ESCAPE)
    assert isinstance(app.top, TitleScene)
    assert app.open_lab()
    key(app, pygame.K_l)
    assert isinstance(app.top, TitleScene)
    assert app.open_lab()
    click(app, centre(button(app.top, "back").rect))
    assert isinstance(app.top, TitleScene)


def test_pause_and_speed(tmp_path):
    app, lab = open_lab(tmp_path, steps=10)
    key(app, pygame.K_SPACE)
    assert lab.paused
    clock = lab.clock
    pump(app, 30)
    assert lab.clock == clock
    click(app, centre(button(lab, "pause").rect))
    assert not lab.paused
    key(app, pygame.K_3, steps=0)
    assert lab.speed == 16
    before = lab.clock
    pump(app, 6)
    assert lab.clock - before == pytest.approx(6 * theme.STEP_MS / 1000 * 16)
    click(app, centre(button(lab, "x1").rect), steps=0)
    assert lab.speed == 1


def test_dataset_block_size_and_allocator_controls(tmp_path):
    app, lab = open_lab(tmp_path, steps=SETUP_FRAMES + 10)
    key(app, pygame.K_d, steps=0)
    assert lab.dataset == "alpaca" and lab.rate == 30
    assert lab.clock == 0 and not lab.ready  # restarted: a new trace is being drawn
    pump(app, SETUP_FRAMES)
    assert lab.ready and lab.trace == generate("alpaca", TRACE_REQUESTS, 30.0, lab.seed)
    trace = lab.trace
    key(app, pygame.K_b, steps=0)
    assert lab.block == BLOCK_CHOICES[(BLOCK_CHOICES.index(16) + 1) % len(BLOCK_CHOICES)]
    pump(app, 1)  # same trace: one engine a frame
    assert lab.ready and lab.trace is trace
    assert lab.sides[1].map.grid.cells == 15728 // lab.block
    assert lab.sides[1].sim.config.block_size == lab.block
    click(app, centre(button(lab, "contiguous").rect), steps=1)
    assert lab.ready and lab.sides[0].sim.allocator == "pow2" and lab.trace is trace
    click(app, centre(button(lab, "contiguous").rect), steps=1)
    assert lab.sides[0].sim.allocator == "max"
    pump(app, 120)
    surface = pygame.Surface(theme.CANVAS_SIZE)
    app.draw(surface)
    assert lab.sides[1].sim.clock > 0


def test_memory_stays_consistent_while_running(tmp_path):
    app, lab = open_lab(tmp_path, steps=5)
    key(app, pygame.K_3, steps=0)
    for _ in range(10):
        pump(app, 40)
        for side in lab.sides:
            side.dirty = True
            side.refresh_map(limit=None)
            owners = [side.map.owner(i) for i in range(side.map.grid.cells)]
            owners = [rid for rid in owners if rid is not None]
            assert set(owners) <= set(side.sim.running)
            if side.sim.paged:
                assert len(owners) == side.sim.blocks_used


def test_setup_is_spread_over_frames_and_shows_progress(tmp_path):
    app, lab = open_lab(tmp_path, steps=0)
    surface = pygame.Surface(theme.CANVAS_SIZE)
    for frame in range(SETUP_FRAMES - 1):
        assert not lab.ready
        pump(app, 1)
        app.draw(surface)  # the maps' panels say how far the trace is
    pump(app, 1)
    assert lab.ready and lab.clock == 0
    assert lab.trace == generate("sharegpt", TRACE_REQUESTS, 2.0, lab.seed)


def test_next_trace_is_drawn_ahead_and_the_restart_is_immediate(tmp_path):
    app, lab = open_lab(tmp_path, steps=SETUP_FRAMES)
    seed = lab.seed
    pump(app, TRACE_REQUESTS // lab_scene.PREFETCH_CHUNK + 1)
    ahead = lab.builders[("sharegpt", seed + 1)]
    assert ahead.done
    for side in lab.sides:  # end the trace
        while not side.sim.done:
            side.sim.step()
    pump(app, 1)
    assert lab.seed == seed + 1 and lab.trace == [] and not lab.ready
    pump(app, 2)  # the trace is ready; one engine a frame
    assert lab.ready and lab.trace is ahead.requests


def test_map_repaints_at_most_a_slice_per_refresh():
    canvas()
    grid = Grid.fit(983, (0, 0, 369, 232))
    memory = MemoryMap(grid)
    states = [cell_state(i % 7, grid.cell - 1) for i in range(983)]
    left, rounds = 983, 0
    while left:
        now = memory.update(states, {}, MAX_PAINT)
        assert 0 < left - now <= MAX_PAINT  # progress, within the cap
        left, rounds = now, rounds + 1
        assert left == sum(1 for a, b in zip(states, memory.states) if a != b)
    assert memory.states == states and rounds <= 2 * 983 // MAX_PAINT
    # A painted cell shows its request's colour; an unlimited update paints everything at once.
    assert memory.surface.get_at(grid.rect(5).move(-grid.x, -grid.y).center)[:3] == lab_scene.request_colour(5)
    assert memory.update([FREE] * 983, {}, None) == 0 and memory.states == [FREE] * 983
    assert memory.owner(5) is None


def test_slow_engines_hold_the_clock_back(tmp_path):
    app, lab = open_lab(tmp_path, steps=SETUP_FRAMES)
    lab.sim_budget_s = 0.0  # one engine step per side and frame, as on a very slow machine
    lab.speed = 16
    pump(app, 120)
    slowest = min(side.sim.clock for side in lab.sides)
    assert lab.clock - slowest <= MAX_LAG_S + 1e-9
    assert lab.clock > 1.0


def test_tokens_per_second_keep_counting_after_the_last_arrival(tmp_path):
    app, lab = open_lab(tmp_path, steps=SETUP_FRAMES + 5)
    paged = lab.sides[1]
    sim = paged.sim
    while not sim.window_closed:
        sim.step()
    before = sim.tokens_generated
    paged.advance_to(sim.clock + 5.0, budget_s=1.0)
    assert sim.tokens_generated > before and paged.tokens_per_s() > 0


def test_selected_request_shows_its_block_table_in_legible_text(tmp_path, monkeypatch):
    app, lab = open_lab(tmp_path)
    rendered: list[tuple[str, int]] = []
    real = lab.text.render

    def record(text, size, colour):
        rendered.append((text, size))
        return real(text, size, colour)

    monkeypatch.setattr(lab.text, "render", record)
    paged = lab.sides[1]
    rid, cells = max(paged.map.owned.items(), key=lambda item: len(item[1]))
    click(app, paged.map.grid.rect(cells[0]).center, steps=0)
    lab.chrome = None
    app.draw(pygame.Surface(theme.CANVAS_SIZE))
    texts = [text for text, _ in rendered]
    assert f"REQUEST #{rid}" in texts
    assert any(text.startswith("vLLM block table:") for text in texts)
    table = paged.sim.block_tables()[rid]
    assert any(f"0>{table[0]}" in text for text in texts)
    assert min(size for _, size in rendered) >= 13  # logical pixels


@pytest.mark.parametrize("argv", [["--frames", "0"], ["--frames", "-3"], ["--frames", "x"], ["--speed", "2"],
                                  ["--dataset", "wiki"]])
def test_headless_tool_rejects_bad_arguments(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        _main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "usage:" in err and "Traceback" not in err


def test_headless_bench_prints_frame_times(capsys):
    assert _main(["--bench", "--frames", "30"]) == 0
    out = capsys.readouterr().out
    assert "Alpaca x16" in out and "ShareGPT x1" in out and "p99" in out


def test_headless_screenshot_is_the_same_picture_every_time(tmp_path, capsys):
    shots = [tmp_path / "a.png", tmp_path / "b.png"]
    for shot in shots:
        assert _main(["--frames", "90", "--speed", "16", "--select", "--screenshot", str(shot)]) == 0
    assert "saved" in capsys.readouterr().out
    first, second = (pygame.image.load(str(shot)) for shot in shots)
    assert first.get_size() == theme.CANVAS_SIZE
    assert pygame.image.tobytes(first, "RGB") == pygame.image.tobytes(second, "RGB")


def test_contiguous_cells_show_how_full_each_range_is(tmp_path):
    _, lab = open_lab(tmp_path)
    contiguous = lab.sides[0]
    contiguous.dirty = True
    contiguous.refresh_map(limit=None)
    width = contiguous.map.grid.cell - 1
    block = lab.block
    for rid, cells in contiguous.map.owned.items():
        run = contiguous.sim.running[rid]
        solid = [contiguous.map.solid(i) for i in cells]
        assert all(contiguous.map.owner(i) == rid for i in cells)
        assert solid == sorted(solid, reverse=True)  # tokens fill a range from its start
        assert solid[0] == width or run.start % block or contiguous.sim.length(run) < block
        assert solid[-1] < width or contiguous.sim.length(run) >= run.reserve - block
