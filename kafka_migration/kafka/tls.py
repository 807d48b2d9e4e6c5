"""TLS settings of a cluster: checked before the first connection, explained when a handshake fails.

librdkafka reports every failed certificate check as the same "certificate verify failed",
and a broker that wants a client certificate shows up only as a closed connection. So the
settings are checked up front (inline PEM that is not PEM, files that do not exist here,
half a client identity), and a failed handshake is repeated once with Python's ssl module
(the same OpenSSL checks), which names the cause: an expired certificate, an unknown CA,
a host name not in the certificate, a broker that requires a client certificate.

Certificates reach Spark executors with the settings themselves: inline PEM
(``ssl.ca.pem``, ``ssl.certificate.pem``, ``ssl.key.pem``) travels with the job, while
``*.location`` paths must exist on the driver and on every executor.
"""

from __future__ import annotations

import contextlib
import socket
import ssl
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kafka_migration.exceptions import ConfigurationError
from kafka_migration.model.bootstrap import first_broker

TLS_PROTOCOLS = ("ssl", "sasl_ssl")
# (inline PEM setting, path setting) of each piece of certificate material.
_MATERIAL = {
    "CA certificate": ("ssl.ca.pem", "ssl.ca.location"),
    "client certificate": ("ssl.certificate.pem", "ssl.certificate.location"),
    "client key": ("ssl.key.pem", "ssl.key.location"),
}
_PROBE_TIMEOUT = 5.0
# How long the probe waits, after a handshake that succeeded, for the broker to reject the client.
_REJECT_WAIT = 2.0

# OpenSSL verify codes (X509_V_ERR_*) that have a specific remedy.
_EXPIRED = 10
_NOT_YET_VALID = 9
_UNKNOWN_ISSUER = (2, 18, 19, 20, 21)
_HOST_MISMATCH = 62


def uses_tls(settings: Mapping[str, Any]) -> bool:
    return str(settings.get("security.protocol", "plaintext")).strip().lower() in TLS_PROTOCOLS


def check_tls_settings(role: str, settings: Mapping[str, Any]) -> None:
    """Reject TLS settings that cannot work, naming the setting and the fix; never echo a value."""
    for what, (pem_key, path_key) in _MATERIAL.items():
        pem, path = settings.get(pem_key), settings.get(path_key)
        if pem is not None and path is not None:
            raise ConfigurationError(
                f"The {role} cluster sets both {pem_key} and {path_key}; give the {what} once: "
                f"{pem_key} (the PEM text, shipped with the job) or {path_key} (a file on every machine)."
            )
        if pem is not None and "-----BEGIN " not in str(pem):
            raise ConfigurationError(
                f"{pem_key} of the {role} cluster does not hold PEM text (it must start with '-----BEGIN'). "
                f"To name a file, use {path_key} instead (the file must then exist on the driver and every "
                "Spark executor)."
            )
        if path is not None and str(path) != "probe" and not Path(str(path)).exists():
            raise ConfigurationError(
                f"{path_key} of the {role} cluster names {path}, which does not exist on this machine "
                f"({socket.gethostname()}). "
                f"Files named by path must exist on this machine, the Spark driver and every executor; "
                f"to ship the {what} with the job instead, put its PEM text in {pem_key}."
            )
    has_cert = "ssl.certificate.pem" in settings or "ssl.certificate.location" in settings
    has_key = "ssl.key.pem" in settings or "ssl.key.location" in settings
    if has_cert != has_key:
        given, missing = ("certificate", "key") if has_cert else ("key", "certificate")
        raise ConfigurationError(
            f"The {role} cluster has a client {given} but no client {missing}: mutual TLS needs both "
            "(ssl.certificate.pem + ssl.key.pem, or ssl.certificate.location + ssl.key.location)."
        )


