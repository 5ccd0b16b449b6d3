"""The JSON form's reader refuses every wrong shape with `PackageFormatError` (Russian and
English, saying where), never an AttributeError, TypeError or KeyError: a package object
travels inside a game's setup and comes from files and screens."""

from __future__ import annotations

import copy
import json
import math
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from appliance.packages import jsonform
from appliance.packages.model import Package
from appliance.rules import kit
from appliance.rules.protocol import Refused

CYRILLIC = re.compile("[а-яё]", re.I)


def small() -> dict[str, Any]:
    """A valid package dict with every kind of node: rounds, themes, questions with items,
    a cat with a price, answers, a final."""
    d = jsonform.to_dict(jsonform.demo("demo-tv"))
    d["rounds"] = [d["rounds"][0], d["rounds"][-1]]
    d["rounds"][0]["themes"] = d["rounds"][0]["themes"][:2]
    cat = next(q for r in jsonform.to_dict(jsonform.demo("demo-tv"))["rounds"]
               for t in r["themes"] for q in t["questions"] if q.get("cat"))
    d["rounds"][0]["themes"][0]["questions"].append(cat)
    d["warnings"] = ["w"]
    return d


def test_the_small_package_reads_and_round_trips():
    d = small()
    p = jsonform.from_dict(d)
    assert jsonform.from_dict(jsonform.to_dict(p)) == p
    assert any(q.cat for t in p.rounds[0].themes for q in t.questions)


def _at(d: Any, path: tuple[Any, ...]) -> Any:
    for k in path:
        d = d[k]
    return d


Q = ("rounds", 0, "themes", 0, "questions", 0)
CAT = ("rounds", 0, "themes", 0, "questions", -1, "cat")

CASES = [
    ((), "rounds", {"a": 1}, "«rounds»"),
    ((), "name", ["x"], "«name»"),
    ((), "warnings", "w", "«warnings»"),
    ((), "warnings", [{}], "«warnings»"),
    (("rounds",), 0, "round", "round 1"),
    (("rounds", 0), "themes", None, "«themes»"),
    (("rounds", 0), "final", "yes", "«final»"),
    (("rounds", 0, "themes"), 1, 7, "theme 2"),
    (("rounds", 0, "themes", 0), "questions", {}, "«questions»"),
    (("rounds", 0, "themes", 0), "comment", {"x": 1}, "«comment»"),
    (("rounds", 0, "themes", 0, "questions"), 0, [], "question 1"),
    (Q, "price", "много", "«price»"),
    (Q, "price", 3.7, "«price»"),
    (Q, "price", True, "«price»"),
    (Q, "price", math.nan, "«price»"),
    (Q, "price", None, "«price»"),
    (Q, "price", "9" * 5000, "«price»"),
    (Q, "price", 1e400, "«price»"),
    (Q, "kind", "riddle", "riddle"),
    (Q, "kind", 5, "5"),
    (Q, "content", [1], "«content»"),
    (Q, "content", [{"type": "smell", "value": "x"}], "smell"),
    (Q, "content", [{"value": "x"}], "«type»"),
    (Q, "content", [{"type": "text"}], "«value»"),
    (Q, "content", [{"type": "text", "value": "x", "duration_s": "long"}], "«duration_s»"),
    (Q, "right", "Пушкин", "«right»"),
    (Q, "right", [None], "«right»"),
    (Q, "factor", [], "«factor»"),
    (Q, "cat", ["theme"], "cat"),
    (CAT, "price", 5, "price"),
    (CAT, "price", {"values": "100"}, "«values»"),
    (CAT, "price", {"values": [{}]}, "«values»"),
    (CAT, "price", {"low": "low"}, "«low»"),
    (CAT, "theme", [], "«theme»"),
    (CAT, "may_keep", "no", "«may_keep»"),
]


@pytest.mark.parametrize(("path", "key", "value", "says"), CASES)
def test_a_wrong_shape_is_refused_in_both_languages_saying_where(path, key, value, says):
    d = small()
    _at(d, path)[key] = value
    with pytest.raises(jsonform.PackageFormatError) as e:
        jsonform.from_dict(d)
    err = e.value
    assert says in err.message_en, err.message_en
    assert CYRILLIC.search(err.message_ru) and err.message_ru != err.message_en
    assert err.code == "bad_package" and str(err) == err.message_en


@pytest.mark.parametrize("key", ["name"])
def test_a_missing_required_field_is_refused(key):
    d = small()
    del d[key]
    with pytest.raises(jsonform.PackageFormatError, match="«name»"):
        jsonform.from_dict(d)
    d = small()
    del d["rounds"][0]["themes"][0]["questions"][0]["price"]
    with pytest.raises(jsonform.PackageFormatError, match="round 1, theme 1, question 1"):
        jsonform.from_dict(d)


@pytest.mark.parametrize("data", [None, [], "svoyak-package", 3, {"format": "siq"}, {}])
def test_not_a_package_at_all(data):
    with pytest.raises(jsonform.PackageFormatError) as e:
        jsonform.from_dict(data)
    assert e.value.code == "not_svoyak" and CYRILLIC.search(e.value.message_ru)


def test_bad_json_text_is_refused_in_both_languages():
    with pytest.raises(jsonform.PackageFormatError) as e:
        jsonform.loads('{"format": ')
    assert e.value.code == "bad_json" and "line 1" in e.value.message_en
    assert "строке 1" in e.value.message_ru


def test_numbers_as_older_exports_wrote_them_still_read():
    d = small()
    q = _at(d, Q)
    q["price"], q["factor"] = "200", 3.0
    p = jsonform.from_dict(d)
    assert p.rounds[0].themes[0].questions[0].price == 200
    assert p.rounds[0].themes[0].questions[0].factor == 3
    q["price"] = 10**400  # a JSON integer longer than any float: read, not an OverflowError
    assert jsonform.from_dict(d).rounds[0].themes[0].questions[0].price == 10**400


def test_a_malformed_package_in_a_setup_is_a_bad_setup():
    d = small()
    _at(d, Q)["content"] = "text"
    with pytest.raises(Refused) as e:
        kit.load_package(d)
    assert e.value.code == "bad_setup" and "«content»" in e.value.message_en
    assert "«content»" in e.value.message_ru


# -- any shape ----------------------------------------------------------------------------
def _paths(d: Any, here: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [here]
    if isinstance(d, dict):
        for k, v in d.items():
            out += _paths(v, (*here, k))
    elif isinstance(d, list):
        for i, v in enumerate(d):
            out += _paths(v, (*here, i))
    return out


SMALL = small()
PATHS = _paths(SMALL)[1:]
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-10**20, 10**20)
    | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=3)
    | st.dictionaries(st.sampled_from(["type", "value", "price", "name", "themes", "x"]),
                      children, max_size=3),
    max_leaves=8)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(PATHS), JSON, st.booleans()), min_size=1,
                max_size=4))
def test_any_change_of_shape_reads_or_is_a_package_format_error(changes):
    d = copy.deepcopy(SMALL)
    for path, value, delete in changes:
        try:
            parent = _at(d, path[:-1])
            if delete and isinstance(parent, dict):
                parent.pop(path[-1], None)
            else:
                parent[path[-1]] = value
        except (KeyError, IndexError, TypeError):
            continue  # an earlier change took this place away
    try:
        p = jsonform.from_dict(d)
    except jsonform.PackageFormatError as e:
        assert e.message_ru and e.message_en and e.code in ("bad_package", "not_svoyak")
        return
    assert isinstance(p, Package)
    json.dumps(jsonform.to_dict(p))  # what was read writes back as JSON
