"""``python -m trimtab``: the ``trimtab`` command line."""

import sys

from ._cli import main

sys.exit(main())
