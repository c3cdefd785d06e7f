"""LAB screen: headless render, memory maps, selection, controls, leaving."""
from __future__ import annotations

import pygame
import pytest
from tests.test_ui_fixtures import canvas, centre, click, key, make_app, pump

from ui import theme
from ui.lab_scene import BLOCK_CHOICES, Grid, LabScene
from ui.title_scene import TitleScene


@pytest.fixture(autouse=True)
def _clean_queue():
    canvas()
    pygame.event.clear()
    yield
    pygame.event.clear()


def open_lab(tmp_path, steps: int = 300) -> tuple[object, LabScene]:
    app = make_app(tmp_path)
    app.reset(TitleScene(app, seed=1))
    assert app.open_lab()
    lab = app.top
    assert isinstance(lab, LabScene)
    pump(app, steps)
    return app, lab


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
        assert any(state is not None for state in side.map.states), "requests hold memory"
    # The paged map's cells are painted: a held block is not the free colour.
    rid, cells = next(iter(paged.map.owned.items()))
    assert surface.get_at(paged.map.grid.rect(cells[0]).center)[:3] != (20, 26, 48)


def test_paged_map_matches_block_tables(tmp_path):
    _, lab = open_lab(tmp_path, steps=240)
    paged = lab.sides[1]
    paged.dirty = True
    paged.refresh_map()
    for rid, table in paged.sim.block_tables().items():
        assert paged.map.owned[rid] == table
        for b in table:
            assert paged.map.states[b][0] == rid


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
    free = [i for i, s in enumerate(paged.map.states) if s is None]
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
    app, lab = open_lab(tmp_path, steps=10)
    key(app, pygame.K_d, steps=0)
    assert lab.dataset == "alpaca" and lab.rate == 30
    assert lab.clock < 0.1  # restarted: one step since the key
    key(app, pygame.K_b, steps=0)
    assert lab.block == BLOCK_CHOICES[(BLOCK_CHOICES.index(16) + 1) % len(BLOCK_CHOICES)]
    assert lab.sides[1].map.grid.cells == 15728 // lab.block
    click(app, centre(button(lab, "contiguous").rect), steps=0)
    assert lab.sides[0].sim.allocator == "pow2"
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
            side.refresh_map()
            owners = [s[0] for s in side.map.states if s is not None]
            assert set(owners) <= set(side.sim.running)
            if side.sim.paged:
                assert len(owners) == side.sim.blocks_used
