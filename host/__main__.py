"""``python -m trimtab``: the ``trimtab`` command line."""

import sys

from .cli import main

sys.exit(main())
