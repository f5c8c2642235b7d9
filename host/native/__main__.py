"""``python -m trimtab.native``: the host, as ``trimtab-host`` runs it."""

import sys

from ._main import main

sys.exit(main())
