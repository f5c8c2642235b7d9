"""The command line's commands for agents outside the browser, and ``doctor``.

`_agents`: ``trimtab mcp``, ``tabs``, ``snapshot`` and ``call`` over the link;
`_doctor`: ``trimtab doctor``, every link from Python to an MCP handshake checked.
``trimtab._cli`` owns the parser and registers these with `add_commands`.

May import ``trimtab.link``, ``trimtab.mcp`` and the installer.
"""

from ._agents import EXIT_CODES, add_commands, run_command

__all__ = ["EXIT_CODES", "add_commands", "run_command"]
