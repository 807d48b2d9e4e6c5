"""The planted-secret search (tests/leaks.py) finds a secret however it was encoded, and nothing else."""

from __future__ import annotations

import base64
import json
import re
from urllib.parse import quote, urlencode

import pytest

from tests.leaks import leaked, leaks, secret_forms

SECRET = "Planted~~~ pass/word+&=%?"  # "~~~" encodes to "fn5+": the two base64 alphabets differ on it
OTHER = "Planted-other-secret"


@pytest.mark.parametrize("before", [b"", b"a", b"ab", b"abc", b"abcd"])
@pytest.mark.parametrize("after", [b"", b"y", b"yz"])
@pytest.mark.parametrize(
    ("alphabet", "encode"), [("base64", base64.b64encode), ("URL-safe base64", base64.urlsafe_b64encode)]
)
def test_a_secret_base64_encoded_inside_a_longer_string_is_found(
    before: bytes, after: bytes, alphabet: str, encode: object
) -> None:
    """The secret at each of the three alignments of base64 (the bytes before it), with bytes after it too."""
    blob = encode(b'{"sasl.password": "' + before + SECRET.encode() + after + b'"}')  # type: ignore[operator]
    content = f"spark.kubernetes.driverEnv.SETTINGS={blob.decode()}\n"
    assert SECRET not in content  # the literal search alone misses it
    shift = (len(b'{"sasl.password": "') + len(before)) % 3
    assert f"{alphabet}, offset {shift}" in leaked(SECRET, content)


def test_a_secret_url_encoded_in_a_uri_or_a_form_is_found() -> None:
    uri = f"postgresql+psycopg://ledger:{quote(SECRET, safe='')}@db:5432/ledger"
    form = urlencode({"user": "migrator", "password": SECRET})  # spaces as "+"
    lower = re.sub("%[0-9A-F]{2}", lambda m: m.group().lower(), quote(SECRET, safe=""))  # some encoders write %2f
    for content in (uri, form, f"GET /?p={lower} HTTP/1.1"):
        assert SECRET not in content
        assert leaked(SECRET, content), content
    assert leaked(SECRET, uri) == ["URL-encoded"]
    assert leaked(SECRET, form) == ["form-encoded"]


def test_the_literal_and_bytes_are_found_and_nothing_else_is() -> None:
    assert leaked(SECRET, "log line", f"x {SECRET} y") == ["literal"]
    assert leaked(SECRET.encode(), b"\x00" + SECRET.encode()) == ["literal"]
    innocent = [
        json.dumps({"sasl.password": "***"}),
        base64.b64encode(OTHER.encode()).decode(),
        quote(OTHER, safe=""),
        SECRET[:-1],  # not all of it
        base64.b64encode(SECRET[:-1].encode()).decode(),
    ]
    assert leaked(SECRET, *innocent) == []


def test_every_form_is_distinct_and_long_enough_to_mean_something() -> None:
    forms = secret_forms(SECRET)
    assert len(set(forms.values())) == len(forms) == 11
    assert min(len(form) for form in forms.values()) >= len(SECRET)
    plain = secret_forms("Planted-0123456789abcdef")  # URL-encoding leaves it as it is: one form less
    assert "literal" in plain and "URL-encoded" not in plain and "base64, offset 2" in plain
    with pytest.raises(ValueError, match="at least 6 bytes"):
        secret_forms("pw")


def test_leaks_names_the_secret_the_form_and_the_place() -> None:
    places = {
        "report.json": json.dumps({"note": base64.b64encode(f"key={SECRET}".encode()).decode()}),
        "ps": f"spark-submit --conf x={quote(SECRET, safe='')}",
        "stdout": "verified",
    }
    found = leaks({"password": SECRET, "other": OTHER}, places)
    assert found == ["password (base64, offset 1) in report.json", "password (URL-encoded) in ps"]
    assert leaks({"password": SECRET}, {"stdout": "verified"}) == []
