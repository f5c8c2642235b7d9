"""``python -m trimtab.native``: the native-messaging host, as Chrome starts it."""

import sys

from ._main import main

sys.exit(main())
