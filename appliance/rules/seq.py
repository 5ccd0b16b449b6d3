"""`Seq`: an immutable sequence that grows at its end in constant time.

An engine's state keeps the questions played, the judgements and the undo chain as
sequences that only ever grow at the end, or change their last item (the question being
played). With tuples every event copied the whole collection (``played[:-1] + (q,)``), so
folding a game cost more per event the longer the game; replaying 50,000 events took five
times longer per event than 1,000. A `Seq` shares one list with the versions it came from:

- ``append(x)`` and ``set_last(x)`` are O(1): the last item lives beside the shared list,
  and appending pushes it onto the list in place when this version is the list's newest;
- ``without_last()`` is O(1) (undo);
- a version that branches off an older one (an append after an undo) copies the list once.

Every version stays valid and unchanged whatever is done to the others, so a `Seq` is as
safe to share between threads as a tuple (items below a version's length are never
written). Equality and hashing are by content, like a tuple's, and a `Seq` equals the tuple
of the same items.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Generic, TypeVar, overload

T = TypeVar("T")

_NONE: Any = object()
_new = object.__new__


class Seq(Sequence[T], Generic[T]):
    __slots__ = ("_items", "_n", "_last")

    def __init__(self, items: Iterable[T] = ()) -> None:
        lst = list(items)
        self._last: T = lst.pop() if lst else _NONE
        self._items: list[T] = lst
        self._n = len(lst)  # items of the shared list that belong to this version

    @classmethod
    def _make(cls, items: list[T], n: int, last: T) -> Seq[T]:
        new = object.__new__(cls)
        new._items, new._n, new._last = items, n, last
        return new

    # -- growing ---------------------------------------------------------------------------
    def append(self, item: T) -> Seq[T]:
        """This sequence and `item` after it."""
        if self._last is _NONE:
            return Seq._make([], 0, item)
        items, n = self._items, self._n
        if len(items) == n:
            items.append(self._last)  # this version is the list's newest: share it
        elif items[n] is not self._last:
            items = items[:n] + [self._last]  # another version went on differently
        return Seq._make(items, n + 1, item)

    def set_last(self, item: T) -> Seq[T]:
        """This sequence with its last item replaced by `item`."""
        if self._last is _NONE:
            raise IndexError("set_last on an empty Seq")
        new = _new(Seq)  # `_make` inlined: most events set the question being played
        new._items, new._n, new._last = self._items, self._n, item
        return new

    def without_last(self) -> Seq[T]:
        """This sequence without its last item."""
        if self._last is _NONE:
            raise IndexError("without_last on an empty Seq")
        if self._n == 0:
            return Seq._make([], 0, _NONE)
        return Seq._make(self._items, self._n - 1, self._items[self._n - 1])

    def set(self, index: int, item: T) -> Seq[T]:
        """This sequence with item `index` replaced (O(n) unless it is the last)."""
        index = self._index(index)
        if index == self._n:
            return self.set_last(item)
        items = self._items[:self._n]
        items[index] = item
        return Seq._make(items, self._n, self._last)

    # -- reading ---------------------------------------------------------------------------
    def __len__(self) -> int:
        return self._n + (self._last is not _NONE)

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
        return self._last if index == self._n else self._items[index]

    def __iter__(self) -> Iterator[T]:
        items, n = self._items, self._n
        for i in range(n):
            yield items[i]
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
