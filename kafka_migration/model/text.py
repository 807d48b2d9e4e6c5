"""How numbers read in everything the pipeline prints: counts with their noun, offset ranges, partition lists.

One notation everywhere (the plan, task logs, errors, reports, the CLI; docs/concepts.md, "Offset
ranges"): a range is written with its first and its last offset, **both included**, joined by an en
dash, with the number of offsets beside it: ``0–1469 (1,470 offsets)``. Every offset written is one
that exists in the range, so nobody has to know whether an end is inclusive. Inside the code (and in
the JSON files) a range stays Kafka's half-open ``[start, end)``: ``offset_range`` takes it that way.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

DASH = "–"  # U+2013 EN DASH: the range mark of written English ("pages 10–20")

# Nouns whose plural is not the noun plus "s".
_IRREGULAR = {"entry": "entries", "this": "these", "is": "are", "was": "were", "has": "have", "it": "they"}


def plural(count: int, noun: str, plural_noun: str | None = None) -> str:
    """``1 partition``, ``2 partitions``, ``1,470 offsets``: the count, thousands separated, and its noun."""
    return f"{count:,} {noun_for(count, noun, plural_noun)}"


def noun_for(count: int, noun: str, plural_noun: str | None = None) -> str:
    """The noun alone, singular for exactly one: ``noun_for(3, "topic")`` is ``topics``."""
    if count == 1:
        return noun
    return plural_noun or _IRREGULAR.get(noun) or f"{noun}s"


def offset_range(start: int | None, end: int | None, *, count: bool = True) -> str:
    """The half-open range ``[start, end)`` as people read it: ``0–1469 (1,470 offsets)``.

    One offset: ``7 (1 offset)``. Empty (``end <= start``): ``none at 1470`` (the offset the next
    record gets). Without an end (read up to whatever the partition holds): ``12 onwards``. No start:
    ``–``. ``count=False`` leaves the count out, for tables that show it in a column of their own.
    """
    if start is None:
        return DASH
    if end is None:
        return f"{start} onwards"
    if end <= start:
        return f"none at {start}"
    span = f"{start}" if end - start == 1 else f"{start}{DASH}{end - 1}"
    return f"{span} ({plural(end - start, 'offset')})" if count else span


def partition_list(partitions: Iterable[int], *, most: int = 12) -> str:
    """``partitions 0–3, 7 (5 partitions)``; ``partition 4``: consecutive partitions as one span, and the
    count when there is more than one. Past ``most`` spans the rest is elided (``..., and 9 more``)."""
    ordered = sorted(set(partitions))
    if not ordered:
        return "no partition"
    if len(ordered) == 1:
        return f"partition {ordered[0]}"
    spans: list[tuple[int, int]] = []
    for p in ordered:
        if spans and p == spans[-1][1] + 1:
            spans[-1] = (spans[-1][0], p)
        else:
            spans.append((p, p))
    shown = [f"{a}" if a == b else f"{a}{DASH}{b}" for a, b in spans[:most]]
    rest = sum(b - a + 1 for a, b in spans[most:])
    listed = ", ".join(shown) + (f", and {rest:,} more" if rest else "")
    return f"partitions {listed} ({plural(len(ordered), 'partition')})"


def some(items: Sequence[str], *, most: int = 5) -> str:
    """``a, b, c``; past ``most`` items ``a, b, c, d, e, and 7 more``: a list that stays one line."""
    shown = ", ".join(items[:most])
    return shown + (f", and {len(items) - most:,} more" if len(items) > most else "")


def per_partition(details: Sequence[tuple[int, str]], *, most: int = 5) -> str:
    """``[0] 5 -> 9; [3] 2 -> 4``: what each partition of one topic says, in partition order; past ``most``
    partitions ``...; and 6 more``, so that a topic of many partitions stays one line."""
    ordered = sorted(details)
    shown = "; ".join(f"[{p}] {text}" for p, text in ordered[:most])
    return shown + (f"; and {len(ordered) - most:,} more" if len(ordered) > most else "")
