"""`Seq`: an immutable sequence that grows at its end in constant time, whatever version
it grows from.

An engine's state keeps the questions played, the judgements and the undo chain as
sequences that only ever grow at the end, or change their last item (the question being
played). With tuples every event copied the whole collection (``played[:-1] + (q,)``), so
folding a game cost more per event the longer the game. A `Seq` keeps its items in chunks
of `CHUNK` (immutable tuples) held in one list shared with the versions it came from, the
items after the last full chunk in a short tuple, and its last item beside them:

- ``set_last(x)`` is O(1) and ``append(x)`` O(CHUNK): a full chunk is pushed onto the
  shared list in place when this version is the list's newest, or when the list already
  holds the same chunk (a version grown again after an undo);
- ``without_last()`` is O(CHUNK) (undo);
- a version that branches off an older one (an append after an undo that changed the last
  item, as every question does) or changes an item in the middle (a rejudgement, a
  judgement voided) copies the list of chunks, not the items: n / CHUNK references. With
  one flat list those were whole-list copies, and a fold cost more per event the longer
  the game (bench/replay.py's walk: 5.8-6.8 µs an event at 50,000 against 5.2-5.7 µs now).

Every version stays valid and unchanged whatever is done to the others, so a `Seq` is as
safe to share between threads as a tuple (chunks below a version's count are never
written). Equality and hashing are by content, like a tuple's, and a `Seq` equals the tuple
of the same items.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Generic, TypeVar, overload

T = TypeVar("T")

CHUNK = 32

_NONE: Any = object()
_new = object.__new__


def _same(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))


class Seq(Sequence[T], Generic[T]):
    __slots__ = ("_chunks", "_nc", "_tail", "_last")

    def __init__(self, items: Iterable[T] = ()) -> None:
        lst = list(items)
        self._last: T = lst.pop() if lst else _NONE
        full = len(lst) // CHUNK * CHUNK
        # The chunks of the shared list that belong to this version: the first `_nc`.
        self._chunks: list[tuple[T, ...]] = [tuple(lst[i:i + CHUNK])
                                             for i in range(0, full, CHUNK)]
        self._nc = len(self._chunks)
        self._tail: tuple[T, ...] = tuple(lst[full:])  # fewer than CHUNK items

    @staticmethod
    def _make(chunks: list[tuple[T, ...]], nc: int, tail: tuple[T, ...], last: T) -> Seq[T]:
        new: Seq[T] = _new(Seq)
        new._chunks, new._nc, new._tail, new._last = chunks, nc, tail, last
        return new

    # -- growing ---------------------------------------------------------------------------
    def append(self, item: T) -> Seq[T]:
        """This sequence and `item` after it."""
        last = self._last
        if last is _NONE:
            return Seq._make([], 0, (), item)
        chunks, nc, tail = self._chunks, self._nc, self._tail + (last,)
        if len(tail) == CHUNK:
            if len(chunks) == nc:
                chunks.append(tail)  # this version is the list's newest: share it
            elif not _same(chunks[nc], tail):
                chunks = chunks[:nc] + [tail]  # another version went on differently
            return Seq._make(chunks, nc + 1, (), item)
        return Seq._make(chunks, nc, tail, item)

    def set_last(self, item: T) -> Seq[T]:
        """This sequence with its last item replaced by `item`."""
        if self._last is _NONE:
            raise IndexError("set_last on an empty Seq")
        new: Seq[T] = _new(Seq)  # `_make` inlined: most events set the question being played
        new._chunks, new._nc, new._tail, new._last = self._chunks, self._nc, self._tail, item
        return new

    def without_last(self) -> Seq[T]:
        """This sequence without its last item."""
        if self._last is _NONE:
            raise IndexError("without_last on an empty Seq")
        tail = self._tail
        if tail:
            return Seq._make(self._chunks, self._nc, tail[:-1], tail[-1])
        if self._nc:
            chunk = self._chunks[self._nc - 1]
            return Seq._make(self._chunks, self._nc - 1, chunk[:-1], chunk[-1])
        return Seq._make([], 0, (), _NONE)

    def set(self, index: int, item: T) -> Seq[T]:
        """This sequence with item `index` replaced: O(n / CHUNK + CHUNK) unless it is the
        last."""
        index = self._index(index)
        base = self._nc * CHUNK
        if index >= base:
            if index == base + len(self._tail):
                return self.set_last(item)
            tail = list(self._tail)
            tail[index - base] = item
            return Seq._make(self._chunks, self._nc, tuple(tail), self._last)
        k, at = divmod(index, CHUNK)
        chunks = self._chunks[:self._nc]
        chunk = list(chunks[k])
        chunk[at] = item
        chunks[k] = tuple(chunk)
        return Seq._make(chunks, self._nc, self._tail, self._last)

    # -- reading ---------------------------------------------------------------------------
    def __len__(self) -> int:
        return self._nc * CHUNK + len(self._tail) + (self._last is not _NONE)

    def _index(self, index: int) -> int:
        size = len(self)
        if index < 0:
            index += size
        if not 0 <= index < size:
            raise IndexError("Seq index out of range")
        return index

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[T, ...]: ...
    def __getitem__(self, index: int | slice) -> T | tuple[T, ...]:
        if index == -1 and self._last is not _NONE:
            return self._last  # the item every fold reads: the question being played
        if isinstance(index, slice):
            return tuple(self)[index]
        index = self._index(index)
        base = self._nc * CHUNK
        if index < base:
            return self._chunks[index // CHUNK][index % CHUNK]
        index -= base
        return self._tail[index] if index < len(self._tail) else self._last

    def __iter__(self) -> Iterator[T]:
        chunks = self._chunks
        for k in range(self._nc):
            yield from chunks[k]
        yield from self._tail
        if self._last is not _NONE:
            yield self._last

    def __bool__(self) -> bool:
        return self._last is not _NONE

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Seq | tuple):
            return len(self) == len(other) and all(
                a is b or a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"Seq({list(self)!r})"


EMPTY: Seq[Any] = Seq()
