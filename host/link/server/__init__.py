"""The link's listening side, inside the host: the endpoint while the host runs and
the sessions of the outside agents on it.

- `_endpoint`: `open_link`, the endpoint and its info file while the host runs.
- `_server`: `Link`: one `LinkSession` per client (its own tracker session and its
  own snapshot memory per tab), the tabs the person shared (pushed by the extension);
  the person is asked in the side panel through ``trimtab.envelope``.
- `_routines`: a session's routine requests (list, save, run).
- `_events`: what the side panel's log of outside agents hears of one call.
- `_untrusted`: `page_data`, the one writer of the untrusted block around every page
  string a client is sent (a tool's content, the tab listing), with each session's
  own `marker`.

The host (``trimtab.native``) opens it; no client imports it.
May import ``trimtab.wire``, ``trimtab.browser`` (`HostState`, which runs the tools),
``trimtab.envelope`` and ``trimtab.link`` (its endpoint files and transports).
"""

from ._endpoint import open_link
from ._server import (
    MAX_CALLS_IN_FLIGHT,
    MAX_CLIENTS,
    PARKED_SESSION_LIFETIME,
    PROGRESS_INTERVAL,
    Link,
    LinkSession,
)
from ._untrusted import new_marker, page_data

__all__ = [
    "MAX_CALLS_IN_FLIGHT",
    "MAX_CLIENTS",
    "PARKED_SESSION_LIFETIME",
    "PROGRESS_INTERVAL",
    "Link",
    "LinkSession",
    "new_marker",
    "open_link",
    "page_data",
]
