"""Fixtures of the envelope's tests: the recording web site most of them act on."""

from __future__ import annotations

import pytest
import trio

from tests.support import TEST_PAGES
from tests.support.recorder import Recorder, serve_recorder


@pytest.fixture
async def site(nursery: trio.Nursery) -> Recorder:
    """The fixture pages under any ``*.test`` name (the shop, the forum, a tracker),
    remembering what reached each site's ``/api/`` and its downloads."""
    recorder: Recorder = await nursery.start(serve_recorder, TEST_PAGES)
    return recorder
