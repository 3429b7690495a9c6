"""`json_values.loads` is `json.loads`, faster: the same value (type for type, bit for bit) or
the same error, whichever of its two readers reads the text."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wbmigrate import json_values

VALUES = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),  # beyond 64 bits too
        st.floats(allow_nan=True, allow_infinity=True),
        st.text(),  # lone surrogates too
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=20,
)


def _same(a: object, b: object) -> bool:
    """Equal, of the same types all the way down, and NaN where NaN is."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        assert isinstance(b, float)
        return (math.isnan(a) and math.isnan(b)) or (
            a == b and math.copysign(1, a) == math.copysign(1, b)
        )
    if isinstance(a, list):
        assert isinstance(b, list)
        return len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, dict):
        assert isinstance(b, dict)
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    return a == b


def _read(reader, data):
    try:
        return "value", reader(data)
    except (ValueError, RecursionError) as exc:
        return "error", f"{type(exc).__name__}: {exc}"


def _agree(data: str | bytes) -> None:
    kind, ours = _read(json_values.loads, data)
    theirs_kind, theirs = _read(json.loads, data)
    assert kind == theirs_kind
    assert _same(ours, theirs) if kind == "value" else ours == theirs


@settings(max_examples=400, deadline=None)
@given(VALUES, st.booleans())
def test_any_value_written_by_the_standard_library_reads_back_the_same(value, ascii_only):
    _agree(json.dumps(value, ensure_ascii=ascii_only))
    _agree(json.dumps(value, ensure_ascii=ascii_only, indent=1).encode("utf-8", "surrogatepass"))


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet='[]{}",:.-+eE0123456789 \\untrufalsNIfiy\ud800é', max_size=40))
def test_any_text_reads_to_the_same_value_or_the_same_error(text):
    _agree(text)


@pytest.mark.parametrize(
    "text",
    [
        "[18446744073709551616]",  # 2**64: orjson would read a float
        "[-9223372036854775809]",  # -2**63 - 1: likewise
        "123456789012345678901234567890",
        '{"a": 0.0045658802093481166}',  # 19 digits after a dot: orjson reads it
        "[12345678901234567890.5]",
        "[1e400, -1e400, 1e-400]",
        "[NaN, Infinity, -Infinity]",
        '"\\ud800"',
        '{"a": 1, "a": 2}',
        "[" * 2_000 + "]" * 2_000,
        "",
        "[1,]",
        '{"spec": "not closed"',
    ],
)
def test_what_orjson_reads_otherwise_or_refuses_is_read_as_the_standard_library_reads_it(text):
    _agree(text)
    _agree(text.encode("utf-8", "surrogatepass"))


@pytest.mark.parametrize(
    "data",
    [b"\xef\xbb\xbf[1]", b'["\xff"]', '["é"]'.encode("utf-16")],
    ids=["utf-8-bom", "not-utf-8", "utf-16"],
)
def test_bytes_orjson_refuses_are_decoded_as_the_standard_library_decodes_them(data):
    _agree(data)


def test_an_ordinary_spec_is_read_by_orjson(monkeypatch):
    """The fast path is taken for what specs hold: 18-digit integers, long fractions, text."""
    value = {"blocks": [{"x": 0.0045658802093481166, "n": -(10**17), "t": "off_policy/mean é"}]}

    def refused(*args, **kwargs):
        raise AssertionError("read by the standard library")

    monkeypatch.setattr(json, "loads", refused)
    assert json_values.loads(json.dumps(value)) == value


def test_an_integer_too_long_for_python_is_a_decode_error_at_its_first_digit():
    """`json.loads` refuses it with a bare ValueError, which readers of JSON did not catch."""
    text = '{"blocks": [],\n "n": ' + "1" * 5_000 + "}"
    with pytest.raises(json.JSONDecodeError, match="an integer of more than 4300 digits") as exc:
        json_values.loads(text)
    assert (exc.value.lineno, exc.value.colno) == (2, 7)
