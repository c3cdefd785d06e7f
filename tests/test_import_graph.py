"""No import circles among the game's own modules (every module in engine/ and ui/).

Every import statement counts, at module level or inside a function, method or class, with two
exceptions that never run when a module is imported:
- the body of `if __name__ == "__main__":`, a module's command-line entry point (run as a
  script, the file is the module __main__, not the module other modules import:
  `python -m engine.replay` hands over to engine.replay_cli there, `python -m ui.lab_scene` to
  ui.lab_cli);
- the body of `if TYPE_CHECKING:`, names for the type checker alone.
A package's __init__ is not counted as a dependency of the modules inside it (Python imports it
before them whatever they import); `from package import name` counts as importing the package's
__init__ unless `name` is a module of the package.
"""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("engine", "ui")

Graph = dict[str, dict[str, int]]  # module -> {project module it imports: line of the first import}


def modules(root: Path, packages: tuple[str, ...] = PACKAGES) -> dict[str, Path]:
    """Every module under the given top-level packages, by dotted name."""
    found: dict[str, Path] = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


def _is_main_guard(test: ast.expr) -> bool:
    """`__name__ == "__main__"`, either way round."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = (test.left, test.comparators[0])
    return (any(isinstance(s, ast.Name) and s.id == "__name__" for s in sides)
            and any(isinstance(s, ast.Constant) and s.value == "__main__" for s in sides))


def _is_type_checking(test: ast.expr) -> bool:
    """`TYPE_CHECKING` or `typing.TYPE_CHECKING`."""
    return ((isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
            or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"))


def imports(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement under `node` that can run when its module is imported."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.Import, ast.ImportFrom)):
            yield child
        elif isinstance(child, ast.If) and (_is_main_guard(child.test) or _is_type_checking(child.test)):
            for other in child.orelse:  # an else branch does run on import
                yield from imports(ast.Module(body=[other], type_ignores=[]))
        else:
            yield from imports(child)


def _deepest(name: str, known: dict[str, Path]) -> str | None:
    """The project module `import name` loads last: `name`, or its longest known prefix."""
    parts = name.split(".")
    for n in range(len(parts), 0, -1):
        candidate = ".".join(parts[:n])
        if candidate in known:
            return candidate
    return None


def import_graph(root: Path = ROOT, packages: tuple[str, ...] = PACKAGES) -> Graph:
    known = modules(root, packages)
    graph: Graph = {}
    for name, path in known.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges: dict[str, int] = {}
        for node in imports(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            targets: list[str | None] = []
            if isinstance(node, ast.Import):
                targets = [_deepest(a.name, known) for a in node.names]
            else:
                base = node.module or ""
                if node.level:
                    parts = package.split(".")
                    parts = parts[:len(parts) - node.level + 1]
                    base = ".".join(parts + ([node.module] if node.module else []))
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    targets.append(sub if sub in known else _deepest(base, known))
            for target in targets:
                if target is not None and target != name:
                    edges.setdefault(target, node.lineno)
        graph[name] = edges
    return graph


def cycles(graph: Graph) -> list[list[str]]:
    """One cycle for each group of modules that import one another, as [a, b, ..., a]
    (the shortest through the group's first module by name); [] when there is none."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.add(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(group)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    found = []
    for group in groups:
        start = min(group)
        came_from: dict[str, str] = {}
        queue = deque([start])
        while queue:
            v = queue.popleft()
            if start in graph[v]:
                path = [v]
                while path[-1] != start:
                    path.append(came_from[path[-1]])
                found.append([start, *reversed(path[:-1]), start])
                break
            for w in sorted(graph[v]):
                if w in group and w not in came_from and w != start:
                    came_from[w] = v
                    queue.append(w)
    return sorted(found)


def describe(cycle: list[str], graph: Graph, root: Path = ROOT) -> str:
    """`a (a.py:12) -> b (b.py:3) -> a`: each module and the line where it imports the next."""
    files = modules(root, tuple(sorted({m.split(".")[0] for m in graph})))
    steps = [f"{a} ({files[a].relative_to(root).as_posix()}:{graph[a][b]})"
             for a, b in zip(cycle, cycle[1:])]
    return " -> ".join([*steps, cycle[-1]])


def test_no_module_of_engine_or_ui_is_part_of_an_import_circle() -> None:
    graph = import_graph()
    found = cycles(graph)
    assert not found, "import circles:\n" + "\n".join(describe(c, graph) for c in found)


def test_the_graph_holds_imports_inside_functions_and_runs_one_way() -> None:
    """The readers of replays build on engine.replay and the LAB's command line on its screen,
    never the reverse; an import inside a function (ui.lab_cli.open_lab) counts."""
    graph = import_graph()
    assert len(graph) > 60 and sum(map(len, graph.values())) > 200
    for reader in ("engine.replay_json", "engine.sharecode", "engine.replay_cli"):
        assert "engine.replay" in graph[reader]
        assert reader not in graph["engine.replay"]
    assert "ui.lab_scene" in graph["ui.lab_cli"] and "ui.lab_cli" not in graph["ui.lab_scene"]


def _package(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_a_circle_is_found_and_named_even_through_an_import_inside_a_function(tmp_path: Path) -> None:
    root = _package(tmp_path, {
        "pkg/__init__.py": "from .f import F\nVALUE = 1\n",
        "pkg/a.py": "from . import b\n",
        "pkg/b.py": "def later():\n    from pkg.c import C\n    return C\n",
        "pkg/c.py": "import pkg.a\nC = 1\n",
        "pkg/f.py": "from pkg import VALUE\nF = VALUE\n",  # a name of the package's __init__
    })
    graph = import_graph(root, ("pkg",))
    found = cycles(graph)
    assert found == [["pkg", "pkg.f", "pkg"], ["pkg.a", "pkg.b", "pkg.c", "pkg.a"]]
    assert describe(found[1], graph, root) == "pkg.a (pkg/a.py:1) -> pkg.b (pkg/b.py:2) -> pkg.c (pkg/c.py:1) -> pkg.a"


def test_entry_points_type_checking_and_a_package_init_make_no_circle(tmp_path: Path) -> None:
    root = _package(tmp_path, {
        "pkg/__init__.py": "from . import a\nfrom .cli import main\n",
        "pkg/a.py": "from typing import TYPE_CHECKING\nfrom . import b\n"
                    "if TYPE_CHECKING:\n    from .cli import main\n"
                    "if __name__ == '__main__':\n    from pkg.cli import main\n    main()\n",
        "pkg/b.py": "X = 1\n",
        "pkg/cli.py": "from pkg import a\nfrom .b import X\ndef main():\n    return a, X\n",
    })
    graph = import_graph(root, ("pkg",))
    assert graph["pkg.a"] == {"pkg.b": 2} and graph["pkg.cli"] == {"pkg.a": 1, "pkg.b": 2}
    assert cycles(graph) == []
    # The else branch of a guard runs on import, so it counts.
    (root / "pkg/b.py").write_text("if __name__ == '__main__':\n    pass\nelse:\n    import pkg.cli\n")
    assert cycles(import_graph(root, ("pkg",))) == [["pkg.a", "pkg.b", "pkg.cli", "pkg.a"]]
