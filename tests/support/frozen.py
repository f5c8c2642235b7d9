"""A page on another site whose script keeps it busy until the test releases it.

The tests that show a frozen tab delays no other tab's calls prove it by order, not by
time: the other tab's calls must all end while the frozen tab's click still waits. A
freeze of a fixed length would turn that into a race against the machine's load, so
the freeze here lasts until :meth:`FrozenSite.release`.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path

import attrs
import trio

from .http import StaticServer, serve_static

__all__ = ["FrozenSite", "frozen_site"]

_PAGE = Path(__file__).resolve().parents[1] / "pages" / "agents-frozen.html"
#: The file the page's loop asks for between its busy slices: there, it goes on.
_STILL = "still-frozen"


@attrs.frozen
class FrozenSite:
    """``agents-frozen.html`` served on 127.0.0.2 (another site than the pages
    server's, so another renderer), frozen from its button's click until released."""

    server: StaticServer

    @property
    def url(self) -> str:
        return self.server.url(_PAGE.name)

    async def frozen(self, timeout: float = 30.0) -> None:
        """Wait until the page's script runs (it has asked whether to go on)."""
        with trio.fail_after(timeout):
            while not any(_STILL in line for line in self.server.requests):
                await trio.sleep(0.05)

    def release(self) -> None:
        """Let the page's script end within one busy slice (100 ms)."""
        (self.server.root / _STILL).unlink(missing_ok=True)


@asynccontextmanager
async def frozen_site() -> AsyncIterator[FrozenSite]:
    """Serve the frozen page from a folder of its own until the block ends. Then the
    page's next question finds no server (its request fails), so no browser the
    tests share keeps a page spinning."""
    with tempfile.TemporaryDirectory(prefix="trimtab-frozen-") as folder:
        root = Path(folder)
        shutil.copyfile(_PAGE, root / _PAGE.name)
        (root / _STILL).write_text("yes\n")
        async with trio.open_nursery() as nursery:
            server: StaticServer = await nursery.start(
                partial(serve_static, root, host="127.0.0.2")
            )
            yield FrozenSite(server)
            nursery.cancel_scope.cancel()
