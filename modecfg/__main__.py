"""``python -m modecfg``: the command line."""

import sys

from modecfg.cli import main

sys.exit(main())
