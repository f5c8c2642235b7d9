"""Tool groups as clients name them: core always in, the catalogue's order kept, and
unknown names refused by name."""

from __future__ import annotations

import pytest

from trimtab.tools import TOOL_GROUPS, TOOLS, parse_groups, tools_in


def test_core_is_always_in_and_order_is_the_catalogues() -> None:
    """Any spelling of a choice gives the groups in TOOL_GROUPS order, core first."""
    assert parse_groups([]) == ("core",)
    assert parse_groups([" devtools", "core", "devtools"]) == ("core", "devtools")
    assert parse_groups(["devtools", "pixels"]) == TOOL_GROUPS


def test_unknown_groups_are_named() -> None:
    """Every unknown name is in the error, with the groups there are."""
    with pytest.raises(ValueError, match="unknown tool groups 'bogus', 'pixel'; the groups") as e:
        parse_groups(["core", "pixel", "bogus"])
    assert "core, pixels, devtools" in str(e.value)


def test_tools_in_keeps_the_catalogue_order() -> None:
    """The tools of the chosen groups come in the catalogue's order; devtools holds the
    console and network reads, which never act."""
    assert tools_in(TOOL_GROUPS) == TOOLS
    devtools = [spec for spec in tools_in(("devtools",))]
    assert {"console", "network"} <= {spec.name for spec in devtools}
    reads = [spec for spec in devtools if spec.name in ("console", "network")]
    assert all(spec.policy.reads_page and not spec.policy.side_effects for spec in reads)
    core = tools_in(("core",))
    assert [spec.name for spec in core] == [spec.name for spec in TOOLS if spec.group == "core"]
