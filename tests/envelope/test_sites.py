"""Sites per task without a browser: what a URL's site is, the person's always and never
lists and their file, and the one function that decides and asks about a site."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
import trio
from hypothesis import assume, example, given
from hypothesis import strategies as st
from publicsuffixlist import PublicSuffixList

from trimtab.envelope import SITES_FILE, Answer, Question, SitePolicy, decide_site
from trimtab.sites import Site, SiteError, parse_site, site_note, site_of

EXAMPLE = Site("https", "example.com")
# "example.com" with a Cyrillic a, and in full-width Latin letters.
LOOK_ALIKE = "ex\u0430mple.com"
FULL_WIDTH = "\uff45\uff58\uff41\uff4d\uff50\uff4c\uff45.com"


@pytest.mark.parametrize(
    ("url", "site"),
    [
        ("https://example.com/a?b#c", "https://example.com"),
        ("https://www.shop.example.com/", "https://example.com"),
        ("https://evil.example.com.attacker.net/steal", "https://attacker.net"),
        ("https://example.com:8443/", "https://example.com"),
        ("http://example.com/", "http://example.com"),
        ("HTTPS://WWW.EXAMPLE.COM./", "https://example.com"),
        ("https://www.bbc.co.uk/news", "https://bbc.co.uk"),
        ("https://someone.github.io/page", "https://someone.github.io"),
        (f"https://{LOOK_ALIKE}/", "https://xn--exmple-4nf.com"),
        (f"https://{FULL_WIDTH}/", "https://example.com"),
        ("https://%61ttacker.net/", "https://attacker.net"),
        ("http://127.0.0.1:8000/x", "http://127.0.0.1"),
        ("http://2130706433/", "http://127.0.0.1"),
        ("http://0x7f.0.0.1/", "http://127.0.0.1"),
        ("http://0177.0.0.1/", "http://127.0.0.1"),
        ("http://[0:0::1]:8080/", "http://[::1]"),
        ("http://localhost:9/", "http://localhost"),
        ("blob:https://app.example.com/4c1d", "https://example.com"),
        ("file:///home/me/notes.txt", "file://"),
        ("chrome://settings/passwords", "chrome://settings"),
        ("data:text/html,<b>hi</b>", "data:"),
        ("javascript:alert(1)", "javascript:"),
        ("about:blank", "about:"),
        ("not a url", "(no site)"),
    ],
)
def test_site_of_names_scheme_and_registrable_domain(url: str, site: str) -> None:
    """A URL's site is its scheme and registrable domain from the public suffix list:
    port, subdomains, case, a trailing dot and percent-escapes do not change it;
    internationalised names are punycode; IP addresses stand for themselves; data:,
    javascript: and about: have no site of their own."""
    assert str(site_of(url)) == site


@pytest.mark.parametrize(
    "url",
    [
        "https://attacker.net\\@example.com/",
        "https:\\\\attacker.net/",
        "https:attacker.net/example.com",
        "https:///attacker.net/",
        "https://example.com@attacker.net/",
        "https://example.com:443@attacker.net/",
        " https://attacker.net/\t",
        "https://attac\nker.net/",
        "https://attacker.net#@example.com",
        "https://attacker.net?@example.com",
    ],
)
def test_spellings_the_browser_reads_as_attacker_net_are_attacker_net(url: str) -> None:
    """Backslashes, missing or extra slashes, user info before @, and stray whitespace are
    read as the browser reads them: each of these URLs opens attacker.net, so its site
    is attacker.net and never the example.com written somewhere in it."""
    assert site_of(url) == Site("https", "attacker.net")


def test_about_blank_takes_its_creators_site() -> None:
    """An about:blank (or about:srcdoc) page is its creator's site when the creator is
    known (a pop-up its opener writes into), and no site otherwise."""
    assert site_of("about:blank", creator=EXAMPLE) == EXAMPLE
    assert site_of("about:srcdoc", creator=EXAMPLE) == EXAMPLE
    assert site_of("about:blank").opaque


def test_notes_explain_look_alikes_ip_addresses_http_and_files() -> None:
    """The question's note says what a person should know about a site: a name in
    other alphabets (and the Latin name it is not), an IP address, plain http, a file."""
    note = site_note(site_of(f"https://{LOOK_ALIKE}/"))
    assert note is not None
    assert f"{LOOK_ALIKE!r}" in note
    assert "it is not example.com (Latin letters)" in note
    ip = site_note(site_of("http://127.0.0.1/"))
    assert ip is not None
    assert "IP address" in ip
    assert "different site from https://127.0.0.1" in ip
    assert "on this computer" in str(site_note(site_of("file:///tmp/x")))
    assert site_note(EXAMPLE) is None


def test_parse_site_takes_sites_and_refuses_what_names_none() -> None:
    """A person's list entry is a site or any URL of one (kept as its site); text that
    names no site is refused, naming it."""
    assert parse_site("https://www.example.com/shop") == EXAMPLE
    assert parse_site("file:///") == Site("file", "")
    for bad in ("example.com", "", "data:text/plain,x", "javascript:x", "https://", "about:blank"):
        with pytest.raises(SiteError) as caught:
            parse_site(bad)
        assert repr(bad)[:20] in str(caught.value)


# --- properties ---------------------------------------------------------------------

LABEL = st.from_regex(r"[a-z][a-z0-9]{0,11}", fullmatch=True)
SUFFIX = st.sampled_from(["com", "net", "org", "co.uk", "com.au", "github.io", "test"])
SCHEME = st.sampled_from(["http", "https"])
PORT = st.one_of(st.just(""), st.integers(1, 65535).map(lambda p: f":{p}"))
PATH = st.from_regex(r"(/[a-z0-9@.:]{0,8}){0,3}", fullmatch=True)


PUBLIC_SUFFIXES = PublicSuffixList()


@given(SCHEME, st.lists(LABEL, max_size=4), LABEL, SUFFIX, PORT, PATH)
def test_every_subdomain_port_and_path_is_the_registrable_domains_site(
    scheme: str, subdomains: list[str], name: str, suffix: str, port: str, path: str
) -> None:
    """Any subdomain of a registrable domain, with any port and path, is that domain's
    site under the same scheme."""
    # A generated name may be a public suffix itself ("x0.com" is one: its users'
    # subdomains are sites of their own), so it is no registrable domain.
    assume(not PUBLIC_SUFFIXES.is_public(f"{name}.{suffix}"))
    host = ".".join([*subdomains, name, suffix])
    assert site_of(f"{scheme}://{host}{port}{path}") == Site(scheme, f"{name}.{suffix}")


@given(SCHEME, LABEL)
@example(scheme="http", name="a")
def test_a_subdomain_of_a_private_public_suffix_is_a_site_of_its_own(
    scheme: str, name: str
) -> None:
    """Under a suffix of the list's private part (``x0.com``), each subdomain is its own
    site, as browsers treat it."""
    assert site_of(f"{scheme}://{name}.x0.com/") == Site(scheme, f"{name}.x0.com")


@given(LABEL, SUFFIX, PATH)
def test_changing_the_scheme_changes_the_site(name: str, suffix: str, path: str) -> None:
    """http and https of one domain are two sites."""
    assert site_of(f"http://{name}.{suffix}{path}") != site_of(f"https://{name}.{suffix}{path}")


@given(LABEL, LABEL, SUFFIX)
def test_a_trusted_name_before_the_at_sign_is_not_the_site(
    trusted: str, other: str, suffix: str
) -> None:
    """``https://trusted.com@other.com`` opens other.com: the site is other's."""
    url = f"https://{trusted}.{suffix}@{other}.{suffix}/"
    assert site_of(url) == Site("https", f"{other}.{suffix}")