def tls_context(settings: Mapping[str, Any], scratch: Path | None = None) -> tuple[ssl.SSLContext, bool]:
    """The TLS context librdkafka's settings describe, with Python's ssl module (the same OpenSSL checks), and
    whether it presents a client identity. The one translation of the ``ssl.*`` settings: the handshake probe and
    kafka-python's clients (``kafka.kafka_python``) both use it.

    It trusts the CA (inline PEM, a file or a directory; the system's CAs otherwise), checks the host name unless
    ``ssl.endpoint.identification.algorithm`` is none, honours ``enable.ssl.certificate.verification``,
    ``ssl.crl.location`` and ``ssl.cipher.suites``, and presents the client certificate and key given by path, or
    inline when ``scratch`` is given: a directory the PEM is written to (mode 0600) while it loads, as Python's ssl
    module reads a key only from a file. Without ``scratch`` an inline identity is not presented (False).
    Half an identity is refused (``check_tls_settings``).
    """
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    verify = str(settings.get("enable.ssl.certificate.verification", "true")).lower() not in ("false", "0")
    identify = str(settings.get("ssl.endpoint.identification.algorithm", "https")).lower() != "none"
    context.check_hostname = verify and identify
    if not verify:
        context.verify_mode = ssl.CERT_NONE
    elif settings.get("ssl.ca.pem") is not None:
        context.load_verify_locations(cadata=str(settings["ssl.ca.pem"]))
    elif settings.get("ssl.ca.location") not in (None, "probe"):
        location = Path(str(settings["ssl.ca.location"]))
        if location.is_dir():
            context.load_verify_locations(capath=str(location))
        else:
            context.load_verify_locations(cafile=str(location))
    else:
        context.load_default_certs()
    if settings.get("ssl.crl.location"):
        context.load_verify_locations(cafile=str(settings["ssl.crl.location"]))
        context.verify_flags |= ssl.VERIFY_CRL_CHECK_LEAF
    if settings.get("ssl.cipher.suites"):
        context.set_ciphers(str(settings["ssl.cipher.suites"]))
    files = _identity_files(settings, scratch)
    if set(files) == {"certificate", "key"}:
        password = settings.get("ssl.key.password")
        context.load_cert_chain(files["certificate"], files["key"], None if password is None else str(password))
        return context, True
    return context, False


def _identity_files(settings: Mapping[str, Any], scratch: Path | None) -> dict[str, str]:
    """The files of the client certificate and key: their paths, or inline PEM written to ``scratch``."""
    files = {}
    for what in ("certificate", "key"):
        if settings.get(f"ssl.{what}.location"):
            files[what] = str(settings[f"ssl.{what}.location"])
        elif settings.get(f"ssl.{what}.pem") is not None and scratch is not None:
            path = scratch / f"{what}.pem"
            path.touch(mode=0o600)
            path.write_text(str(settings[f"ssl.{what}.pem"]))
            files[what] = str(path)
    if len(files) == 1 and scratch is not None:
        given, missing = ("certificate", "key") if "certificate" in files else ("key", "certificate")
        raise ConfigurationError(
            f"A client {given} is set but no client {missing}: mutual TLS needs both (ssl.certificate.pem + "
            "ssl.key.pem, or ssl.certificate.location + ssl.key.location)."
        )
    return files


def _verify_cause(exc: ssl.SSLCertVerificationError, host: str) -> str:
    code, reason = exc.verify_code, exc.verify_message
    if code == _EXPIRED:
        return (
            f"the broker's TLS certificate has expired ({reason}); the broker needs a renewed certificate "
            "(check the clocks too)"
        )
    if code == _NOT_YET_VALID:
        return f"the broker's TLS certificate is not valid yet ({reason}); check the clocks here and on the broker"
    if code in _UNKNOWN_ISSUER:
        return (
            f"the broker's TLS certificate is not signed by a trusted CA ({reason}); set ssl.ca.pem (or "
            "ssl.ca.location) to the CA certificate that signed the brokers' certificates"
        )
    if code == _HOST_MISMATCH:
        return (
            f"the broker's TLS certificate does not name {host} ({reason}); use a bootstrap address that the "
            "certificate names, or fix the certificate's subject alternative names"
        )
    return f"the broker's TLS certificate was rejected ({reason})"


