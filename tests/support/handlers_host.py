"""The host's request handlers driven in-process, the way the server calls them."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import attrs
import pytest
import trio

from pycdp_bridge import PageTarget
from tests.support.relay_peer import RelayPeer
from trimtab.native import HostState, Toolbox, open_host_state
from trimtab.wire import Request, RequestError

__all__ = ["SESSION", "TAB", "Host", "open_host"]

TAB = 7
SESSION = "agent-1"


@attrs.define
class Host:
    """The handlers under test, called the way the server calls them."""

    state: HostState
    peer: RelayPeer
    page: PageTarget
    _ids: int = 0

    async def request(self, kind: str, **fields: Any) -> dict[str, Any]:
        self._ids += 1
        request = Request(kind, self._ids, {"type": kind, "id": self._ids, **fields})
        handler = self.state.handlers()[kind]
        with trio.fail_after(60):
            result = dict(await handler(request))
        json.dumps(result)  # everything a handler answers must go on the wire
        return result

    async def tool(self, name: str, session: str = SESSION, **args: Any) -> dict[str, Any]:
        return await self.request("tool", session=session, tab=TAB, name=name, args=args)

    async def error(self, kind: str, **fields: Any) -> RequestError:
        with pytest.raises(RequestError) as caught:
            await self.request(kind, **fields)
        return caught.value

    async def evaluate(self, expression: str) -> Any:
        with trio.fail_after(10):
            return await self.page.evaluate(expression)


@contextlib.asynccontextmanager
async def open_host(page: PageTarget, url: str, nursery: trio.Nursery) -> AsyncIterator[Host]:
    """Handlers of a host whose relay reaches `page`, loaded with `url` first."""
    peer = RelayPeer(page, TAB)
    await nursery.start(peer.run)
    with trio.fail_after(30):
        await page.navigate(url)
    async with open_host_state(peer.hub, toolbox=Toolbox.load()) as state:
        yield Host(state, peer, page)
