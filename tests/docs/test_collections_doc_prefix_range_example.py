"""docs/collections.md: the example of prefix_range, first and DequeMap runs as
written and gives what its comments say (the DequeMap item at the bytes the
document derives)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def test_the_prefix_range_and_deque_map_example_says_what_it_does() -> None:
    text = (ROOT / "docs/collections.md").read_text("utf-8")
    block = next(b for b in re.findall(r"```python\n(.*?)```", text, re.S) if "DequeMap" in b)
    namespace: dict[str, Any] = {}
    exec(compile(block, "docs/collections.md", "exec"), namespace)
    ages, bound = namespace["ages"], namespace["PrefixBound"]
    assert [k for k, _ in ages.prefix_range(bound.exclusive(3), bound.inclusive(5))] == [(5, "c"), (5, "d")]
    assert ages.first() == ((2, "a"), "a")
    assert namespace["ks"].store.get(b"\x00\x05inbox\x00\x05alice\x00\x00\x00\x00") == b'{"msg":"hi"}'
