"""``python -m engine.lab``: the serving lab's command line."""

from .cli import main

raise SystemExit(main())
