"""The link: how agents outside the browser reach the host that Chrome started.

The host (``trimtab.native``) listens on a per-user local endpoint, a Unix socket in
a folder only the user can enter (`_paths`), and a client must first present the
per-install secret kept in a 0600 file next to the host's state. Framing on the
socket is the host's own (``trimtab.wire``: a 4-byte length and UTF-8
JSON), and each connection is served by the wire's request loop
(``trimtab.wire.HostServer``).

- `_paths`: the endpoint folder, the secret, endpoint names and the list of endpoints.
- `_server`: `open_link`, the listening side inside the host: one `LinkSession` per
  client (its own tracker session and its own snapshot memory per tab), the tabs
  the person shared (pushed by the extension), consent asked of the extension.
- `_client`: `LinkClient`, the connecting side (``trimtab mcp``, the command line).

May import ``trimtab.wire`` and ``trimtab.native`` (`HostState`, which runs the
tools); ``trimtab.native`` opens the link in ``build_setup``.
"""

from ._client import LinkClient, LinkError, OnProgress, choose_endpoint, connect
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
from ._server import PARKED_SESSION_LIFETIME, PROGRESS_INTERVAL, Link, LinkSession, open_link

__all__ = [
    "ENDPOINT_SUFFIX",
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
    "open_link",
    "read_secret",
    "secret_path",
    "state_dir",
]
