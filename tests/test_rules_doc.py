"""docs/rules.md is the project's copy of the team's shared RULES.md (the source of truth).

A clone must be complete, so the rules travel with it; this test keeps the copy honest wherever the
shared folder is laid beside the project (as on the team's machines and in CI).
"""

import pytest
from support import ROOT

COPY = ROOT / "docs" / "rules.md"
SHARED = ROOT.parent / "shared" / "RULES.md"


def _body(text: str) -> str:
    """The rule text without the copy's note (an HTML comment right after the title)."""
    lines = text.splitlines()
    out, in_note = [], False
    for line in lines:
        if line.startswith("<!-- This copy travels"):
            in_note = True
        if not in_note:
            out.append(line)
        if in_note and line.rstrip().endswith("-->"):
            in_note = False
    return "\n".join(x for x in out).replace("\n\n\n", "\n\n").strip()


def test_rules_copy_is_in_the_repository():
    assert COPY.is_file()
    assert "## 4. Placing a card" in COPY.read_text()


def test_rules_copy_matches_the_shared_text():
    if not SHARED.is_file():
        pytest.skip(
            "no ../shared/RULES.md beside this clone (only the team's machines and CI have it)"
        )
    assert _body(COPY.read_text()) == _body(SHARED.read_text()), (
        "docs/rules.md differs from ../shared/RULES.md: copy the shared text (the source of truth)"
    )
