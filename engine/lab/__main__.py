"""``python -m engine.lab``: the serving lab's command line."""

from ..cli_args import run
from .cli import main

raise SystemExit(run(main, prog="python -m engine.lab"))