@given(st.text(max_size=80))
def test_site_of_never_fails_and_its_name_parses_back(text: str) -> None:
    """Any text has a site (maybe opaque), and a site's name, read back, is that site."""
    site = site_of(text)
    assert isinstance(str(site), str)
    if not site.opaque and site.host and site.scheme in ("http", "https"):
        assert parse_site(str(site)) == site


# --- the policy ---------------------------------------------------------------------


def test_a_task_starts_on_its_site_and_once_adds_a_site_for_that_task_only() -> None:
    """A task may act where it started; "once" allows another site for that task and
    not for another task; an opaque start allows nothing."""
    policy = SitePolicy()
    policy.start("t1", EXAMPLE)
    other = Site("https", "other.org")
    assert policy.verdict("t1", EXAMPLE) == "allow"
    assert policy.verdict("t1", other) == "ask"
    policy.remember("t1", other, always=False)
    assert policy.verdict("t1", other) == "allow"
    assert policy.verdict("t2", other) == "ask"
    policy.start("t1", Site("https", "third.net"))  # started already: unchanged
    assert policy.allowed("t1") == {EXAMPLE, other}
    policy.start("t3", Site.none("about"))
    assert policy.started("t3")
    assert policy.allowed("t3") == frozenset()


def test_never_refuses_even_where_the_task_started_and_opaque_sites_always_ask() -> None:
    """The never list refuses a site for every task, its starting site included; a
    site with no name (data:) is never allowed, so it is asked about each time."""
    policy = SitePolicy(never=frozenset({EXAMPLE}))
    policy.start("t", EXAMPLE)
    assert policy.verdict("t", EXAMPLE) == "refuse"
    data = Site.none("data")
    policy.remember("t", data, always=True)
    assert policy.verdict("t", data) == "ask"
    assert policy.always == frozenset()