def diagnose_tls(settings: Mapping[str, Any], timeout: float = _PROBE_TIMEOUT) -> str | None:
    """Repeat the TLS handshake with the first bootstrap broker and name what fails, or None.

    None means TLS itself works (or cannot be probed from here): the problem is elsewhere.
    Only called after librdkafka failed, so it never adds a connection to a healthy start.
    """
    try:
        if not uses_tls(settings):
            raise ValueError("no TLS")
        first = first_broker(str(settings["bootstrap.servers"]))
        host = first.host
        context, presents_identity = tls_context(settings)
        raw = socket.create_connection((host, first.port), timeout=timeout)
    except (ValueError, KeyError, OSError, ConfigurationError):
        return None  # librdkafka's own message says more than a probe that cannot start
    with contextlib.closing(raw):
        try:
            conn = context.wrap_socket(raw, server_hostname=host)
        except ssl.SSLCertVerificationError as exc:
            return _verify_cause(exc, host)
        except ssl.SSLError as exc:
            return _rejected(exc, presents_identity, settings)
        except OSError:
            return None
        with contextlib.closing(conn):
            if not presents_identity and ("ssl.certificate.pem" in settings or "ssl.keystore.location" in settings):
                return None  # the real client presents an identity this probe cannot: no verdict
            return _after_handshake(conn, presents_identity, settings)


def _after_handshake(conn: ssl.SSLSocket, presents_identity: bool, settings: Mapping[str, Any]) -> str | None:
    """In TLS 1.3 the broker checks the client certificate after the handshake and answers the
    first read with an alert or a closed connection; a healthy broker sends nothing until asked."""
    conn.settimeout(_REJECT_WAIT)
    try:
        data = conn.recv(1)
    except TimeoutError:
        return None
    except ssl.SSLError as exc:
        return _rejected(exc, presents_identity, settings)
    except OSError:
        data = b""
    if data:
        return None
    if presents_identity:
        return (
            "the broker closed the connection right after the TLS handshake, which is what brokers do when they "
            "reject the client certificate; check that it is valid, not expired, and signed by a CA the broker trusts"
        )
    return (
        "the broker closed the connection right after the TLS handshake, which is what brokers that require a "
        "client certificate do (ssl.client.auth=required) when none is presented; set ssl.certificate.pem and "
        "ssl.key.pem (or their .location forms) and ssl.key.password"
    )


def _rejected(exc: ssl.SSLError, presents_identity: bool, settings: Mapping[str, Any]) -> str:
    reason = (exc.reason or str(exc)).replace("_", " ").lower()
    has_identity = presents_identity or "ssl.certificate.pem" in settings or "ssl.keystore.location" in settings
    # Without an identity of ours, a certificate alert can only be about the missing one: OpenSSL
    # servers send certificate_required (TLS 1.3) or handshake_failure (TLS 1.2), Apache Kafka's
    # Java TLS sends bad_certificate ("Empty client certificate chain").
    if "certificate required" in reason or (
        not has_identity and ("handshake failure" in reason or "bad certificate" in reason)
    ):
        return (
            f"the broker requires a client certificate (mutual TLS) and none is configured (TLS alert: {reason}); "
            "set ssl.certificate.pem and ssl.key.pem (or their .location forms) and ssl.key.password"
        )
    if has_identity and any(word in reason for word in ("certificate", "unknown ca", "handshake failure")):
        return (
            f"the broker rejected the client certificate (TLS alert: {reason}); check that it is valid, "
            "not expired, and signed by a CA the broker trusts"
        )
    return f"the TLS handshake failed ({reason})"
