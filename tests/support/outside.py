"""Outside agents in tests: private link folders, the browser with its host listening,
a real ``trimtab mcp`` subprocess under the ``mcp`` SDK's client."""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest
import trio
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp_types import Implementation

from tests.support.e2e import ExtensionBrowser, launch_with_extension
from tests.support.xmltree import listed_lines
from trimtab.link import list_endpoints
from trimtab.link._paths import SECRET_FILE

__all__ = ["TIMEOUT", "Places", "browser", "call", "eid_on_line", "mcp_client", "places", "share"]


TIMEOUT = 60


@attrs.frozen
class Places:
    """Where this test's browser, host and clients keep the link (never the real ones)."""

    runtime: Path  # XDG_RUNTIME_DIR: the endpoint folder is runtime/trimtab
    state: Path  # XDG_STATE_HOME: the secret is state/trimtab/link-secret
    profile: Path

    @property
    def endpoints(self) -> Path:
        return self.runtime / "trimtab"

    @property
    def secret(self) -> Path:
        return self.state / "trimtab" / SECRET_FILE

    def env(self) -> dict[str, str]:
        return {"XDG_RUNTIME_DIR": str(self.runtime), "XDG_STATE_HOME": str(self.state)}


@pytest.fixture
def places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Places]:
    # Unix socket paths are short: the runtime folder is a short temporary one.
    runtime = Path(tempfile.mkdtemp(prefix="tm-"))
    os.chmod(runtime, 0o700)
    found = Places(runtime=runtime, state=tmp_path / "state", profile=tmp_path / "profile")
    # Chrome hands its environment to the host it starts.
    for key, value in found.env().items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("TRIMTAB_LOG_DIR", str(tmp_path / "logs"))
    try:
        yield found
    finally:
        shutil.rmtree(runtime, ignore_errors=True)


@contextlib.asynccontextmanager
async def browser(
    places: Places, extra_args: tuple[str, ...] = ()
) -> AsyncIterator[ExtensionBrowser]:
    """The browser with the extension, once its host listens on the endpoint;
    ``extra_args`` go to Chromium too."""
    async with launch_with_extension(places.profile, extra_args=extra_args) as ext:
        with trio.fail_after(TIMEOUT):
            while not [e for e in list_endpoints(places.endpoints) if e.alive]:
                await trio.sleep(0.05)
        yield ext


def mcp_client(places: Places, name: str = "e2e-agent") -> Client:
    """A real ``trimtab mcp`` subprocess behind the SDK's own client."""
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "trimtab", "mcp"], env=places.env()
    )
    return Client(server, client_info=Implementation(name=name, version="1.0"))


async def share(ext: ExtensionBrowser, tab: int) -> None:
    """Share `tab` with agents, as the person does in the side panel."""
    await ext.worker.evaluate(f"trimtab.agents.share({tab}).then(() => true)")


async def open_shared(ext: ExtensionBrowser, url: str) -> int:
    """A new tab at `url`, loaded and shared with agents: its id."""
    _target, tab = await ext.open_tab(url)
    await ext.wait_loaded(tab)
    await share(ext, tab)
    return tab


async def call(client: Client, tool: str, **arguments: Any) -> tuple[str, bool, dict[str, Any]]:
    """Text, error flag and Trimtab's meta of one tool call."""
    with trio.fail_after(TIMEOUT):
        result = await client.call_tool(tool, arguments)
    text = "".join(getattr(part, "text", "") for part in result.content)
    return text, bool(result.is_error), dict((result.meta or {}).get("trimtab", {}))


def eid_on_line(xml: str, needle: str) -> str:
    """The id on the first line that has `needle`: an `id` attribute, or the id that
    starts a line of a `<links>`/`<buttons>` list."""
    listed = {at: eid for tag in ("a", "button") for at, eid, _ in listed_lines(xml, tag)}
    at = 0
    for line in xml.splitlines(keepends=True):
        if needle in line and 'id="' in line:
            return line.split('id="')[1].split('"')[0]
        if needle in line and at in listed:
            return listed[at]
        at += len(line)
    raise AssertionError(f"no element with {needle!r} in:\n{xml}")
