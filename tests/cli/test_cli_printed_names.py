"""What the command line prints of a scope name is one printable line that names
that scope again, whatever the name holds.

Found here: ``inspect`` printed text names (tuple and scopehash scopes) as they
were, so a scope named ``"evil\\n└─ admin"`` drew a row for a scope ``admin``
that does not exist, a name holding an escape sequence (``\\x1b[2J``) was sent
to the terminal, and neither could be given back as a PATH. Text that does not
print is now spelled as a JSON string (``"evil\\n└─ admin"``), which a PATH
component reads back.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from keyspace.cli import main
from keyspace.cli._format import parse_component, render_component, render_path

_TEXT = st.text(
    alphabet=st.sampled_from(["a", "é", "\n", "\r", "\t", "\x00", "\x1b", "[", "\u2028", "\x85", '"', "\\"]),
    max_size=8,
)


@given(name=_TEXT, typed=st.booleans())
def test_a_printed_text_component_is_one_printable_line_that_reads_back(name: str, typed: bool) -> None:
    shown = render_component(name, typed=typed)
    assert shown.isprintable(), shown
    assert parse_component(shown) == name
    assert render_path(("x", name), typed=typed).isprintable()


@given(name=st.binary(max_size=8))
def test_a_printed_bytes_component_reads_back(name: bytes) -> None:
    shown = render_component(name, typed=True)
    assert shown.isprintable() and parse_component(shown) == name


NAMES = ["evil\n└─ admin", "red\x1b[31mX", "a\x00b", "line\u2028sep", "tab\there"]


@pytest.mark.parametrize("scheme", ["tuple", "scopehash"])
def test_inspect_shows_each_scope_as_a_path_that_scans_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, scheme: str
) -> None:
    url = f"lmdb://{tmp_path / 'db'}"
    for i, name in enumerate(NAMES):
        assert main(["put", url, "--scheme", scheme, "--key", f"k{i}", "--value", "v", "--", name]) == 0
    capsys.readouterr()
    assert main(["inspect", url]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith(("├─ ", "└─ "))]
    assert len(rows) == len(NAMES), out  # no forged row
    assert "\x1b" not in out and "\x00" not in out
    for row in rows:
        shown = row[3:].split("  ")[0].rstrip()
        code = main(["scan", url, "--", shown])
        lines = capsys.readouterr().out.splitlines()
        assert code == 0 and len(lines) == 1, (shown, lines)
        i = int(lines[0].split("\t")[0][1:])
        assert parse_component(shown) == NAMES[i]
