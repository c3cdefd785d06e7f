"""What a drawing tool of tools/ sets up before pygame loads, imported first by each (not a
command line itself: the leading underscore).

SDL without a display or a sound card, no pygame banner, no SDL signal handlers (the tool's own
stop policy, engine.cli_args, answers SIGINT and SIGTERM), and the project folder on the import
path, so `engine` and `ui` import from a checkout run as `python tools/NAME.py`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

for _name, _value in (("SDL_VIDEODRIVER", "dummy"), ("SDL_AUDIODRIVER", "dummy"),
                      ("PYGAME_HIDE_SUPPORT_PROMPT", "1"), ("SDL_NO_SIGNAL_HANDLERS", "1")):
    os.environ.setdefault(_name, _value)
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
