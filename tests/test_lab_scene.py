"""LAB screen: headless render, memory maps, selection, controls, leaving."""
from __future__ import annotations

import pygame
import pytest
from tests.uikit import canvas, centre, click, key, make_app, pump

from engine.lab import generate
from engine.lab.projection import FREE, cell_state, state_fill, state_refs
from ui import lab_scene, memory_map, theme
from ui.i18n import catalogue
from ui.lab_cli import main as _main
from ui.lab_scene import MAX_LAG_S, SCENARIO_CHOICES, TRACE_CHUNK, TRACE_REQUESTS, LabScene
from ui.memory_map import MAX_PAINT, Grid, MemoryMap
from ui.title_scene import TitleScene
from tests.prockit import is_usage_error

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
    assert contiguous.sim.allocator == "oracle" and paged.sim.has_blocks
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
    rid, cells = next(iter(paged.view.owned.items()))
    assert surface.get_at(paged.map.grid.rect(cells[0]).center)[:3] != (20, 26, 48)


def test_paged_map_matches_block_tables(tmp_path):
    _, lab = open_lab(tmp_path, steps=240)
    paged = lab.sides[1]
    paged.dirty = True
    paged.refresh_map(limit=None)
    tables = paged.sim.block_tables()
    assert tables
    for (rid, _), table in tables.items():
        assert paged.view.owned[rid] == table
        for b in table:
            assert paged.map.owner(b) == rid


def test_clicking_a_block_selects_its_request(tmp_path):
    app, lab = open_lab(tmp_path)
    paged = lab.sides[1]
    rid, cells = max(paged.view.owned.items(), key=lambda item: len(item[1]))
    click(app, paged.map.grid.rect(cells[-1]).center, steps=0)
    assert lab.selected == rid and lab.selected_cell == (1, cells[-1])
    surface = pygame.Surface(theme.CANVAS_SIZE)
    app.draw(surface)
    # Every block of the request is outlined in white, on both maps.
    for i in cells:
        r = paged.map.grid.rect(i).inflate(2, 2)
        assert surface.get_at(r.topleft)[:3] in ((255, 255, 255), theme.AMBER)
    contiguous = lab.sides[0]
    for i in contiguous.view.owned.get(rid, ()):
        assert surface.get_at(contiguous.map.grid.rect(i).inflate(2, 2).topleft)[:3] == (255, 255, 255)
    # Clicking free memory clears the selection.
    free = [i for i in range(paged.map.grid.cells) if paged.map.owner(i) is None]
    if free:
        click(app, paged.map.grid.rect(free[0]).center, steps=0)
        assert lab.selected is None and lab.selected_cell is None


def test_clicking_the_contiguous_map_selects_too(tmp_path):
    app, lab = open_lab(tmp_path)
    contiguous = lab.sides[0]
    rid, cells = next(iter(contiguous.view.owned.items()))
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


def test_dataset_scenario_and_allocator_controls(tmp_path):
    app, lab = open_lab(tmp_path, steps=SETUP_FRAMES + 10)
    key(app, pygame.K_d, steps=0)
    assert lab.dataset == "alpaca" and lab.rate == 30
    assert lab.clock == 0 and not lab.ready  # restarted: a new trace is being drawn
    pump(app, SETUP_FRAMES)
    assert lab.ready and lab.trace == generate("alpaca", TRACE_REQUESTS, 30.0, lab.seed)
    trace = lab.trace
    assert lab.sides[1].map.grid.cells == 15728 // 16 and lab.sides[1].sim.config.block_size == 16
    for expected in SCENARIO_CHOICES[1:] + SCENARIO_CHOICES[:1]:
        key(app, pygame.K_s, steps=0)
        assert lab.scenario == expected and not lab.ready
        pump(app, SETUP_FRAMES)
        assert lab.ready and lab.sides[1].sim.config.sharing.label == lab.sharing.label
    pump(app, 1)
    assert lab.trace == trace  # basic again: the same requests
    click(app, centre(button(lab, "contiguous").rect), steps=1)
    assert lab.ready and lab.sides[0].sim.allocator == "pow2" and lab.trace is lab.builders[lab._trace_key(lab.seed)].requests
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
            if side.sim.has_blocks:
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
    ahead = lab.builders[lab._trace_key(seed + 1)]
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
    memory = MemoryMap(grid, 16)
    states = [cell_state(i % 7, 16) for i in range(983)]
    left, rounds = 983, 0
    while left:
        now = memory.update(states, MAX_PAINT)
        assert 0 < left - now <= MAX_PAINT  # progress, within the cap
        left, rounds = now, rounds + 1
        assert left == sum(1 for a, b in zip(states, memory.states) if a != b)
    assert memory.states == states and rounds <= 2 * 983 // MAX_PAINT
    # A painted cell shows its request's colour; an unlimited update paints everything at once.
    assert memory.surface.get_at(grid.rect(5).move(-grid.x, -grid.y).center)[:3] == memory_map.request_colour(5)
    assert memory.update([FREE] * 983, None) == 0 and memory.states == [FREE] * 983
    assert memory.owner(5) is None