def test_always_is_saved_privately_and_read_back_by_the_next_host(tmp_path: Path) -> None:
    """An "always" goes to sites.json at once (0600, in a 0700 folder); the next host
    reads it, and the site is then allowed for every task."""
    folder = tmp_path / "state" / "trimtab"
    policy = SitePolicy.load(folder)
    policy.remember("t1", EXAMPLE, always=True)
    path = folder / SITES_FILE
    assert json.loads(path.read_text()) == {"always": ["https://example.com"], "never": []}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert [p.name for p in folder.iterdir()] == [SITES_FILE]  # no temporary file left
    again = SitePolicy.load(folder)
    assert again.verdict("another task", EXAMPLE) == "allow"


def test_set_lists_validates_every_entry_and_keeps_the_old_lists_on_error(
    tmp_path: Path,
) -> None:
    """The person's lists are replaced whole, each entry normalised to its site; a bad
    entry or a site on both lists is refused naming it, and nothing changes."""
    policy = SitePolicy.load(tmp_path)
    policy.set_lists(["https://www.example.com/"], ["http://bad.example.net"])
    assert policy.lists() == {"always": ["https://example.com"], "never": ["http://example.net"]}
    for always, never, named in (
        (["example.com"], [], "'example.com'"),
        ([42], [], "42"),
        (["https://a.com"], ["https://www.a.com"], "'https://a.com' is on both"),
    ):
        with pytest.raises(SiteError) as caught:
            policy.set_lists(always, never)
        assert named in str(caught.value)
    assert policy.lists() == {"always": ["https://example.com"], "never": ["http://example.net"]}
    assert SitePolicy.load(tmp_path).lists() == policy.lists()


def test_an_unreadable_file_is_set_aside_and_the_lists_start_empty(tmp_path: Path) -> None:
    """A sites.json that is not the lists (broken JSON, a bad entry) is moved aside so
    the host starts, with empty lists, rather than failing."""
    for content in ("{not json", json.dumps({"always": ["nonsense"]})):
        (tmp_path / SITES_FILE).write_text(content)
        policy = SitePolicy.load(tmp_path)
        assert policy.lists() == {"always": [], "never": []}
        assert not (tmp_path / SITES_FILE).exists()
        assert (tmp_path / (SITES_FILE + ".unreadable")).read_text() == content
        os.unlink(tmp_path / (SITES_FILE + ".unreadable"))


def _question(site: Site) -> Question:
    return Question(client="c", session="t", tab=1, what="site", site=str(site), reason="r")


async def test_decide_site_asks_only_what_it_must_and_remembers_the_answer() -> None:
    """decide_site passes an allowed site without asking, refuses a never-listed one
    without asking, and asks about any other, remembering a yes as once or always."""
    other = Site("https", "other.org")
    banned = Site("https", "banned.net")
    policy = SitePolicy(never=frozenset({banned}))
    policy.start("t", EXAMPLE)
    asked: list[Question] = []
    answers = [Answer(allow=True), Answer(allow=False), Answer(allow=True, always=True)]

    async def ask(question: Question) -> Answer:
        asked.append(question)
        await trio.lowlevel.checkpoint()
        return answers.pop(0)

    assert (await decide_site(policy, "t", EXAMPLE, ask, _question(EXAMPLE))).allow
    refused = await decide_site(policy, "t", banned, ask, _question(banned))
    assert not refused.allow
    assert refused.refusal() == "the person's settings never allow the agent on https://banned.net"
    assert asked == []
    assert (await decide_site(policy, "t", other, ask, _question(other))).allow
    assert (await decide_site(policy, "t", other, ask, _question(other))).allow
    assert len(asked) == 1  # once per site per task
    third = Site("http", "third.example")
    assert not (await decide_site(policy, "t", third, ask, _question(third))).allow
    assert policy.verdict("t", third) == "ask"  # a no is for that call only
    assert (await decide_site(policy, "t", third, ask, _question(third))).allow
    assert policy.always == {third}
    assert [q.to_json()["choices"] for q in asked] == [["once", "always", "no"]] * 3
    assert asked[0].to_json()["site"] == "https://other.org"
