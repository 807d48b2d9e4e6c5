"""The one search for planted secrets: the literal text, and the forms it takes when it leaks encoded.

A secret rarely leaks as typed: a config serialised into a Kubernetes secret or a Spark conf is
base64 (standard or URL-safe), a connection URI or a query string is URL-encoded. Inside a longer
base64 string the secret starts at one of three alignments, each encoding it differently, so each
alignment is searched, cut to the characters that depend on the secret alone. Every test that
searches for a secret it planted asks ``leaked`` or ``leaks``, so none forgets a form.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from urllib.parse import quote, quote_plus

# The base64 characters that depend on bytes before the secret, by the secret's offset in its 3-byte group.
_PREFIX_CHARACTERS = (0, 2, 3)


def _bytes(text: str | bytes) -> bytes:
    return text.encode() if isinstance(text, str) else text


def secret_forms(secret: str | bytes) -> dict[str, bytes]:
    """Every form the search looks for, by name: the literal, base64 and URL-safe base64 at each alignment,
    URL-encoded (``%2F``, and ``+`` for a space as forms send it; escapes in either case)."""
    raw = _bytes(secret)
    if len(raw) < 6:
        raise ValueError("plant a secret of at least 6 bytes: shorter ones leave too little of an encoded form")
    forms = {"literal": raw}
    for name, encode in (("base64", base64.b64encode), ("URL-safe base64", base64.urlsafe_b64encode)):
        for shift, start in enumerate(_PREFIX_CHARACTERS):
            # Characters that also depend on the bytes before or after the secret are cut off.
            forms[f"{name}, offset {shift}"] = encode(bytes(shift) + raw)[start : (shift + len(raw)) * 4 // 3]
    for name, quoted in (("URL-encoded", quote(raw, safe="")), ("form-encoded", quote_plus(raw, safe=""))):
        forms[name] = quoted.encode()
        forms[f"{name}, lower-case escapes"] = re.sub("%[0-9A-F]{2}", lambda m: m.group().lower(), quoted).encode()
    distinct: dict[bytes, str] = {}
    for name, form in forms.items():
        distinct.setdefault(form, name)
    return {name: form for form, name in distinct.items()}


def leaked(secret: str | bytes, *contents: str | bytes) -> list[str]:
    """The names of the forms of ``secret`` found in any of ``contents``: [] when none holds it."""
    haystacks = [_bytes(content) for content in contents]
    return [name for name, form in secret_forms(secret).items() if any(form in h for h in haystacks)]


def leaks(secrets: Mapping[str, str | bytes], places: Mapping[str, str | bytes]) -> list[str]:
    """``"<secret> (<form>) in <place>"`` for each secret found, in any form, in any place: [] when none leaked."""
    forms = {what: secret_forms(secret) for what, secret in secrets.items()}
    found = []
    for place, content in places.items():
        haystack = _bytes(content)
        for what, named in forms.items():
            hits = [name for name, form in named.items() if form in haystack]
            if hits:
                found.append(f"{what} ({', '.join(hits)}) in {place}")
    return found
