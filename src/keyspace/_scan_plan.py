"""The scan plan of a scope: from its layout, own ranges, read guard and view to
the store call and the decoded chunks.

Every scan of a :class:`~keyspace.scope.Scope` (``items``, ``keys``, ``values``,
iteration, ``len``, ``clear_range``) runs here, on inputs the scope hands over
explicitly: the ``layout`` of its keys as the ``view`` stores them, its ``own``
ranges, the ``bound`` function that turns a key into the stored bound of a range,
the ``scheme`` and key ``codec`` (to read a ``prefix=``), the read ``guard``
(``None`` where reads need none) and ``hidden``, the scope's check of it, the chunk ``decoder`` and
``touch`` (one point read, so that a scan of nothing still raises on a closed
view). The functions read nothing else of the scope: the scope keeps the fields,
the plan the route.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable, Iterator
from itertools import chain
from typing import Any

from .codecs import Codec, native_type
from .errors import InvalidArgument, show_bytes
from .schemes._base import Key, Scheme
from .schemes._layouts import Layout
from .stores._base import ReadView, page_list

__all__ = ["check_range_arguments", "chunks", "pairs", "short", "short_py", "stored_ranges"]

Range = tuple[bytes, bytes | None]
Chunk = list[tuple[Any, bytes]]
_Read = tuple[
    Iterable[Iterable[tuple[bytes, bytes]]],
    Callable[[Chunk], Chunk] | None,
    Callable[[bytes], bool] | None,
    int | None,
]


def check_range_arguments(include_start: Any, include_stop: Any, reverse: Any, limit: Any) -> None:
    """Refuse range arguments of the wrong type with :class:`InvalidArgument`
    naming them: a flag that is not a bool (:func:`check_flags`), a ``limit``
    that is not an int or ``None`` (``True`` is an int to Python, not a count),
    or a negative ``limit`` (``None`` means no limit; ``-1`` is not taken for it)."""
    check_flags(include_start, include_stop, reverse)
    if limit is not None and type(limit) is not int:
        raise InvalidArgument(f"limit must be an int or None, not {show_bytes(limit)}")
    if limit is not None and limit < 0:
        raise InvalidArgument(f"limit must be 0 or more (None for no limit), not {limit}")


def check_flags(include_start: Any, include_stop: Any, reverse: Any = False) -> None:
    """Refuse a range flag that is not a bool (``include_stop="false"`` is truthy:
    taken as it is, it would read, or delete, the stop key) with
    :class:`InvalidArgument` naming it."""
    flags = (("include_start", include_start), ("include_stop", include_stop), ("reverse", reverse))
    for name, value in flags:
        if type(value) is not bool:
            raise InvalidArgument(f"{name} must be True or False, not {show_bytes(value)}")


def intersect(ranges: tuple[Range, ...], lo: bytes, hi: bytes | None) -> list[Range]:
    """Clip each half-open range to ``[lo, hi)``, dropping the empty ones."""
    out: list[Range] = []
    for start, stop in ranges:
        a = start if start >= lo else lo
        if hi is None:
            b = stop
        elif stop is None:
            b = hi
        else:
            b = stop if stop <= hi else hi
        if b is None or a < b:
            out.append((a, b))
    return out


def scheme_keys(scheme: Scheme, native: type | None) -> bool:
    """Whether a scope whose key codec declares ``native`` (its
    :func:`~keyspace.codecs.native_type`) hands its keys to the scheme as they
    are: ``bytes`` keys, and ``str`` or ``int`` keys in a scheme of typed keys
    (the tuple scheme). Any other codec (``str``/``int`` in the byte schemes,
    ``json``, one that declares nothing) turns each key into the bytes the
    scheme takes."""
    return native is bytes or (scheme.typed_keys and (native is str or native is int))


def stored_ranges(
    layout: Layout,
    own: tuple[Range, ...],
    bound: Callable[[Any], bytes],
    scheme: Scheme,
    codec: Codec,
    guard: object,
    hidden: Callable[[], bool],
    view: ReadView,
    start: Key | None,
    stop: Key | None,
    include_start: bool,
    include_stop: bool,
    prefix: Key | None,
) -> list[Range]:
    """The stored ranges asked for, clipped to the own ranges: exactly the own
    keys asked for (no filter left to apply). A ``prefix=`` of a layout that
    stores each key's length before it (ScopeHash, scoped-heed) is one range
    per length stored, found by seeking the view once per length after the
    read guard."""
    if type(include_start) is not bool or type(include_stop) is not bool:
        check_flags(include_start, include_stop)
    keep = None
    if prefix is not None:
        if start is not None or stop is not None:
            raise InvalidArgument(
                f"'prefix' cannot be combined with 'start' or 'stop' (prefix={show_bytes(prefix)}, "
                f"start={show_bytes(start)}, stop={show_bytes(stop)})"
            )
        if scheme_keys(scheme, native_type(codec)):
            lo, hi, keep = layout.prefix_range(prefix, bound)
        else:  # a key of the codec: the scheme's key (and prefix) is its bytes
            lo, hi, keep = layout.prefix_range(codec.encode(prefix))
    else:
        lo = layout.prefix
        hi = None
        if start is not None:
            lo = bound(start)
            if not include_start:
                lo += b"\x00"
        if stop is not None:
            hi = bound(stop)
            if include_stop:
                hi += b"\x00"
    if guard is not None and hidden():
        return []
    if keep is None:
        return intersect(own, lo, hi)
    if not own:
        return []
    with view.seeker(own[-1][1]) as seeker:
        found = keep.runs(seeker.seek)
    return [r for lo, hi in found for r in intersect(own, lo, hi)]


def chunks(*args: Any, **kwargs: Any) -> Generator[Chunk, None, None]:
    """The own items asked for as a series of non-empty lists: ``(key, raw
    value)`` decoded by the layout's ``decode_chunk`` (``decode=False``: the
    stored pairs of own keys), from the pages of the view's one read route,
    ``read_pages`` of the stored ranges (which a limit reaches where every item
    read is one asked for: the layout's own ranges are exact). ``keys``: only
    the keys are read, and every value is ``b""``. Where the layout is
    ``plain`` and the keys are its own (bytes), the view gives the keys without
    the prefix (``cut``), which is their decoding: an engine that leaves the
    prefix out itself (LevelDB) then makes no key twice. Nothing is read before
    the first chunk is asked for."""
    return _chunked(False, args, kwargs)


def _chunked(stream: bool, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Generator[Chunk, None, None]:
    """The chunks of :func:`chunks` (its ``args`` and ``kwargs``) as one generator,
    :func:`_read` at its first step, so that a chunk passes through no generator
    but this one: each page a list, decoded by ``convert`` or filtered by
    ``is_own``, at most ``left`` items in all, the empty ones left out. With
    ``stream``, where the view's pages are the items asked for (no limit,
    decoding or filter left), the view's own pages as they are, which a view may
    stream from its engine (see :meth:`~keyspace.stores.ReadView.read_pages`)."""
    read = _read(*args, **kwargs)
    if read is None:
        return
    pages, convert, is_own, left = read
    if stream and convert is None and is_own is None and left is None:
        yield from pages  # type: ignore[misc]  # pages of items, given as they are
        return
    for page in pages:
        chunk = page_list(page)
        if convert is not None:
            chunk = convert(chunk)
        elif is_own is not None:
            chunk = [item for item in chunk if is_own(item[0])]
        if left is not None:
            if len(chunk) >= left:
                yield chunk[:left]
                return
            left -= len(chunk)
        if chunk:
            yield chunk


def _read(
    layout: Layout,
    own: tuple[Range, ...],
    bound: Callable[[Any], bytes],
    scheme: Scheme,
    codec: Codec,
    guard: object,
    hidden: Callable[[], bool],
    view: ReadView,
    decoder: Callable[[list[tuple[bytes, bytes]]], Chunk],
    touch: Callable[[], None],
    start: Key | None = None,
    stop: Key | None = None,
    include_start: bool = True,
    include_stop: bool = False,
    reverse: bool = False,
    limit: int | None = None,
    prefix: Key | None = None,
    decode: bool = True,
    keys: bool = False,
) -> _Read | None:
    """The read of :func:`chunks` (its arguments): ``(pages, convert, is_own,
    limit)``, the view's pages of the stored ranges asked for and what each
    still needs (``convert``: the decoder; ``is_own``: the filter of a layout
    whose ranges hold others' keys; both ``None``: the pages are the items asked
    for; ``limit``: the most items to give), or ``None`` where nothing is to be
    read (the view touched)."""
    if type(reverse) is not bool:
        check_flags(include_start, include_stop, reverse)
    ranges = stored_ranges(
        layout,
        own,
        bound,
        scheme,
        codec,
        guard,
        hidden,
        view,
        start,
        stop,
        include_start,
        include_stop,
        prefix,
    )
    if not ranges or (limit is not None and limit <= 0):
        touch()  # nothing to read, on a view that must still be open
        return None
    if reverse:
        ranges.reverse()
    exact = layout.exact
    is_own = None if exact else layout.is_own
    convert = decoder if decode else None
    cut = 0
    if convert is decoder and layout.plain and decoder is layout.decode_chunk:
        cut, convert = len(layout.prefix), None
    return view.read_pages(ranges, reverse, limit if exact else None, keys, cut), convert, is_own, limit


def short_py(
    layout: Layout,
    own: tuple[Range, ...],
    bound: Callable[[Any], bytes],
    scheme: Scheme,
    codec: Codec,
    guard: object,
    hidden: Callable[[], bool],
    view: ReadView,
    decoder: Callable[[list[tuple[bytes, bytes]]], Chunk],
    touch: Callable[[], None],
    start: Key | None,
    stop: Key | None,
    include_start: bool,
    include_stop: bool,
    reverse: bool,
    limit: int | None,
    prefix: Key | None,
) -> Chunk | None:
    """The decoded items of a short scan (``limit`` up to 1024) read at once,
    with no generator between the store and the caller; ``None`` for every other
    scan (the chunked route). Where the own ranges are exact, each range is one
    store scan that the store itself limits, and a range that gives ``limit``
    items is the last one opened; elsewhere reads go on until ``limit`` own
    keys are found or the range ends. Cost: one store scan (the first range
    holding enough items) and one chunk decode. The reference of the C
    :data:`short`."""
    if limit is None:
        return None
    if (  # `is` tests, no call: this runs before every short scan
        limit.__class__ is not int
        or limit < 0
        or (include_start is not True and include_start is not False)
        or (include_stop is not True and include_stop is not False)
        or (reverse is not True and reverse is not False)
    ):
        check_range_arguments(include_start, include_stop, reverse, limit)
    if limit > 1024:
        return None
    if prefix is None and guard is None:
        # the common short scan, with no filter: the ranges without a frame more
        if start is None:
            lo = layout.prefix
        else:
            lo = bound(start)
            if not include_start:
                lo += b"\x00"
        if stop is None:  # from a start on: the own ranges that end after it
            ranges = []  # a loop, not a comprehension: no frame (Python 3.11)
            for r_lo, r_hi in own:
                if r_hi is None or lo < r_hi:
                    ranges.append((lo if lo > r_lo else r_lo, r_hi))
        else:
            end = bound(stop)
            if include_stop:
                end += b"\x00"
            ranges = intersect(own, lo, end)
    else:
        ranges = stored_ranges(
            layout,
            own,
            bound,
            scheme,
            codec,
            guard,
            hidden,
            view,
            start,
            stop,
            include_start,
            include_stop,
            prefix,
        )
    if not ranges or limit <= 0:
        touch()  # nothing to read, on a view that must still be open
        return []
    if reverse:
        ranges.reverse()
    read = view.read_pages
    out: Chunk = []
    if layout.exact:  # every item read is one asked for: the store honours the limit
        # a limited read's pages are lists (the contract)
        if layout.plain and decoder is layout.decode_chunk:  # the keys without the prefix are the keys
            for page in read(ranges, reverse, limit, False, len(layout.prefix)):
                out += page
            return out
        for page in read(ranges, reverse, limit):
            out += decoder(page)  # type: ignore[arg-type]
        return out
    # the own keys are filtered out of the range: read the stored items in
    # limited reads, the first of as many as are still wanted, each next
    # (after the last key read) four times larger, so that a short scan
    # reads no more than it needs where no child's key lies between
    for lo, hi in ranges:
        want = limit - len(out)
        while len(out) < limit:
            want = max(want, limit - len(out))
            got = list(chain.from_iterable(read([(lo, hi)], reverse, want)))
            if got:
                out += decoder(got)
            if len(got) < want:
                break
            if reverse:
                hi = got[-1][0]
            else:
                lo = got[-1][0] + b"\x00"
            want = min(want * 4, 1024)
        if len(out) >= limit:
            break
    return out[:limit]


short: Callable[..., Chunk | None] = short_py
"""The short scan of :func:`short_py` (its arguments), its common case (an int
limit up to 1024, flags that are bools, no ``prefix=``, no read guard) read in
C with no Python frame where the optional module is built, every other call
the reference's."""
try:
    from ._scan_plan_accel import Short

    short = Short(short_py)
except ImportError:  # pragma: no cover - the optional C module is not built
    pass


def pairs(
    layout: Layout,
    own: tuple[Range, ...],
    bound: Callable[[Any], bytes],
    scheme: Scheme,
    codec: Codec,
    guard: object,
    hidden: Callable[[], bool],
    view: ReadView,
    decoder: Callable[[list[tuple[bytes, bytes]]], Chunk],
    touch: Callable[[], None],
    *args: Any,
) -> Iterator[tuple[Any, bytes]]:
    """The items of :func:`chunks` one by one, read as the caller reads them where
    the view streams them (:func:`_chunked` with ``stream``)."""
    return chain.from_iterable(
        _chunked(True, (layout, own, bound, scheme, codec, guard, hidden, view, decoder, touch, *args), {})
    )