def test_slow_engines_hold_the_clock_back(tmp_path):
    app, lab = open_lab(tmp_path, steps=SETUP_FRAMES)
    lab.steps_per_frame = 1  # one engine step per side and frame
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
    paged.advance_to(sim.clock + 5.0, max_steps=10_000)
    assert sim.tokens_generated > before and paged.tokens_per_s() > 0


def test_selected_block_shows_its_block_table_in_legible_text(tmp_path, monkeypatch):
    app, lab = open_lab(tmp_path)
    rendered: list[tuple[str, int]] = []
    real = lab.text.render

    def record(text, size, colour):
        rendered.append((text, size))
        return real(text, size, colour)

    monkeypatch.setattr(lab.text, "render", record)
    paged = lab.sides[1]
    rid, cells = max(paged.view.owned.items(), key=lambda item: len(item[1]))
    click(app, paged.map.grid.rect(cells[0]).center, steps=0)
    lab.chrome = None
    app.draw(pygame.Surface(theme.CANVAS_SIZE))
    texts = [text for text, _ in rendered]
    assert f"BLOCK {cells[0]}: 1 REFERENCE" in texts
    assert any(f"request #{rid}" in text for text in texts)
    assert any(text.startswith(f"block table of #{rid}:") for text in texts)
    table = paged.sim.block_tables()[(rid, 0)]
    assert any(f"0>{table[0]}" in text for text in texts)
    assert min(size for _, size in rendered) >= 13  # logical pixels
    rendered.clear()
    contiguous = lab.sides[0]
    rid, cells = next(iter(contiguous.view.owned.items()))
    click(app, contiguous.map.grid.rect(cells[0]).center, steps=0)
    app.draw(pygame.Surface(theme.CANVAS_SIZE))
    assert f"REQUEST #{rid}" in [text for text, _ in rendered]


@pytest.mark.parametrize("argv", [["--frames", "0"], ["--frames", "-3"], ["--frames", "x"], ["--speed", "2"],
                                  ["--dataset", "wiki"], ["--layout", "square"], ["--scenario", "greedy"],
                                  ["--screenshot", "out.jpg"], ["--screenshot", "/no/such/folder/out.png"],
                                  ["--fram", "3"]])
