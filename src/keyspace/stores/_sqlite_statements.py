"""The statements an SQLite store and its watched reads share: the point read
and the paged scans of the ``kv`` table."""

from __future__ import annotations

__all__ = ["GET", "KEY_PAIR_SCANS", "KEY_SCANS", "SCANS"]

GET = "SELECT v FROM kv WHERE k = ?"

# Paged scans: (reverse, bounded) -> (first page, next page). Parameters: the bounds,
# then the page size; a next page replaces the bound on the scan side by the last key.
SCANS = {
    (False, False): (
        "SELECT k, v FROM kv WHERE k >= ? ORDER BY k LIMIT ?",
        "SELECT k, v FROM kv WHERE k > ? ORDER BY k LIMIT ?",
    ),
    (False, True): (
        "SELECT k, v FROM kv WHERE k >= ? AND k < ? ORDER BY k LIMIT ?",
        "SELECT k, v FROM kv WHERE k > ? AND k < ? ORDER BY k LIMIT ?",
    ),
    (True, False): (
        "SELECT k, v FROM kv WHERE k >= ? ORDER BY k DESC LIMIT ?",
        "SELECT k, v FROM kv WHERE k >= ? AND k < ? ORDER BY k DESC LIMIT ?",
    ),
    (True, True): (
        "SELECT k, v FROM kv WHERE k >= ? AND k < ? ORDER BY k DESC LIMIT ?",
        "SELECT k, v FROM kv WHERE k >= ? AND k < ? ORDER BY k DESC LIMIT ?",
    ),
}

KEY_SCANS = {
    bounds: (first.replace("k, v", "k"), then.replace("k, v", "k")) for bounds, (first, then) in SCANS.items()
}

# rows of a keys-only read as its pages hold them: (key, b"")
KEY_PAIR_SCANS = {
    bounds: (first.replace("k, v", "k, x''"), then.replace("k, v", "k, x''"))
    for bounds, (first, then) in SCANS.items()
}
