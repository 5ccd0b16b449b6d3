"""`Seq`, the engines' append-only sequence: every version behaves as the tuple it stands
for, whatever is done to the versions it shares its list with (checked against tuples over
random operations on random versions), and growing the newest version shares its list."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from appliance.rules import seq
from appliance.rules.seq import EMPTY, Seq

OPS = st.lists(st.tuples(st.sampled_from(["append", "set_last", "without_last", "set"]),
                         st.integers(0, 1000), st.integers(0, 50)), max_size=120)


@settings(max_examples=300, deadline=None)
@given(OPS)
def test_every_version_stays_the_tuple_it_stands_for(ops):
    check(ops)


@settings(max_examples=300, deadline=None)
@given(OPS)
def test_every_version_stays_the_tuple_it_stands_for_at_chunk_boundaries(ops):
    """The same with chunks of three items, so the operations meet a chunk boundary often."""
    chunk = seq.CHUNK
    seq.CHUNK = 3
    try:
        check(ops)
    finally:
        seq.CHUNK = chunk


def check(ops):
    versions: list[tuple[Seq[int], tuple[int, ...]]] = [(EMPTY, ())]
    for op, value, pick in ops:
        seq, model = versions[pick % len(versions)]  # any version, old ones too (undo)
        if op == "append":
            seq, model = seq.append(value), (*model, value)
        elif not model:
            continue
        elif op == "set_last":
            seq, model = seq.set_last(value), (*model[:-1], value)
        elif op == "without_last":
            seq, model = seq.without_last(), model[:-1]
        else:
            i = value % len(model)
            seq, model = seq.set(i, -value), (*model[:i], -value, *model[i + 1:])
        versions.append((seq, model))
        for s, m in versions:  # nothing done to one version changed another
            assert tuple(s) == m and len(s) == len(m) and bool(s) == bool(m)
            assert s == m and s == Seq(m) and hash(s) == hash(Seq(m))
            if m:
                assert s[-1] == m[-1] and s[0] == m[0] and s[len(m) // 2] == m[len(m) // 2]
                assert s[1:] == m[1:]
    assert EMPTY == () and len(EMPTY) == 0


def test_an_index_out_of_range_and_empty_edits_raise():
    s = Seq([1, 2])
    for bad in (2, -3):
        try:
            s[bad]
        except IndexError:
            pass
        else:
            raise AssertionError(bad)
    for edit in (EMPTY.set_last, lambda _: EMPTY.without_last()):
        try:
            edit(1)
        except IndexError:
            pass
        else:
            raise AssertionError(edit)


def test_the_newest_version_grows_in_place_and_a_branch_copies_once():
    """Structure, not timing (the replay bench times it): appending to the newest version
    and changing its last item share the list of chunks; a version grown again after an
    undo shares it too; only a branch off an older version copies it (not the items)."""
    vals = list(range(1000))  # the same objects again when grown again
    s: Seq[int] = EMPTY
    for i in range(1000):
        s = s.append(vals[i])
    grown = s.set_last(-1).append(5).set_last(6).append(7)
    assert grown._chunks is s._chunks
    undone = s.without_last().append(42)  # an undo, then a new item: the prefix is the same
    assert undone._chunks is s._chunks and tuple(undone) == (*range(999), 42)
    back = s
    for _ in range(40):  # undo past a chunk boundary, then grow the same items again
        back = back.without_last()
    for i in range(960, 1000):
        back = back.append(vals[i])
    assert back._chunks is s._chunks and back == s
    branch = s
    for _ in range(40):
        branch = branch.without_last()
    branch = branch.set_last(-5)
    for i in range(40):
        branch = branch.append(i)  # the older items changed: the chunk list is copied once
    assert branch._chunks is not s._chunks
    assert tuple(branch) == (*range(959), -5, *range(40)) and tuple(s) == tuple(range(1000))
    assert branch.append(1)._chunks is branch._chunks  # copied once, then shared again
    assert all(a is b for a, b in zip(branch._chunks, s._chunks[:29], strict=False))
    changed = s.set(10, -10)  # a rejudgement: one chunk and the chunk list, not the items
    assert changed[10] == -10 and s[10] == 10 and changed._chunks[1] is s._chunks[1]
