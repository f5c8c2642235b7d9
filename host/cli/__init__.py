"""The ``trimtab`` command line (`main`).

`_main`: the parser, ``install`` / ``uninstall`` and the dispatch; `_inspect`:
``trimtab inspect``, pages in a headless Chromium of its own; `_agents`: ``trimtab
mcp``, ``tabs``, ``snapshot``, ``call``, ``routines`` and ``run`` over the link;
`_doctor`: ``trimtab doctor``, every link from Python to an MCP handshake checked;
`_installs`: the profile folders ``trimtab install --user-data-dir`` registered the host
in, for doctor.

The top floor. May import ``trimtab.link``, ``trimtab.mcp``, ``trimtab.install``,
``trimtab.tools`` (the catalogue), ``trimtab.tab``, ``trimtab.pipeline``,
``trimtab.wire`` (one error out of a group) and ``pycdp_bridge``; nothing in Trimtab
imports it but ``python -m trimtab``.
"""

from ._agents import EXIT_CODES
from ._main import main

__all__ = ["EXIT_CODES", "main"]
