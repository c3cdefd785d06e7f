"""Python source without docstrings and comments, for the web archive: same code, fewer bytes.

The page downloads the game's source before its first frame, so the staged copy that pygbag packs
(never the checkout) is rewritten from its syntax tree: docstrings go, comments and blank lines go
with the re-printing, and everything else stays. `strip` checks its own output: the result must
parse back to exactly the tree it was printed from, or it raises instead of shipping other code.

A PEP 723 header (`# /// script` ... `# ///`, which pygbag reads to preload packages) is kept,
as the first lines. A module that reads `__doc__` (an argparse description, say) keeps its docstrings. A body that
held only a docstring gets `pass`, so it stays a valid body.

Usage: python tools/strip_source.py FILE...   (prints each file's size before and after)
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

_PEP723 = re.compile(r"(?m)^# /// script$.*?^# ///$\n?", re.S)
_BODIES = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


class StripError(Exception):
    """The stripped source would not be the same program."""


def _is_docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def _reads_doc(tree: ast.AST) -> bool:
    return any(
        (isinstance(n, ast.Name) and n.id == "__doc__") or (isinstance(n, ast.Attribute) and n.attr == "__doc__")
        for n in ast.walk(tree)
    )


def strip_tree(tree: ast.Module) -> ast.Module:
    """Drop the docstring of every module, class and function body in place (unless `__doc__` is read)."""
    if _reads_doc(tree):
        return tree
    for node in ast.walk(tree):
        if isinstance(node, _BODIES) and node.body and _is_docstring(node.body[0]):
            rest = node.body[1:]
            node.body = rest or [ast.copy_location(ast.Pass(), node.body[0])]
    return tree


def strip(source: str, filename: str = "<source>") -> str:
    """The same module as source text, without docstrings or comments."""
    tree = strip_tree(ast.parse(source, filename))
    out = ast.unparse(tree) + "\n"
    try:
        again = ast.parse(out, filename)
    except SyntaxError as exc:
        raise StripError(f"{filename}: stripped source does not parse: {exc}") from exc
    if ast.dump(again) != ast.dump(tree):
        raise StripError(f"{filename}: stripped source is not the same program")
    header = _PEP723.search(source)
    return (header.group(0).rstrip("\n") + "\n" + out) if header else out


def main(argv: list[str] | None = None) -> int:
    """Print each file's size as written and as the web archive ships it; never rewrites a file."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from engine.cli_args import failure, parser as make_parser

    parser = make_parser("strip_source.py",
                         "Sizes of Python files without docstrings and comments (as the web archive ships them).")
    parser.add_argument("files", nargs="+", type=Path, metavar="FILE", help="Python source files")
    args = parser.parse_args(argv)
    before = after = 0
    for path in args.files:
        try:
            text = path.read_text(encoding="utf-8")
            small = strip(text, str(path))
        except (OSError, UnicodeDecodeError, SyntaxError, StripError) as exc:
            return failure("strip_source.py", f"{path}: {str(exc).splitlines()[0] if str(exc) else exc!r}")
        before, after = before + len(text.encode()), after + len(small.encode())
        print(f"{len(text.encode()):8d} {len(small.encode()):8d}  {path}")
    print(f"{before:8d} {after:8d}  total")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from engine.cli_args import run

    sys.exit(run(main, prog="strip_source.py"))
