"""The person's site lists in the real host process: ``sites_set`` keeps them in the
host's state folder, and the next host Chrome starts reads them back."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import cast

import trio

from tests.native.test_host_process import HostProcess, run_host_process
from trimtab.envelope import SITES_FILE


async def _host(nursery: trio.Nursery, tmp_path: Path) -> HostProcess:
    places = {"XDG_STATE_HOME": str(tmp_path / "state"), "XDG_RUNTIME_DIR": str(tmp_path)}
    return cast(HostProcess, await nursery.start(run_host_process, tmp_path / "logs", places))


async def test_site_lists_live_in_the_state_folder_across_hosts(
    nursery: trio.Nursery, tmp_path: Path
) -> None:
    """The side panel's ``sites_set`` writes sites.json (0600) in the host's state
    folder; a bad entry is bad_request naming it and changes nothing; the next host
    answers ``sites`` with the same lists."""
    first = await _host(nursery, tmp_path)
    lists = {"always": ["https://www.garden.example/"], "never": ["http://ads.example.net"]}
    reply = await first.request({"type": "sites_set", "id": 1, **lists})
    stored = {"always": ["https://garden.example"], "never": ["http://example.net"]}
    assert reply["result"] == stored
    refused = await first.request(
        {"type": "sites_set", "id": 2, "always": ["garden.example"], "never": []}
    )
    assert refused["error"]["code"] == "bad_request"
    assert "'garden.example' is not a site" in refused["error"]["message"]
    assert await first.finish() == 0
    path = tmp_path / "state" / "trimtab" / SITES_FILE
    assert json.loads(path.read_text()) == stored
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    second = await _host(nursery, tmp_path)
    assert (await second.request({"type": "sites", "id": 3}))["result"] == stored
    assert await second.finish() == 0
