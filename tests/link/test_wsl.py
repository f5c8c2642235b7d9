"""From WSL to a host on Windows: the Windows user's folder found in a fake ``/mnt/c``
tree, its endpoints judged alive by their port, its secret read as the Windows drive
shows it, and a real client process in "WSL" (``WSL_DISTRO_NAME``) reaching a real
link over 127.0.0.1. Windows and WSL themselves are not available here."""

from __future__ import annotations

import json
import os
import shutil
import socket
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio

from tests.link.test_endpoints import ORIGIN, bare_link
from trimtab.link import (
    TcpAddress,
    Transport,
    list_endpoints,
    read_secret,
    secret_of,
)
from trimtab.link._paths import SECRET_FILE, PermissionProblem
from trimtab.link._wsl import (
    WSL_LOOPBACK_HINT,
    is_wsl,
    mount_root,
    windows_path,
    windows_state_dirs,
)

TIMEOUT = 60
SECRET = "ab" * 32


@pytest.fixture
def mnt() -> Iterator[Path]:
    """A fake WSL mount root: ``<mnt>/c/Users/...`` stands for ``C:\\Users``."""
    path = Path(tempfile.mkdtemp(prefix="tw-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _windows_user(mnt: Path, name: str, *, secret: bool) -> Path:
    """``C:\\Users\\NAME`` in the fake tree, with Trimtab's state folder when ``secret``
    (the files world-readable, as the Windows drive shows every file in WSL)."""
    state = mnt / "c" / "Users" / name / "AppData" / "Local" / "trimtab"
    state.mkdir(parents=True)
    if secret:
        (state / SECRET_FILE).write_text(SECRET)
        os.chmod(state / SECRET_FILE, 0o777)
    return state


def test_wsl_is_told_by_its_variable_or_its_kernel() -> None:
    """WSL is recognised by WSL_DISTRO_NAME or a kernel release naming Microsoft (WSL 1
    and 2), and nothing else is taken for it."""
    assert is_wsl({"WSL_DISTRO_NAME": "Ubuntu"}, "6.8.0-45-generic")
    assert is_wsl({}, "5.15.153.1-microsoft-standard-WSL2\n")
    assert is_wsl({}, "4.4.0-19041-Microsoft")
    assert not is_wsl({}, "6.8.0-45-generic")
    assert not is_wsl({"WSL_DISTRO_NAME": ""}, "5.15.0-1034-azure")


def test_the_mount_root_comes_from_wsl_conf() -> None:
    """The drives are under /mnt unless /etc/wsl.conf's [automount] root says otherwise;
    a file that does not parse, or a relative root, leaves /mnt."""
    assert mount_root(None) == Path("/mnt")
    assert mount_root("[boot]\nsystemd=true\n") == Path("/mnt")
    assert mount_root('[automount]\nenabled = true\nroot = "/win/"  # drives\n') == Path("/win")
    assert mount_root("[automount]\nroot = win\n") == Path("/mnt")
    assert mount_root("root = /x\n[[[") == Path("/mnt")


def test_windows_paths_are_translated_under_the_mount_root(mnt: Path) -> None:
    """A Windows path (either slash, any drive case) becomes its place under the mount
    root; a Linux path (WSLENV's /p already translated it) is kept; others are none."""
    assert windows_path("C:\\Users\\Ann", mnt) == mnt / "c" / "Users" / "Ann"
    assert windows_path("d:/Data\\\\x\\", mnt) == mnt / "d" / "Data" / "x"
    assert windows_path("/mnt/c/Users/Ann", mnt) == Path("/mnt/c/Users/Ann")
    assert windows_path("", mnt) is None
    assert windows_path("%USERPROFILE%", mnt) is None
    assert windows_path("Users\\Ann", mnt) is None


def test_the_windows_folder_is_found_in_the_documented_order(mnt: Path) -> None:
    """LOCALAPPDATA (from WSLENV) first, then USERPROFILE, each alone; else the people
    in C:\\Users whose Trimtab folder holds a secret (not Public or Default), and of
    several those named as $USER in any case; with none of those, all of them."""
    ann = _windows_user(mnt, "Ann", secret=True)
    bob = _windows_user(mnt, "bob", secret=True)
    _windows_user(mnt, "Carl", secret=False)
    _windows_user(mnt, "Public", secret=True)
    _windows_user(mnt, "Default", secret=True)
    local = "C:\\Users\\Carl\\AppData\\Local"
    assert windows_state_dirs({"LOCALAPPDATA": local, "USERPROFILE": "C:\\Users\\Ann"}, mnt) == [
        mnt / "c" / "Users" / "Carl" / "AppData" / "Local" / "trimtab"
    ]
    profile = str(mnt / "c" / "Users" / "bob")
    assert windows_state_dirs({"USERPROFILE": profile}, mnt) == [bob]
    assert windows_state_dirs({"USER": "BOB"}, mnt) == [bob]
    assert windows_state_dirs({"USER": "dave"}, mnt) == [ann, bob]
    shutil.rmtree(bob.parents[2])
    assert windows_state_dirs({"USER": "dave"}, mnt) == [ann]
    assert windows_state_dirs({}, mnt / "nothing") == []


def _tcp_info(folder: Path, name: str, port: int, pid: int = 4242) -> None:
    info = {
        "name": name,
        "browser": "chrome.exe",
        "profile": "default",
        "origin": ORIGIN,
        "pid": pid,  # a Windows process id: meaningless in WSL
        "version": "1",
        "transport": "tcp",
        "port": port,
    }
    (folder / f"{name}.json").write_text(json.dumps(info))


def test_a_windows_endpoint_is_alive_while_its_port_answers(mnt: Path) -> None:
    """Seen from WSL, a Windows host's endpoint is alive while something listens on its
    port on 127.0.0.1 (its process id tells nothing), and its secret is read although
    the drive shows it world-readable, where a local secret so open is refused."""
    state = _windows_user(mnt, "Ann", secret=True)
    with socket.socket() as listening, socket.socket() as closed:
        listening.bind(("127.0.0.1", 0))
        listening.listen(1)
        port = listening.getsockname()[1]
        closed.bind(("127.0.0.1", 0))
        _tcp_info(state, "chrome-aaaa0000", port)
        _tcp_info(state, "chrome-bbbb0000", closed.getsockname()[1], pid=os.getpid())
        (state / "chrome-cccc0000.json").write_text('{"name": "chrome-cccc0000"}')
        found = list_endpoints(state, secret_file=state / SECRET_FILE, windows=True)
    assert [(e.name, e.alive, e.windows) for e in found] == [
        ("chrome-aaaa0000", True, True),
        ("chrome-bbbb0000", False, True),
    ]
    assert found[0].address == TcpAddress(port)
    assert secret_of(found[0]) == SECRET
    with pytest.raises(PermissionProblem, match="has mode 0777"):
        read_secret(state / SECRET_FILE)


async def _wsl_trimtab(mnt: Path, *args: str) -> tuple[int, str, str]:
    """``python -m trimtab ARGS`` as in WSL: WSL_DISTRO_NAME set, USERPROFILE passed by
    WSLENV (translated), and no Linux host of its own."""
    linux = mnt / "linux"
    linux.mkdir(exist_ok=True)
    env = dict(
        os.environ,
        WSL_DISTRO_NAME="Ubuntu",
        USERPROFILE=str(mnt / "c" / "Users" / "Ann"),
        XDG_RUNTIME_DIR=str(linux),
        XDG_STATE_HOME=str(linux / "state"),
    )
    env.pop("LOCALAPPDATA", None)
    with trio.fail_after(TIMEOUT):
        done = await trio.run_process(
            [sys.executable, "-m", "trimtab", *args],
            env=env,
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )
    return done.returncode, done.stdout.decode(), done.stderr.decode()


async def test_a_client_in_wsl_reaches_the_windows_host_over_loopback(mnt: Path) -> None:
    """A host listening on 127.0.0.1 with its info file and secret in the Windows user's
    folder is found and used by a client process that runs "in WSL": it lists the
    browser with its port and reaches it with the secret of the Windows folder, which
    the drive shows world-readable."""
    # The Windows host keeps its endpoints and its secret in %LOCALAPPDATA%\trimtab.
    state = mnt / "c" / "Users" / "Ann" / "AppData" / "Local" / "trimtab"
    async with bare_link(state, state, Transport("tcp")) as link:
        os.chmod(state / SECRET_FILE, 0o777)  # as the Windows drive shows it
        assert isinstance(link.address, TcpAddress)
        code, out, err = await _wsl_trimtab(mnt, "mcp", "--list-browsers")
        assert code == 0, err
        assert out.rstrip().endswith(f"\trunning\tdefault\t127.0.0.1:{link.address.port}")
        code, out, err = await _wsl_trimtab(mnt, "tabs")
        assert code == 0, err
        assert "no tab is shared with agents" in err


async def test_a_windows_endpoint_that_does_not_answer_says_how_wsl_reaches_windows(
    mnt: Path,
) -> None:
    """When the Windows host's port does not answer from WSL (WSL 2's NAT mode keeps
    its own loopback), the client names the endpoint and the WSL setting, in one line."""
    state = _windows_user(mnt, "Ann", secret=True)
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
        _tcp_info(state, "chrome-aaaa0000", port)
        code, out, err = await _wsl_trimtab(mnt, "tabs")
    assert (code, out) == (3, "")
    assert err.startswith("trimtab: no_browser: no running browser with the Trimtab extension")
    assert f"endpoint chrome-aaaa0000 (127.0.0.1:{port}) does not answer from WSL" in err
    assert WSL_LOOPBACK_HINT in err
    assert err.count("\n") == 1
