"""The link's two transports, and which one a host listens on.

- ``unix``: a Unix socket in the private endpoint folder (`_paths`); the default on
  Linux and macOS, where the folder's mode and the peer's user id guard it too.
- ``tcp``: loopback TCP, 127.0.0.1 only, on a port the system picks or a configured
  one, written to the endpoint's info file. The default on Windows, where Python has
  no Unix socket (``socket.AF_UNIX`` is not built there: CPython issue 77589) and trio
  offers none either (its Windows pipes serve only a subprocess's stdio, no named-pipe
  listener); and the way a client in WSL reaches a host on Windows.

Both carry the same hello, secret and framing. The option is one environment
variable, in the environment the browser starts its host in (`LINK_ENV`):
``TRIMTAB_LINK=unix``, ``tcp`` (a free port), or ``tcp:PORT`` (that port, 1024 to
65535). Clients need no option: they read the transport from the info file.

Sans-I/O: what the variable means, the address a client connects to, and whether a
TCP peer may be served (`loopback_refusal`).
"""

from __future__ import annotations

import ipaddress
import re
from pathlib import Path
from typing import Final, Literal, TypeAlias

import attrs

__all__ = [
    "LINK_ENV",
    "LOOPBACK",
    "LinkAddress",
    "TcpAddress",
    "Transport",
    "TransportProblem",
    "loopback_refusal",
    "transport_from",
]

LINK_ENV: Final = "TRIMTAB_LINK"
# The one address the link listens on and connects to.
LOOPBACK: Final = "127.0.0.1"
_LOWEST_PORT: Final = 1024  # below it a port needs privileges on Linux and macOS


class TransportProblem(ValueError):
    """A transport that cannot be used: a bad ``TRIMTAB_LINK``, a taken port."""


@attrs.frozen
class Transport:
    """What a host listens on: a Unix socket, or TCP on 127.0.0.1 (port 0: any free one)."""

    kind: Literal["unix", "tcp"]
    port: int = 0


@attrs.frozen
class TcpAddress:
    """A link endpoint on loopback TCP: always 127.0.0.1, never another address."""

    port: int

    @property
    def host(self) -> str:
        return LOOPBACK

    def __str__(self) -> str:
        return f"{LOOPBACK}:{self.port}"


# Where a client connects: a Unix socket's path, or a port on 127.0.0.1.
LinkAddress: TypeAlias = Path | TcpAddress


def transport_from(value: str | None, platform: str) -> Transport:
    """The transport ``TRIMTAB_LINK=value`` names on ``platform`` (``sys.platform``):
    unset or empty is the platform's default (TCP on Windows, else the Unix socket)."""
    windows = platform == "win32"
    text = (value or "").strip().lower()
    if not text:
        return Transport("tcp") if windows else Transport("unix")
    if text == "unix":
        if windows:
            raise TransportProblem(
                f"{LINK_ENV}=unix: Python has no Unix sockets on Windows; use tcp or tcp:PORT"
            )
        return Transport("unix")
    if text == "tcp":
        return Transport("tcp")
    found = re.fullmatch(r"tcp:(\d{1,5})", text)
    if found is None:
        raise TransportProblem(
            f"{LINK_ENV}={value!r:.60} is not unix, tcp or tcp:PORT (a port from "
            f"{_LOWEST_PORT} to 65535)"
        )
    port = int(found.group(1))
    if not _LOWEST_PORT <= port <= 65535:
        raise TransportProblem(
            f"{LINK_ENV}={value!r:.60}: port {port} is not from {_LOWEST_PORT} to 65535"
        )
    return Transport("tcp", port)


def loopback_refusal(peer: object) -> str | None:
    """Why a TCP peer (``getpeername()``'s address) is not served, or None for a
    loopback one. The host listens on 127.0.0.1 only; this holds if that ever changes."""
    host = peer[0] if isinstance(peer, tuple) and peer else peer
    try:
        address = ipaddress.ip_address(str(host).split("%", 1)[0])
    except ValueError:
        return f"the connecting address {str(host)[:60]!r} is not an IP address"
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if not address.is_loopback:
        return (
            f"the connecting address {address} is not loopback: the link serves programs "
            f"on this computer only ({LOOPBACK})"
        )
    return None
