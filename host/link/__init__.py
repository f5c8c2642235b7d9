"""The link: how agents outside the browser reach the host that Chrome started.

The host (``trimtab.native``) listens on a per-user local endpoint and a client must
first present the per-install secret kept in a 0600 file next to the host's state.
The endpoint is one of two transports (`_transport`), with the same hello, secret and
framing: a Unix socket in a folder only the user can enter (`_paths`), the default on
Linux and macOS; or loopback TCP, 127.0.0.1 only on a port written to the endpoint's
info file, the default on Windows (Python has no Unix socket there) and chosen
anywhere by ``TRIMTAB_LINK=tcp`` (or ``tcp:PORT``) in the browser's environment.
Clients read which from the info file. A client in WSL finds a Windows host's
endpoints and secret in the Windows user's folder (`_wsl`). Framing is the host's
own (``trimtab.wire``: a 4-byte length and UTF-8 JSON), and each connection is served
by the wire's request loop (``trimtab.wire.HostServer``).

- `_transport`: the two transports, ``TRIMTAB_LINK``, and the loopback check of a TCP peer.
- `_paths`: the endpoint folder, the secret, endpoint names, the list of endpoints, and
  the pruning of endpoints whose host is gone.
- `_wsl`: from WSL, the Windows host's state folder under ``/mnt/c/Users/NAME``.
- `_client`: `LinkClient`, the connecting side (``trimtab mcp``, the command line),
  and the choice of an endpoint (live ones only).
- `trimtab.link.server`: the listening side, which runs inside the host. Only the host
  (``trimtab.native``, which opens it) imports it, so a client loads none of the
  browser's state, the tools or the pipeline behind it.

It is the second door on ``trimtab.wire``, beside ``trimtab.native``.
May import ``trimtab.wire`` (the server, a package of its own, stands on the browser's
state).
"""

from ._client import (
    HOW_TO_SHARE,
    LinkClient,
    LinkError,
    OnProgress,
    choose_endpoint,
    connect,
    find_endpoints,
)
from ._paths import (
    ENDPOINT_SUFFIX,
    Endpoint,
    EndpointInfo,
    PermissionProblem,
    SecretMissing,
    endpoint_dir,
    list_endpoints,
    read_secret,
    secret_of,
    secret_path,
    state_dir,
)
from ._transport import LINK_ENV, LinkAddress, TcpAddress, Transport, TransportProblem

__all__ = [
    "ENDPOINT_SUFFIX",
    "HOW_TO_SHARE",
    "LINK_ENV",
    "Endpoint",
    "EndpointInfo",
    "LinkAddress",
    "LinkClient",
    "LinkError",
    "OnProgress",
    "PermissionProblem",
    "SecretMissing",
    "TcpAddress",
    "Transport",
    "TransportProblem",
    "choose_endpoint",
    "connect",
    "endpoint_dir",
    "find_endpoints",
    "list_endpoints",
    "read_secret",
    "secret_of",
    "secret_path",
    "state_dir",
]
