"""The native-messaging host: the door Chrome starts, and what it answers the extension.

It is one of the two doors on ``trimtab.wire`` (``trimtab.link`` is the other).
`_main` is the ``trimtab-host`` process: it claims stdin/stdout for the protocol, and
``build_setup`` wires the CDP relay, the host's state (``trimtab.browser``), the side
panel's requests (`_handlers.SidePanelDoor`) and the link for outside agents together,
with one `trimtab.envelope.SidePanel` through which both doors ask the person; the
panel's routine requests are `_routines`, and the person's grants for a routine, which
only this door makes, `_routine_grants`. `_debug_handlers` are test-only request types.

May import ``trimtab.wire``, ``trimtab.browser``, ``trimtab.envelope``, ``trimtab.link``
and its server ``trimtab.link.server`` (open while the host runs), ``trimtab.sites``
(its error for a bad site), ``trimtab.routines`` (the routines' folder, a routine made
of a session, the grants) and ``trimtab.install`` (the extension's id).
"""

from ._handlers import SidePanelDoor
from ._main import (
    HostContext,
    HostSetup,
    SetupFactory,
    allowed_origin,
    build_setup,
    main,
    open_stdio_streams,
    origin_refusal,
    run_host,
)

__all__ = [
    "HostContext",
    "HostSetup",
    "SetupFactory",
    "SidePanelDoor",
    "allowed_origin",
    "build_setup",
    "main",
    "open_stdio_streams",
    "origin_refusal",
    "run_host",
]
