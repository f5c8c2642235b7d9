"""The side panel's request handlers driven in-process, the way the server calls them,
with a scripted person answering the side panel's questions."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any

import attrs
import pytest
import trio

from pycdp_bridge import PageTarget
from tests.support.relay_peer import RelayPeer
from trimtab.browser import HostState, Toolbox, open_host_state
from trimtab.envelope import SidePanel, SitePolicy
from trimtab.native import SidePanelDoor
from trimtab.routines import RoutineStore
from trimtab.tab import Downloads
from trimtab.wire import Request, RequestError

__all__ = ["SESSION", "TAB", "Host", "ScriptedPerson", "open_host"]

TAB = 7
SESSION = "agent-1"


@attrs.define(eq=False)
class ScriptedPerson:
    """The person at the side panel: answers each question as told (``None``: never;
    ``always``: a yes about a site for every task; ``refuse``: no to questions of these
    kinds, "submit" say), and keeps what the panel was sent (``asked``, ``withdrawn``)."""

    allow: bool | None = True
    always: bool = False
    refuse: frozenset[str] = frozenset()
    asked: list[Mapping[str, Any]] = attrs.field(factory=list)
    withdrawn: list[Mapping[str, Any]] = attrs.field(factory=list)
    panel: SidePanel | None = None
    question: trio.Event = attrs.field(factory=trio.Event)

    async def send(self, message: Mapping[str, Any]) -> None:
        """The extension's side of the native port, as far as questions go."""
        if message["type"] == "ask":
            self.asked.append(message)
            self.question.set()
            if self.allow is not None and self.panel is not None:
                allow = self.allow and message["what"] not in self.refuse
                self.panel.answer(message["ask"], allow=allow, always=self.always)
        elif message["type"] == "withdraw":
            self.withdrawn.append(message)


@attrs.define
class Host:
    """The handlers under test, called the way the server calls them."""

    state: HostState
    peer: RelayPeer
    page: PageTarget
    person: ScriptedPerson
    door: SidePanelDoor
    _ids: int = 0

    @classmethod
    def serving(cls, state: HostState, peer: RelayPeer, page: PageTarget) -> Host:
        """The side panel's door on ``state``, its questions answered by a scripted person
        who says yes (tests change ``person.allow``) within 5 s."""
        person = ScriptedPerson()
        panel = SidePanel(person.send, timeout=5)
        person.panel = panel
        return cls(state, peer, page, person, SidePanelDoor(state, panel))

    async def request(self, kind: str, **fields: Any) -> dict[str, Any]:
        self._ids += 1
        request = Request(kind, self._ids, {"type": kind, "id": self._ids, **fields})
        handler = self.door.handlers()[kind]
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
async def open_host(
    page: PageTarget,
    url: str,
    nursery: trio.Nursery,
    *,
    sites: SitePolicy | None = None,
    before_command: Callable[[str], Awaitable[None]] | None = None,
    routines: RoutineStore | None = None,
) -> AsyncIterator[Host]:
    """Handlers of a host whose relay reaches `page`, loaded with `url` first; ``sites``
    holds the person's site lists (default: empty, in memory); ``before_command`` is the
    relay peer's (`RelayPeer`); ``routines`` is where routines are kept (None: none)."""
    peer = RelayPeer(page, TAB, follow_opened=True, before_command=before_command)
    await nursery.start(peer.run)
    with trio.fail_after(30):
        await page.navigate(url)
    # A browser the tests launched: the host holds what actions download beside its
    # downloads folder until the person decided.
    downloads = Downloads(folder=page.browser.downloads)
    async with open_host_state(
        peer.hub, toolbox=Toolbox.load(), sites=sites, downloads=downloads, routines=routines
    ) as state:
        yield Host.serving(state, peer, page)
