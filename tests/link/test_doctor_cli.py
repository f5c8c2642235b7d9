"""``trimtab tabs | snapshot | call`` and ``trimtab doctor`` against the real extension,
host and link, and doctor on broken set-ups."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
import trio

from tests.support import StaticServer
from tests.support.outside import TIMEOUT, Places, browser, eid_on_line, places, share
from trimtab.install import MANIFEST_FILE, build_manifest, console_script, extension_id

pytestmark = pytest.mark.browser

__all__ = ["places"]  # the fixture


REPO = Path(__file__).resolve().parents[2]


async def trimtab(
    places: Places, *args: str, home: Path | None = None, cwd: Path | None = None
) -> tuple[int, str, str]:
    """Run ``python -m trimtab ARGS`` with this test's link folders (in ``cwd``: the
    installed ``trimtab`` command, as a person would there); exit code and output."""
    env = dict(os.environ, **places.env())
    if home is not None:
        env["HOME"] = str(home)
    command = [sys.executable, "-m", "trimtab"] if cwd is None else [str(console_script("trimtab"))]
    with trio.fail_after(TIMEOUT * 2):
        done = await trio.run_process(
            [*command, *args],
            env=env,
            cwd=cwd,
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )
    return done.returncode, done.stdout.decode(), done.stderr.decode()


async def test_command_line_over_the_link(places: Places, pages_server: StaticServer) -> None:
    """tabs, snapshot and call print the host's answers; failures are one line on stderr
    with an exit code a script can tell apart."""
    code, out, err = await trimtab(places, "tabs")
    assert code == 3
    assert err.startswith("trimtab: no_browser: ")
    assert err.count("\n") == 1
    async with browser(places) as ext:
        _target, tab = await ext.open_tab(pages_server.url("handlers-shop.html"))
        await ext.wait_loaded(tab)
        code, out, err = await trimtab(places, "snapshot")
        assert (code, out) == (4, "")
        assert "trimtab: not_shared: no tab is shared with agents" in err
        await share(ext, tab)
        code, out, err = await trimtab(places, "tabs")
        assert code == 0, err
        # The titles and URLs are the pages' words: in the session's untrusted block.
        assert out.startswith("<<<PAGE DATA ")
        assert f'<tab id="{tab}" url="http://127.0.0.1:' in out
        assert ">Handlers shop</tab>" in out
        code, out, err = await trimtab(places, "snapshot")
        assert code == 0, err
        assert "Outdoor shop" in out
        button = eid_on_line(out, "Add to bag")
        code, out, err = await trimtab(places, "call", "click", f"id={button}", "--tab", str(tab))
        assert code == 0, err
        assert "Clicks: 1" in out
        code, out, err = await trimtab(places, "call", "click", "id=zz999")
        assert code == 1
        assert err.startswith("trimtab: tool_error: ")
        code, out, err = await trimtab(places, "call", "click", "nonsense")
        assert code == 2
        assert "not key=value" in err
        # An unshared tab with no side panel open to ask in is refused at once.
        _other, unshared = await ext.open_tab(pages_server.url("handlers-other.html"))
        code, out, err = await trimtab(places, "snapshot", "--tab", str(unshared))
        assert code == 4
        assert "no side panel is open" in err
        code, out, err = await trimtab(places, "mcp", "--list-browsers")
        assert code == 0
        assert out.startswith("chromium-")
        assert "\tchromium\trunning\t" in out


async def test_doctor_on_the_test_profile_passes(places: Places, tmp_path: Path) -> None:
    """On the test profile with its browser running, every doctor check passes, also run
    from the clone's parent (a folder holding a ``trimtab`` directory, which Python
    would import for the package if the MCP check started ``python -m trimtab``)."""
    home = tmp_path / "home"
    home.mkdir()
    parent = tmp_path / "src"
    parent.mkdir()
    (parent / "trimtab").symlink_to(REPO, target_is_directory=True)
    async with browser(places):
        code, out, err = await trimtab(
            places,
            "doctor",
            "--json",
            "--user-data-dir",
            str(places.profile),
            home=home,
            cwd=parent,
        )
        assert code == 0, out + err
        report = json.loads(out)
        assert report["ok"]
        assert report["first_broken"] is None
        names = [check["name"] for check in report["checks"]]
        assert names == [
            "python",
            "browsers",
            "manifest (profile)",
            "host",
            "permissions",
            "link",
            "mcp",
        ]
        [mcp] = [check for check in report["checks"] if check["name"] == "mcp"]
        assert mcp["detail"].startswith(f"`{console_script('trimtab')} mcp` answers with ")
        code, out, err = await trimtab(
            places, "doctor", "--user-data-dir", str(places.profile), home=home
        )
        assert code == 0
        assert out.rstrip().endswith("every check passed")


async def test_doctor_checks_the_manifest_where_the_browser_reads_it(
    places: Places, tmp_path: Path
) -> None:
    """With the host registered only in a profile folder (``--user-data-dir``), plain
    ``trimtab doctor`` checks the manifest there: the running browser's profile while
    it runs, the folder ``trimtab install --user-data-dir`` recorded once it quit (the
    host's fix then names how to start it), until ``trimtab uninstall`` forgets it."""
    home = tmp_path / "home"
    home.mkdir()
    manifest = places.profile / "NativeMessagingHosts" / MANIFEST_FILE
    async with browser(places):
        code, out, err = await trimtab(places, "doctor", "--json", home=home)
        assert code == 0, out + err
        report = json.loads(out)
        [profile] = [c for c in report["checks"] if c["name"] == "manifest (profile)"]
        assert profile["ok"]
        assert profile["detail"].startswith(f"{manifest} → ")
        assert profile["detail"].endswith("(the running chromium reads it there)")
        assert not [c for c in report["checks"] if c["name"].startswith("manifest (chromium")]
    code, out, err = await trimtab(
        places, "install", "--user-data-dir", str(places.profile), home=home
    )
    assert code == 0, err
    assert out.rstrip().endswith("doctor")  # the next step it names is plain doctor
    code, out, _err = await trimtab(places, "doctor", home=home)
    assert code == 1
    assert f"ok   manifest (profile): {manifest} → " in out
    assert "(trimtab install --user-data-dir registered it there)" in out
    assert "FAIL host: " in out
    fix = out.rstrip().rsplit("\n", 1)[-1]
    assert fix.startswith(
        f"first broken link: host; fix: open the browser (started with "
        f"--user-data-dir={places.profile}) with the Trimtab extension loaded"
    )
    code, _out, err = await trimtab(
        places, "uninstall", "--user-data-dir", str(places.profile), home=home
    )
    assert code == 0, err
    code, out, _err = await trimtab(places, "doctor", home=home)
    assert code == 1
    assert "FAIL manifest: no host manifest for chromium at " in out


async def test_doctor_names_the_first_broken_link(places: Places, tmp_path: Path) -> None:
    """Without a manifest doctor names the browser it found and says to install for it;
    a profile folder without one gets the install line with --user-data-dir; a missing
    secret is said to come with the host; a manifest naming a host that is not there
    is named with its path; each finding is one line."""
    home = tmp_path / "home"
    home.mkdir()
    code, out, _err = await trimtab(places, "doctor", "--json", home=home)
    assert code == 1
    report = json.loads(out)
    assert report["first_broken"] == "manifest"
    [manifest] = [c for c in report["checks"] if c["name"] == "manifest"]
    chromium = home / ".config" / "chromium" / "NativeMessagingHosts" / MANIFEST_FILE
    assert manifest["detail"].startswith(f"no host manifest for chromium at {chromium}")
    assert manifest["fix"].startswith("run `trimtab install --browser chromium`")
    [permissions] = [c for c in report["checks"] if c["name"] == "permissions"]
    assert permissions["detail"] == f"no link secret at {places.secret}"
    assert "its host writes the secret when it starts" in permissions["fix"]
    profile = tmp_path / "my profile"
    code, out, _err = await trimtab(places, "doctor", "--user-data-dir", str(profile), home=home)
    assert code == 1
    assert f"FAIL manifest (profile): no host manifest at {profile}/NativeMessagingHosts/" in out
    assert f"fix: run `trimtab install --user-data-dir '{profile}'`" in out
    for line in out.splitlines():
        assert line.startswith(("ok   ", "FAIL ", "first broken link: ")), line
    folder = home / ".config" / "chromium" / "NativeMessagingHosts"
    folder.mkdir(parents=True)
    missing = tmp_path / "gone" / "trimtab-host"
    (folder / MANIFEST_FILE).write_text(json.dumps(build_manifest(missing)))
    code, out, _err = await trimtab(places, "doctor", home=home)
    assert code == 1
    assert (
        f"FAIL manifest (chromium): {folder / MANIFEST_FILE} names a host that is not an "
        f"executable: {missing}" in out
    )
    assert "first broken link: manifest (chromium); fix: run `trimtab install`" in out
    assert extension_id()
