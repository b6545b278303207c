"""``python -m esqlog.cli``: the ``esqlog`` command."""

import sys

from esqlog.cli import main

sys.exit(main(prog_name="esqlog"))
