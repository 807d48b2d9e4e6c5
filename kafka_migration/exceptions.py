"""One error hierarchy. Messages name the object at fault and what to do about it."""

from __future__ import annotations

from collections.abc import Sequence


class MigrationError(Exception):
    """Base of every error the pipeline raises on purpose."""

    exit_code = 3


class ConfigurationError(MigrationError):
    """Bad input or configuration, found before anything is written (CLI exit 2)."""

    exit_code = 2


class ClusterUnreachableError(ConfigurationError):
    """A cluster did not answer within the connection timeout."""


class BootstrapAddressError(ConfigurationError):
    """One address of ``bootstrap.servers`` is not ``[PROTOCOL://]HOST[:PORT]`` (``model/bootstrap``)."""

    def __init__(self, address: str) -> None:
        self.address = address
        super().__init__(
            f"The bootstrap address {address!r} is not HOST:PORT; give the brokers as HOST:PORT[,HOST:PORT...], "
            "e.g. broker1:9092,broker2:9092 ([::1]:9092 for an IPv6 address)."
        )


class AuthorizationError(ConfigurationError):
    """A cluster's ACLs do not allow what the run needs; names the operation, the resources and the ACL to add."""


class NoTopicsMatchedError(ConfigurationError):
    """The include/exclude patterns select no topic on the source."""


class TopicConflictError(ConfigurationError):
    """Existing target topics cannot receive the copy; lists every conflict at once."""

    what = ("target topic conflict", "target topic conflicts")  # one, several

    def __init__(self, conflicts: list[str]) -> None:
        self.conflicts = list(conflicts)
        lines = "\n".join(f"  - {c}" for c in self.conflicts)
        count = len(self.conflicts)
        super().__init__(f"{count} {self.what[count != 1]}; nothing was written:\n{lines}")


class LeaseHeldError(ConfigurationError):
    """Another live run holds the lease on a target topic this run needs; nothing was written."""


class LeaseLostError(MigrationError):
    """This run's lease expired and another run took it over: this run must stop writing."""


class SourceGapError(TopicConflictError):
    """Records left the source (retention, DeleteRecords) after a checkpoint, before they were copied."""

    what = (
        "topic lost records on the source before they were copied",
        "topics lost records on the source before they were copied",
    )


class StaleStateError(TopicConflictError):
    """What the ledger recorded no longer matches the clusters (recreated, truncated or expired data)."""

    what = (
        "problem: the clusters no longer match what the ledger recorded",
        "problems: the clusters no longer match what the ledger recorded",
    )


class RunFileError(ConfigurationError):
    """A plan or results file of a run is missing or corrupt, so a task cannot resume from it."""


class LedgerUnavailableError(MigrationError):
    """The ledger could not store a run's evidence: the run must not be reported verified."""


class CutoverRefusedError(ConfigurationError):
    """A cutover or failback pre-flight check failed: producers or consumers still run. Nothing was written."""

    def __init__(self, problems: Sequence[object], what: str = "Cutover", report: object = None) -> None:
        self.reasons = list(problems)  # as given: text, or ``cutover.refusal.Reason`` naming topic and groups
        self.problems = [str(p) for p in self.reasons]
        self.what = what
        self.report = report  # the report written of the refusal, if any
        lines = "\n".join(f"  - {p}" for p in self.problems)
        count = len(self.problems)
        super().__init__(
            f"{what} refused ({count} problem{'s' if count != 1 else ''}); nothing was written:\n{lines}"
            + (f"\nReport: {report}" if report else "")
        )


class CopyError(MigrationError):
    """A copy task could not read or write all of its planned range."""


class ClusterTimeoutError(CopyError):
    """A cluster stopped answering for longer than its timeout (socket.timeout.ms, message.timeout.ms).

    The partitions queued behind this one in the same Spark task are not attempted: they would
    each wait out the same timeout.
    """


class ForeignRecordsError(CopyError):
    """The target partition holds records the pipeline did not write; nothing more is written there."""


class VerificationError(MigrationError):
    """Source and target differ (CLI exit 1)."""

    exit_code = 1


class SparkJobError(MigrationError):
    """A Spark application exited with an error."""


class StepStoppedError(SparkJobError):
    """The launcher said stop while the driver still waited for target topics to be released: it writes nothing."""


class SchemaError(MigrationError):
    """A registry-encoded key or value, or a schema, cannot be carried as asked: its id is not in the run's id
    map, its header is not one to rewrite, or its schema text does not parse. Names the id or the schema."""


class UnknownSchemaIdError(SchemaError):
    """The id map has no target id for a source schema id: the schema was not registered on the target."""

    def __init__(self, schema_id: int, known: int) -> None:
        self.schema_id = schema_id
        super().__init__(
            f"Schema id {schema_id} is not in the id map ({known} source id{'s' if known != 1 else ''} mapped): "
            "register its schema on the target registry (with its references) before copying records that use it."
        )


class SchemaConflictError(ConfigurationError):
    """The target registry holds another schema under a subject version the run needs, or cannot keep the source's
    ids (keep mode); found while planning, before any subject, topic or record is written (CLI exit 2)."""


class SchemaUnreadableError(ConfigurationError):
    """A source schema the run would move has no canonical form here (it does not parse, or a Protobuf schema comes
    as .proto text without a base64 descriptor): its pair could not be proven; found while planning, before any
    subject, topic or record is written (CLI exit 2)."""


class UnknownRecordIdsError(ConfigurationError):
    """Source records name schema ids the source registry cannot give (unknown, or held by no subject version any
    more); found by the census of the records before anything is written (CLI exit 2)."""


class RegistryUnreachableError(ConfigurationError):
    """A schema registry did not answer (refused, timed out, TLS failed); nothing was written (CLI exit 2)."""


class RegistryAuthorizationError(AuthorizationError):
    """A schema registry refused the credentials (HTTP 401) or the request (HTTP 403), found before any topic or
    record is written. ``status`` is the HTTP status, ``detail`` the registry's answer (secrets scrubbed)."""

    def __init__(self, message: str, status: int = 0, detail: str = "") -> None:
        self.status = status
        self.detail = detail
        super().__init__(message)


class RegistryNotFoundError(SchemaError):
    """A schema registry has no such subject, version or schema id (HTTP 404)."""


class RegistryRequestError(MigrationError):
    """A schema registry answered a request with an error other than not found or unauthorized."""


def describe_failure(exc: BaseException) -> str:
    """Our own errors speak for themselves; anything else is named by its type too."""
    return str(exc) if isinstance(exc, MigrationError) else f"{type(exc).__name__}: {exc}"
