# ``python -m clawnb``: by the time this file runs, the package's __init__ has already taken
# the current folder (which Python puts first on sys.path for -m) off sys.path, before
# anything else was imported. The import guard goes in place before the CLI loads, so that
# an --agent run, which puts the folder back for the person's own module, does not open it
# to clawnb's imports (clawnb.control.imports).
import sys

from .control.imports import guard

guard()

from .cli.main import main  # noqa: E402

sys.exit(main())
