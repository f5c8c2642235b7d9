"""A browser with the real extension and host whose link is up, for the benches that
reach the host the way outside agents do (``--only mcp``, ``--only speed``'s relay)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import attrs
import trio

from tests.bench import CORPUS
from tests.support import StaticServer, serve_static
from tests.support.e2e import ExtensionBrowser, launch_with_extension
from trimtab.link import list_endpoints, read_secret

__all__ = ["LinkedBrowser", "linked_browser"]


@attrs.frozen
class LinkedBrowser:
    ext: ExtensionBrowser
    #: The corpus on 127.0.0.1.
    server: StaticServer
    #: The host's link socket and the secret a client proves itself with.
    socket: Path
    secret: str
    #: The private runtime and state folders, for a `trimtab` process of our own.
    env: dict[str, str]


@asynccontextmanager
async def linked_browser(name: str) -> AsyncIterator[LinkedBrowser]:
    """The browser, in private runtime, state and log folders (named after `name`) set in
    this process's environment until the end, which restores it."""
    runtime = Path(tempfile.mkdtemp(prefix="tb-"))  # short: it holds a socket's path
    os.chmod(runtime, 0o700)
    saved = dict(os.environ)
    try:
        with tempfile.TemporaryDirectory(prefix=f"trimtab-bench-{name}-") as folder:
            env = {"XDG_RUNTIME_DIR": str(runtime), "XDG_STATE_HOME": str(Path(folder) / "state")}
            os.environ.update(env, TRIMTAB_LOG_DIR=str(Path(folder) / "logs"))
            async with trio.open_nursery() as nursery:
                server: StaticServer = await nursery.start(serve_static, CORPUS)
                async with launch_with_extension(Path(folder) / "profile") as ext:
                    with trio.fail_after(60):
                        while not list_endpoints(runtime / "trimtab"):
                            await trio.sleep(0.05)
                    [endpoint] = [e for e in list_endpoints(runtime / "trimtab") if e.alive]
                    secret = read_secret(Path(env["XDG_STATE_HOME"]) / "trimtab" / "link-secret")
                    yield LinkedBrowser(ext, server, endpoint.socket, secret, env)
                nursery.cancel_scope.cancel()
    finally:
        os.environ.clear()
        os.environ.update(saved)
        shutil.rmtree(runtime, ignore_errors=True)
