"""Find and start a headless Chromium that speaks CDP over ``--remote-debugging-pipe``.

The pipe (fds 3 and 4 in the browser, NUL-separated JSON) avoids a TCP port that any
local process could connect to, and dies with the browser. The browser runs in its
own process group so shutdown reaches every helper process it spawned; shutdown asks
politely (``Browser.close``), then terminates, then kills, and happens on every exit
path including cancellation, so no test or tool run leaves a Chromium behind.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path

import trio

from . import _protocol as cdp
from ._direct import Browser, PipeTransport
from ._errors import BrowserNotFoundError

__all__ = ["BASE_ARGS", "browser_args", "browser_env", "find_browser", "launch_browser"]

CHROME_ENV = "TRIMTAB_CHROME"
CANDIDATES = ("chromium", "chromium-browser", "google-chrome")

_DISABLE_FEATURES = "--disable-features="
#: The features that preload the omnibox popup (`BASE_ARGS`).
_NO_OMNIBOX_POPUP = ("WebUIOmniboxPopup", "WebUIOmniboxAimPopup", "WebUIOmniboxFullPopup")

#: Flags every Trimtab-launched browser gets: headless, no sandbox (containers), no
#: traffic of its own (QUIC, background fetches, updates, sync), and no omnibox popup.
BASE_ARGS: tuple[str, ...] = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    # A headless window has no address bar, yet Chromium 156 preloads its popup's
    # WebUI pages in a renderer of their own for every window (every browser context):
    # about 0.75 CPU-s each, measured, which a page never sees.
    _DISABLE_FEATURES + ",".join(_NO_OMNIBOX_POPUP),
)

PROFILE_PREFIX = "trimtab-chrome-"
LOG_NAME = "chrome.log"
# The longest Unix socket path (sun_path less its NUL, macOS's being the shortest), and
# what Chromium adds to its temporary folder for the socket that keeps one browser per
# profile: org.chromium.Chromium.XXXXXX/SingletonSocket.
_MAX_SOCKET_PATH = 103
_SINGLETON_SUFFIX = len("/org.chromium.Chromium.XXXXXX/SingletonSocket")
# Seconds allowed for each shutdown step before the next, harsher one.
CLOSE_GRACE = 3.0
TERMINATE_GRACE = 2.0
# Seconds the killed group may take to die (SIGKILL cannot be refused; this only
# bounds a wait for the kernel).
GROUP_EXIT_WAIT = 2.0


def browser_args(*extra: str) -> list[str]:
    """The switches a Trimtab browser starts with: `BASE_ARGS`, then `extra`, with every
    ``--disable-features`` list joined into one, last. Chromium keeps only the last
    such switch, so a caller's own would turn `BASE_ARGS`' back on."""
    flags = (*BASE_ARGS, *extra)
    names = [
        name
        for flag in flags
        if flag.startswith(_DISABLE_FEATURES)
        for name in flag.removeprefix(_DISABLE_FEATURES).split(",")
        if name
    ]
    kept = [flag for flag in flags if not flag.startswith(_DISABLE_FEATURES)]
    return [*kept, _DISABLE_FEATURES + ",".join(dict.fromkeys(names))] if names else kept


def find_browser() -> Path:
    """The browser to launch: $TRIMTAB_CHROME if set, else the first candidate on PATH."""
    tried: list[str] = []
    configured = os.environ.get(CHROME_ENV)
    if configured:
        path = Path(configured)
        if path.is_file() and os.access(path, os.X_OK):
            return path
        tried.append(f"{CHROME_ENV}={configured} (not an executable file)")
        raise BrowserNotFoundError(tried)
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return Path(found)
        tried.append(f"{name} on PATH")
    raise BrowserNotFoundError(tried)


def browser_env(profile: Path) -> dict[str, str]:
    """The environment to start Chromium with on ``profile``: its temporary folder in the
    profile, so that the folder of its one-browser-per-profile socket goes with the
    profile (a killed browser leaves it behind in /tmp otherwise), when that socket's
    path fits."""
    env = dict(os.environ)
    if len(os.fsencode(profile)) + _SINGLETON_SUFFIX <= _MAX_SOCKET_PATH:
        env["TMPDIR"] = str(profile)
    return env


@contextlib.asynccontextmanager
async def launch_browser(
    *,
    executable: Path | str | None = None,
    extra_args: Sequence[str] = (),
    user_data_dir: Path | str | None = None,
    window_size: tuple[int, int] = (1280, 800),
) -> AsyncIterator[Browser]:
    """Start Chromium and yield a connected `Browser`; stop it (and its group) on exit.

    Without ``user_data_dir`` a fresh temporary profile is created and removed
    afterwards. Chromium's stdout and stderr go to ``chrome.log`` in the profile dir.
    """
    binary = Path(executable) if executable is not None else find_browser()
    own_profile = user_data_dir is None
    profile = (
        Path(tempfile.mkdtemp(prefix=PROFILE_PREFIX)) if own_profile else Path(str(user_data_dir))
    )
    width, height = window_size
    argv = [
        str(binary),
        *browser_args(
            "--remote-debugging-pipe",
            f"--user-data-dir={profile}",
            f"--window-size={width},{height}",
            *extra_args,
        ),
        "about:blank",
    ]
    to_browser_read, to_browser_write = os.pipe()
    from_browser_read, from_browser_write = os.pipe()
    process: trio.Process | None = None
    try:
        with open(profile / LOG_NAME, "ab") as log:
            process = await trio.lowlevel.open_process(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                env=browser_env(profile),
                start_new_session=True,
                # fds 3 and 4 are the pipe ends after _wire_pipe_fds ran in the child.
                pass_fds=(3, 4),
                preexec_fn=_wire_pipe_fds(to_browser_read, from_browser_write),
            )
        os.close(to_browser_read)
        os.close(from_browser_write)
        to_browser_read = from_browser_write = -1
        transport = PipeTransport(
            trio.lowlevel.FdStream(to_browser_write), trio.lowlevel.FdStream(from_browser_read)
        )
        to_browser_write = from_browser_read = -1  # owned by the FdStreams now
        try:
            async with trio.open_nursery() as nursery:
                browser = Browser(transport, pid=process.pid, user_data_dir=profile)
                await nursery.start(transport.run, browser._channel)
                try:
                    yield browser
                finally:
                    with trio.CancelScope(shield=True):
                        await _shutdown(browser, process)
                        await transport.aclose()
                    nursery.cancel_scope.cancel()
        except BaseExceptionGroup as group:
            # The nursery only holds the pipe reader, which does not raise: a lone
            # exception is the caller's own (or a Cancelled), so give it back unwrapped.
            if len(group.exceptions) == 1:
                raise group.exceptions[0] from None
            raise
    finally:
        with trio.CancelScope(shield=True):
            for fd in (to_browser_read, to_browser_write, from_browser_read, from_browser_write):
                if fd >= 0:
                    os.close(fd)
            if process is not None:
                await _kill_group(process)
            if own_profile:
                shutil.rmtree(profile, ignore_errors=True)


def _wire_pipe_fds(browser_reads: int, browser_writes: int) -> Callable[[], None]:
    def wire() -> None:
        # Move both ends above 4 first so dup2 onto 3 cannot clobber the other one.
        reads = fcntl.fcntl(browser_reads, fcntl.F_DUPFD, 5)
        writes = fcntl.fcntl(browser_writes, fcntl.F_DUPFD, 5)
        os.dup2(reads, 3)
        os.dup2(writes, 4)

    return wire


async def _shutdown(browser: Browser, process: trio.Process) -> None:
    if process.returncode is None and not browser.closed:
        with trio.move_on_after(CLOSE_GRACE):
            with contextlib.suppress(Exception):
                await browser.execute(cdp.browser_close())
            await process.wait()
    await _kill_group(process)


async def _kill_group(process: trio.Process) -> None:
    """Terminate, then kill, the browser's whole process group, and reap the leader."""
    for sig, grace in ((signal.SIGTERM, TERMINATE_GRACE), (signal.SIGKILL, None)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, sig)
        if grace is None:
            break
        with trio.move_on_after(grace):
            await process.wait()
            # The leader is gone but helpers of the group may linger; the SIGKILL
            # below reaches them too.
    await process.wait()
    # A SIGKILL is delivered at once but a helper takes a moment to die: the browser
    # is closed when none of its group is left alive (a zombie is dead already).
    with trio.move_on_after(GROUP_EXIT_WAIT):
        while _group_alive(process.pid):
            await trio.sleep(0.01)


def _group_alive(group: int) -> bool:
    """Whether a live (not zombie) process of process group ``group`` remains; on a
    system without ``/proc``, whether the group has any member at all."""
    proc = Path("/proc")
    if not proc.is_dir():
        try:
            os.killpg(group, 0)
        except (ProcessLookupError, PermissionError):
            return False
        return True
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[-1].split()
        except OSError:
            continue  # exited while we looked
        if len(fields) > 2 and fields[0] != "Z" and int(fields[2]) == group:
            return True
    return False
