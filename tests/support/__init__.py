"""Helpers shared by the test suite (servers, browser process checks, fixture paths)."""

from pathlib import Path

from .http import StaticServer, serve_static
from .processes import LAUNCHED_PROFILES, browser_processes

#: Fixture pages written for the tests (never corpus copies).
TEST_PAGES = Path(__file__).resolve().parents[1] / "pages"

#: Every test browser's names: ``*.test`` is this machine (so a test's sites have
#: real-looking names), localhost and loopback addresses (127.0.0.2 is another site
#: than 127.0.0.1) are as always, and no other name resolves, so nothing a page links
#: to can leave the machine.
LOCAL_NAMES = (
    "--host-resolver-rules=MAP *.test 127.0.0.1, MAP * ~NOTFOUND, EXCLUDE 127.*, EXCLUDE localhost"
)

__all__ = [
    "LAUNCHED_PROFILES",
    "LOCAL_NAMES",
    "TEST_PAGES",
    "StaticServer",
    "browser_processes",
    "serve_static",
]