def test_headless_tool_rejects_bad_arguments(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        _main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert is_usage_error(err), err


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
    block = lab.block
    for rid, cells in contiguous.view.owned.items():
        run = contiguous.sim.running[rid]
        fills = [state_fill(contiguous.map.states[i]) for i in cells]
        assert all(contiguous.map.owner(i) == rid for i in cells)
        assert fills == sorted(fills, reverse=True)  # tokens fill a range from its start
        assert fills[0] == block or run.start % block or contiguous.sim.length(run) < block
        assert fills[-1] < block or contiguous.sim.length(run) >= run.reserve - block
        assert all(state_refs(contiguous.map.states[i]) == 1 for i in cells)  # Orca shares nothing


# ------------------------------------------------------------------ sharing on the LAB
def open_scenario(tmp_path, name: str, frames: int = 240) -> tuple[object, LabScene]:
    app, lab = open_lab(tmp_path, steps=SETUP_FRAMES)
    while lab.scenario != name:
        key(app, pygame.K_s, steps=0)
    lab.speed = 16
    pump(app, SETUP_FRAMES + frames)
    assert lab.ready
    return app, lab


@pytest.mark.parametrize("name", ["parallel", "beam"])
def test_shared_blocks_show_their_reference_count(tmp_path, name):
    app, lab = open_scenario(tmp_path, name)
    paged = lab.sides[1]
    lab.bring_up_to_date()
    shared = [i for i, state in enumerate(paged.map.states) if state_refs(state) > 1]
    assert shared, "samples or beams share blocks"
    for i in shared:
        assert state_refs(paged.map.states[i]) == paged.sim.pool.refs[i]
    surface = pygame.Surface(theme.CANVAS_SIZE)
    lab.draw(surface)
    # Pips (or a bar) along the top edge of a shared cell, white.
    cell = shared[0]
    top_right = paged.map.grid.rect(cell).topright
    assert surface.get_at((top_right[0] - 1, top_right[1]))[:3] == (255, 255, 255)
    unshared = next(i for i, state in enumerate(paged.map.states) if state_refs(state) == 1)
    r = paged.map.grid.rect(unshared)
    assert surface.get_at((r.right - 1, r.top))[:3] != (255, 255, 255)
    # The counters show what sharing saves.
    texts = [item[0] for item in lab._counters()]
    assert any(text.startswith("sharing saves ") for text in texts)
    assert 0 < paged.saving() < 1


def test_a_block_copied_on_write_flashes(tmp_path):
    app, lab = open_scenario(tmp_path, "beam", frames=60)
    paged = lab.sides[1]
    copies = paged.sim.cow_copies
    seen = set()
    for _ in range(30):
        pump(app, 1)
        seen |= set(paged.flashes)
    assert paged.sim.cow_copies > copies and seen
    cell, left = next(iter(paged.flashes.items()))
    assert left <= lab_scene.FLASH_FRAMES
    surface = pygame.Surface(theme.CANVAS_SIZE)
    lab.draw(surface)
    assert min(surface.get_at(paged.map.grid.rect(cell).center)[:3]) > 120  # washed towards white
    pump(app, lab_scene.FLASH_FRAMES + 1)
    assert cell not in paged.flashes or paged.flashes[cell] > 0


def test_clicking_a_shared_block_outlines_every_sequence_pointing_at_it(tmp_path):
    app, lab = open_scenario(tmp_path, "parallel")
    paged = lab.sides[1]
    lab.bring_up_to_date()
    view = paged.view
    cell = max(range(len(view.cells)), key=lambda i: state_refs(view.cells[i]))
    seqs = view.pointing_at(cell)
    assert len(seqs) == paged.sim.pool.refs[cell] > 1
    lab.paused = True
    click(app, paged.map.grid.rect(cell).center, steps=0)
    assert lab.selected_cell == (1, cell)
    surface = pygame.Surface(theme.CANVAS_SIZE)
    app.draw(surface)
    outlined = lab.outlined(1)
    assert set(outlined) == {c for seq in seqs for c in paged.view.sequences[seq]}
    for i in outlined:
        if i != cell:
            assert surface.get_at(paged.map.grid.rect(i).inflate(2, 2).topleft)[:3] == (255, 255, 255)
    texts = [line for line, _ in lab._info()]
    assert texts[0] == f"BLOCK {cell}: {len(seqs)} REFERENCES"
    assert any("samples of request" in line for line in texts)


def test_prefix_scenario_shares_one_cached_prefix(tmp_path):
    app, lab = open_scenario(tmp_path, "prefix", frames=120)
    paged = lab.sides[1]
    lab.bring_up_to_date()
    pinned = paged.sim.pool.pinned
    assert len(pinned) == 80 // 16
    running = len(paged.sim.running)
    assert running > 0
    for i in pinned:  # every running request points at every cached prefix block
        assert paged.map.owner(i) is None
        assert paged.sim.pool.refs[i] == running and state_refs(paged.map.states[i]) == min(15, running)


def test_reading_the_engines_never_changes_them(tmp_path):
    """Two identical LABs, one drawn every frame and one never: the same physical blocks."""
    app, drawn = open_scenario(tmp_path, "beam", frames=0)
    _, hidden = open_scenario(tmp_path, "beam", frames=0)
    surface = pygame.Surface(theme.CANVAS_SIZE)
    for _ in range(120):
        drawn.update(theme.STEP_MS)
        hidden.update(theme.STEP_MS)
        drawn.bring_up_to_date()
        drawn.draw(surface)
    for a, b in zip(drawn.sides, hidden.sides):
        assert a.sim.clock == b.sim.clock
        if a.sim.has_blocks:
            assert a.sim.block_tables() == b.sim.block_tables()


# ------------------------------------------------------------------ portrait and the command line
@pytest.mark.parametrize("size", [(800, 580), (420, 700)])
def test_layout_fits_the_canvas_and_stays_legible(size):
    from ui.lab_layout import lab_layout

    lay = lab_layout(*size)
    w, h = size
    rects = list(lay.buttons.values()) + list(lay.maps) + [lay.info] + ([lay.plot] if lay.plot else [])
    for x, y, rw, rh in rects:
        assert 0 <= x and 0 <= y and x + rw <= w and y + rh <= h
    panels = [pygame.Rect(r) for r in rects]
    for i, a in enumerate(panels):
        for b in panels[i + 1:]:
            assert not a.colliderect(b), (a, b)
    assert min(lay.small, lay.body, lay.large) >= (14 if lay.portrait else 13)
    for i in range(2):
        grid = Grid.fit(983, lay.map_area(i))
        assert grid.cell >= 7 and grid.bounds.height <= lay.map_area(i)[3]


def test_portrait_lab_draws_within_420_by_700(tmp_path, monkeypatch):
    canvas()
    app = make_app(tmp_path)
    lab = LabScene(app, size=(420, 700))
    sizes: list[int] = []
    real = lab.text.render
    monkeypatch.setattr(lab.text, "render", lambda text, size, colour: sizes.append(size) or real(text, size, colour))
    while not lab.ready:
        lab.update(theme.STEP_MS)
    for _ in range(120):
        lab.update(theme.STEP_MS)
    surface = pygame.Surface((420, 700))
    lab.draw(surface)
    assert min(sizes) >= 14
    assert lab.layout.portrait and lab.layout.plot is None


def test_portrait_screenshot_from_the_command_line(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    out = tmp_path / "out.png"
    root = Path(__file__).resolve().parents[1]
    proc = subprocess.run([sys.executable, "-m", "ui.lab_scene", "--layout", "portrait", "--frames", "300",
                           "--screenshot", str(out)], cwd=root, capture_output=True, text=True, timeout=300,
                          env={**__import__("os").environ, "SDL_VIDEODRIVER": "dummy", "SDL_AUDIODRIVER": "dummy"})
    assert proc.returncode == 0, proc.stderr
    assert "pygame-ce" not in proc.stdout + proc.stderr  # banner hidden
    width, height = pygame.image.load(str(out)).get_size()
    assert width <= 424 and 1.35 * width <= height <= 706
    bad = subprocess.run([sys.executable, "-m", "ui.lab_scene", "--layout", "tall"], cwd=root, capture_output=True,
                         text=True, timeout=120)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


@pytest.mark.parametrize("signum,status", [(2, 130), (15, 143)])
def test_signals_end_the_tool_with_the_shells_status(monkeypatch, signum, status):
    import os
    import signal

    from ui import lab_cli

    saved = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}

    def interrupted(*args, **kwargs):
        os.kill(os.getpid(), signum)
        raise AssertionError("the signal did not stop the tool")

    monkeypatch.setattr(lab_cli, "open_lab", interrupted)
    try:
        assert lab_cli.run(["--frames", "5"]) == status
    finally:
        for s, handler in saved.items():
            signal.signal(s, handler)


def test_screenshot_path_is_checked_before_any_frame(monkeypatch, capsys):
    from ui import lab_cli

    monkeypatch.setattr(lab_cli, "open_lab", lambda *a, **k: pytest.fail("ran frames before checking the path"))
    with pytest.raises(SystemExit) as exc:
        lab_cli.main(["--screenshot", "shot.jpeg"])
    assert exc.value.code == 2 and ".png" in capsys.readouterr().err


@pytest.mark.parametrize("layout", ["landscape", "portrait"])
def test_a_selected_contiguous_request_shows_how_much_of_its_reservation_is_used(tmp_path, layout):
    app = make_app(tmp_path, layout=layout)
    app.reset(TitleScene(app, seed=1))
    assert app.open_lab()
    lab = app.top
    key(app, pygame.K_s)  # parallel sampling: a range per sample, the longest line
    pump(app, SETUP_FRAMES + 300)
    contiguous = lab.sides[0]
    rid, cells = max(contiguous.view.owned.items(), key=lambda item: len(item[1]))
    click(app, contiguous.map.grid.rect(cells[0]).center, steps=0)
    assert lab.selected == rid
    run = contiguous.sim.running[rid]
    used = f"{contiguous.sim.length(run)} of {run.reserve} used"
    app.draw()
    text = " ".join(line for line, _ in lab.info_lines[1])
    assert used in text, "the reservation's fill is the point of the line: never cut off"


# ------------------------------------------------------------------ the registries
def test_lab_engines_come_from_the_registry_and_the_game_names_them():
    from engine import modes
    from engine.lab import memory

    lab = LabScene(make_app_stub(), size=theme.CANVAS_SIZE)
    assert lab.allocators == (lab_scene.DEFAULT_BASELINE, memory.REFERENCE)
    assert set(lab_scene.BASELINE_CHOICES) == set(memory.BASELINES) == set(memory.ALLOCATORS) - {memory.REFERENCE}
    # Every game mode names LAB allocators that exist; its first is the one the mode is.
    for mode in modes.MODES:
        assert mode.lab and all(name in memory.ALLOCATORS for name in mode.lab)
        assert modes.of_lab(mode.lab[0]) is mode
        assert lab_scene.accent(mode.lab[0]) == getattr(theme, mode.accent.upper())
    # A LAB allocator the game lacks still gets a colour, and no game page.
    assert modes.of_lab("no-such") is None and lab_scene.accent("no-such") == theme.VIOLET
    assert lab_scene.game_words(lab.tr, "no-such") is None


def make_app_stub():
    from ui.lab_cli import _StandaloneApp
    return _StandaloneApp(theme.CANVAS_SIZE)


@pytest.mark.parametrize("name", __import__("engine.lab.memory", fromlist=["ALLOCATORS"]).ALLOCATORS)
def test_every_registry_allocator_is_drawable_by_the_lab_screen(name):
    """Any registry row on either map: its map, counters, plot, info pages and request lines draw."""
    from engine.lab import memory

    lab = LabScene(make_app_stub(), size=theme.CANVAS_SIZE)
    while not lab.ready:
        lab.update(theme.STEP_MS)
    side = lab_scene.Side(name, lab.trace, lab.config, lab.layout.map_area(0))
    lab.sides[0] = side
    lab.contiguous = name  # the left-hand engine, as key C would set it
    lab.chrome = lab.counters = lab.plot_surface = lab.info_lines = None
    side.advance_to(20.0, max_steps=2000)
    side.refresh_map(limit=None)
    assert len(side.view.cells) == side.map.grid.cells
    assert set(side.view.owned) <= set(side.sim.running)
    surface = pygame.Surface(theme.CANVAS_SIZE)
    for page in range(len(lab_scene.INFO_PAGES)):
        lab.page, lab.info_lines = page, None
        lab.draw(surface)
    lines = lab._request_lines(side.sim, next(iter(side.sim.running)), lab_scene.accent(name), 300)
    assert lines and all(isinstance(text, str) for text, _ in lines)
    assert lab.tr.t(f"lab.kind.{memory.get(name).kind}") != f"lab.kind.{memory.get(name).kind}"
    for key in (f"lab.engine.{name}", f"lab.baseline.{name}"):
        assert lab.tr.t(key) != key and catalogue("ko").t(key) != key


def test_g_and_a_click_on_the_info_panel_turn_to_the_game(tmp_path):
    app, lab = open_lab(tmp_path, steps=SETUP_FRAMES + 5)
    assert lab._info()[0][0] == lab.tr.t("lab.how_to_read")
    key(app, pygame.K_g, steps=0)
    title = lab._info()[0][0]
    assert title == lab.tr.t("lab.game_title", mode=lab.tr.t("mode.contiguous.label"))
    click(app, centre(pygame.Rect(lab.layout.info)), steps=0)
    assert lab._info()[0][0] == lab.tr.t("lab.game_title", mode=lab.tr.t("mode.paged.label"))
    key(app, pygame.K_g, steps=0)
    assert lab._info()[0][0] == lab.tr.t("lab.how_to_read")
