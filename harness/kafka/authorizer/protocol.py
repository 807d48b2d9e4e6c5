"""A case for Kafka's authorizer as the JVM reads it (one JSON line), and its answer (one line back).

A case holds a cluster's bindings and settings (``super.users``, ``allow.everyone.if.no.acl.found``) and the
requests to decide on it, as the product's own values (``AclBinding``, ``Action``), so that the model and Kafka
are asked exactly the same thing. A request's host is the client's address, an IP literal: a broker's authorizer
sees the address a connection comes from, never a name.
"""

from __future__ import annotations

import ipaddress
import json
from dataclasses import dataclass
from enum import Enum

from kafka_migration.model.access import AclBinding, Action


class AuthorizerError(RuntimeError):
    """Kafka's authorizer could not decide a case (it named why), or its JVM stopped or stopped answering."""


class Result(Enum):
    """Kafka's ``AuthorizationResult``, with the letter the JVM answers it with."""

    ALLOWED = "A"
    DENIED = "D"

    @property
    def allowed(self) -> bool:
        return self is Result.ALLOWED


@dataclass(frozen=True)
class Case:
    """The bindings and settings of one cluster, and the requests to decide on it."""

    bindings: tuple[AclBinding, ...]
    requests: tuple[Action, ...]
    super_users: tuple[str, ...] = ()
    allow_if_no_acl: bool = False

    def __post_init__(self) -> None:
        for request in self.requests:
            try:
                ipaddress.ip_address(request.host)
            except ValueError:
                raise ValueError(
                    f"request {request.describe()}: the host is the client's address, an IP literal, not "
                    f"{request.host!r} (a broker's authorizer never sees a name)"
                ) from None

    def line(self) -> str:
        """The case as DecisionServer reads it (java/Case.java): one line of JSON."""
        return json.dumps(
            {
                "super_users": list(self.super_users),
                "allow_if_no_acl": self.allow_if_no_acl,
                "bindings": [
                    [b.resource_type, b.resource_name, b.pattern_type, b.principal, b.host, b.operation, b.permission]
                    for b in self.bindings
                ],
                "requests": [
                    [r.principal, r.host, r.resource_type, r.resource_name, r.operation] for r in self.requests
                ],
            },
            separators=(",", ":"),
        )


def read_answer(line: str, case: Case) -> tuple[Result, ...]:
    """Kafka's decision on each request of the case, in order; its error as an ``AuthorizerError``."""
    try:
        answer = json.loads(line)
    except ValueError:
        raise AuthorizerError(f"the authorizer JVM answered a line that is not JSON: {line[:200]!r}") from None
    if "error" in answer:
        raise AuthorizerError(f"Kafka's authorizer refused the case: {answer['error']}")
    letters = answer.get("decisions")
    if not isinstance(letters, str) or len(letters) != len(case.requests):
        raise AuthorizerError(f"the authorizer JVM answered {line[:200]!r} to {len(case.requests)} requests")
    return tuple(Result(letter) for letter in letters)
