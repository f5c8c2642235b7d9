"""The link: how agents outside the browser reach the host that Chrome started.

The host (``trimtab.native``) listens on a per-user local endpoint, a Unix socket in
a folder only the user can enter (`_paths`), and a client must first present the
per-install secret kept in a 0600 file next to the host's state. Framing on the
socket is the host's own (``trimtab.wire``: a 4-byte length and UTF-8
JSON), and each connection is served by the wire's request loop
(``trimtab.wire.HostServer``).

- `_paths`: the endpoint folder, the secret, endpoint names and the list of endpoints.
- `_endpoint`: `open_link`, the endpoint socket and its info file while the host runs.
- `_server`: `Link`, the listening side inside the host: one `LinkSession` per
  client (its own tracker session and its own snapshot memory per tab), the tabs
  the person shared (pushed by the extension); the person is asked in the side
  panel through ``trimtab.envelope``.
- `_client`: `LinkClient`, the connecting side (``trimtab mcp``, the command line).
- `_untrusted`: `page_data`, the one writer of the untrusted block around every page
  string a client is sent (a tool's content, the tab listing), with each session's
  own `marker`.

It is the second door on ``trimtab.wire``, beside ``trimtab.native``, which opens it.
May import ``trimtab.wire``, ``trimtab.browser`` (`HostState`, which runs the tools)
and ``trimtab.envelope``.
"""

from ._client import HOW_TO_SHARE, LinkClient, LinkError, OnProgress, choose_endpoint, connect
from ._endpoint import open_link
from ._paths import (
    ENDPOINT_SUFFIX,
    Endpoint,
    EndpointInfo,
    PermissionProblem,
    SecretMissing,
    endpoint_dir,
    list_endpoints,
    read_secret,
    secret_path,
    state_dir,
)
from ._server import PARKED_SESSION_LIFETIME, PROGRESS_INTERVAL, Link, LinkSession
from ._untrusted import new_marker, page_data

__all__ = [
    "ENDPOINT_SUFFIX",
    "HOW_TO_SHARE",
    "PARKED_SESSION_LIFETIME",
    "PROGRESS_INTERVAL",
    "Endpoint",
    "EndpointInfo",
    "Link",
    "LinkClient",
    "LinkError",
    "LinkSession",
    "OnProgress",
    "PermissionProblem",
    "SecretMissing",
    "choose_endpoint",
    "connect",
    "endpoint_dir",
    "list_endpoints",
    "new_marker",
    "open_link",
    "page_data",
    "read_secret",
    "secret_path",
    "state_dir",
]
