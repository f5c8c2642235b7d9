"""Each test that starts a host's link runs once per transport: the Unix socket and
loopback TCP (``TRIMTAB_LINK=tcp``), which clients find in the endpoint's info file.

A folder's ``conftest.py`` takes both hooks: ``pytest_generate_tests =
parametrize_transports`` and the autouse ``link_transport`` fixture."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import trio

from trimtab.link import LINK_ENV, LinkAddress, TcpAddress

__all__ = ["TRANSPORTS", "link_transport", "open_raw", "parametrize_transports"]

TRANSPORTS = ("unix", "tcp")
# A test that asks for one of these starts a host: a page's link, or the browser's.
_STARTS_A_HOST = frozenset({"page", "places"})


def parametrize_transports(metafunc: pytest.Metafunc) -> None:
    """Run each test that starts a host once per transport (ids ``[unix]``, ``[tcp]``)."""
    if _STARTS_A_HOST & set(metafunc.fixturenames):
        metafunc.parametrize("link_transport", TRANSPORTS, indirect=True)


@pytest.fixture(autouse=True)
def link_transport(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[str]:
    """The transport of the hosts this test starts, set as the browser's environment
    would (``TRIMTAB_LINK``); a test that starts none leaves the default (unset)."""
    kind: str | None = getattr(request, "param", None)
    if kind is None:
        monkeypatch.delenv(LINK_ENV, raising=False)
        yield "unix"
        return
    monkeypatch.setenv(LINK_ENV, kind)
    yield kind


async def open_raw(address: LinkAddress | None) -> trio.SocketStream:
    """A bare connection to a link's endpoint, for tests that speak the wire by hand."""
    assert address is not None, "the link is not open"
    if isinstance(address, TcpAddress):
        return await trio.open_tcp_stream(address.host, address.port)
    return await trio.open_unix_socket(str(address))
