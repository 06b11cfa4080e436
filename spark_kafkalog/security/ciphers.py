"""Kafka's ``ssl.cipher.suites`` (IANA/JSSE names) to what Python's ``ssl`` module can apply.

Kafka users write IANA names, ``TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384``; ``SSLContext.set_ciphers`` wants
OpenSSL's, ``ECDHE-RSA-AES256-GCM-SHA384``. ``parse_cipher_suites`` splits the setting (a comma-separated
string or a list) into a ``CipherSelection``:

* TLS 1.2 and older suites: mapped through ``IANA_TO_OPENSSL`` (the suites JDK 17 and OpenSSL 3 both
  implement: ECDHE/DHE/RSA key exchange with AES-GCM, AES-CBC and ChaCha20-Poly1305; checked against
  ``openssl ciphers -stdname`` by the tests). Names neither side implements (static ECDH, 3DES, RC4, NULL,
  export, the ``SSL_`` legacy aliases) raise ``SecurityConfigError``; so does any other unknown ``TLS_`` name.
* TLS 1.3 suites (``TLS_AES_128_GCM_SHA256``, ``TLS_AES_256_GCM_SHA384``, ``TLS_CHACHA20_POLY1305_SHA256``,
  ``TLS_AES_128_CCM_SHA256``, ``TLS_AES_128_CCM_8_SHA256``) are accepted and kept in ``tls13``. Python 3.11
  has no API to restrict TLS 1.3 suites (``set_ciphers`` only affects TLS 1.2 and older; OpenSSL's
  ``SSL_CTX_set_ciphersuites`` is not exposed), so when any TLS 1.3 suite is listed, all of OpenSSL's enabled
  TLS 1.3 suites stay available.
* The JDK enables a protocol version only if one of its suites is enabled; ``ssl_context`` mirrors that with
  ``allows_tls12`` / ``allows_tls13``: a list with only TLS 1.3 names disables TLS 1.2 and one with only
  TLS 1.2 names disables TLS 1.3.
* Other entries (no ``TLS_``/``SSL_`` prefix) pass through as OpenSSL cipher-list syntax, as librdkafka's
  ``ssl.cipher.suites`` takes it (``ECDHE-RSA-AES128-GCM-SHA256``, ``HIGH:!aNULL``); ``openssl_cipher_string``
  joins everything with ``:`` and ``validate`` checks OpenSSL knows every plain name in it. As in
  librdkafka, such entries leave TLS 1.3 alone (``allows_tls13`` stays true).
* Java's signalling value ``TLS_EMPTY_RENEGOTIATION_INFO_SCSV`` is ignored (OpenSSL sends its equivalent itself).
"""

from __future__ import annotations

import ssl
from collections.abc import Sequence
from dataclasses import dataclass

from .errors import SecurityConfigError

__all__ = ["IANA_TO_OPENSSL", "TLS13_SUITES", "CipherSelection", "openssl_cipher_name", "parse_cipher_suites"]

TLS13_SUITES = frozenset(
    {
        "TLS_AES_128_GCM_SHA256",
        "TLS_AES_256_GCM_SHA384",
        "TLS_CHACHA20_POLY1305_SHA256",
        "TLS_AES_128_CCM_SHA256",
        "TLS_AES_128_CCM_8_SHA256",
    }
)

# IANA (JSSE) name -> OpenSSL name, TLS 1.2 and older.
IANA_TO_OPENSSL: dict[str, str] = {
    "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384": "ECDHE-ECDSA-AES256-GCM-SHA384",
    "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384": "ECDHE-RSA-AES256-GCM-SHA384",
    "TLS_DHE_DSS_WITH_AES_256_GCM_SHA384": "DHE-DSS-AES256-GCM-SHA384",
    "TLS_DHE_RSA_WITH_AES_256_GCM_SHA384": "DHE-RSA-AES256-GCM-SHA384",
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-ECDSA-CHACHA20-POLY1305",
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-RSA-CHACHA20-POLY1305",
    "TLS_DHE_RSA_WITH_CHACHA20_POLY1305_SHA256": "DHE-RSA-CHACHA20-POLY1305",
    "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256": "ECDHE-ECDSA-AES128-GCM-SHA256",
    "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256": "ECDHE-RSA-AES128-GCM-SHA256",
    "TLS_DHE_DSS_WITH_AES_128_GCM_SHA256": "DHE-DSS-AES128-GCM-SHA256",
    "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256": "DHE-RSA-AES128-GCM-SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384": "ECDHE-ECDSA-AES256-SHA384",
    "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384": "ECDHE-RSA-AES256-SHA384",
    "TLS_DHE_RSA_WITH_AES_256_CBC_SHA256": "DHE-RSA-AES256-SHA256",
    "TLS_DHE_DSS_WITH_AES_256_CBC_SHA256": "DHE-DSS-AES256-SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256": "ECDHE-ECDSA-AES128-SHA256",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256": "ECDHE-RSA-AES128-SHA256",
    "TLS_DHE_RSA_WITH_AES_128_CBC_SHA256": "DHE-RSA-AES128-SHA256",
    "TLS_DHE_DSS_WITH_AES_128_CBC_SHA256": "DHE-DSS-AES128-SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA": "ECDHE-ECDSA-AES256-SHA",
    "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA": "ECDHE-RSA-AES256-SHA",
    "TLS_DHE_RSA_WITH_AES_256_CBC_SHA": "DHE-RSA-AES256-SHA",
    "TLS_DHE_DSS_WITH_AES_256_CBC_SHA": "DHE-DSS-AES256-SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA": "ECDHE-ECDSA-AES128-SHA",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA": "ECDHE-RSA-AES128-SHA",
    "TLS_DHE_RSA_WITH_AES_128_CBC_SHA": "DHE-RSA-AES128-SHA",
    "TLS_DHE_DSS_WITH_AES_128_CBC_SHA": "DHE-DSS-AES128-SHA",
    "TLS_RSA_WITH_AES_256_GCM_SHA384": "AES256-GCM-SHA384",
    "TLS_RSA_WITH_AES_128_GCM_SHA256": "AES128-GCM-SHA256",
    "TLS_RSA_WITH_AES_256_CBC_SHA256": "AES256-SHA256",
    "TLS_RSA_WITH_AES_128_CBC_SHA256": "AES128-SHA256",
    "TLS_RSA_WITH_AES_256_CBC_SHA": "AES256-SHA",
    "TLS_RSA_WITH_AES_128_CBC_SHA": "AES128-SHA",
}

_SCSV = "TLS_EMPTY_RENEGOTIATION_INFO_SCSV"


def openssl_cipher_name(name: str, *, setting: str = "ssl.cipher.suites") -> str:
    """The OpenSSL name of one IANA/JSSE TLS 1.2 suite; ``SecurityConfigError`` when it has none."""
    try:
        return IANA_TO_OPENSSL[name]
    except KeyError:
        pass
    if name in TLS13_SUITES:
        raise SecurityConfigError(f"{setting}: {name} is a TLS 1.3 suite; it has no TLS 1.2 OpenSSL name")
    if name.startswith("SSL_") or any(part in name for part in ("_3DES_", "_RC4_", "_NULL_", "_EXPORT", "_DES_")):
        raise SecurityConfigError(f"{setting}: {name} is a legacy or insecure suite that kafkalog does not enable")
    if name.startswith(("TLS_ECDH_ECDSA_", "TLS_ECDH_RSA_")):
        raise SecurityConfigError(f"{setting}: {name} (static ECDH) is not implemented by OpenSSL")
    raise SecurityConfigError(
        f"{setting}: unknown cipher suite {name!r} (expected an IANA name like TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384)"
    )


@dataclass(frozen=True)
class CipherSelection:
    """A parsed ``ssl.cipher.suites``: OpenSSL names for TLS 1.2 and older, TLS 1.3 suite names as given."""

    tls12: tuple[str, ...]
    tls13: tuple[str, ...]
    openssl_syntax: bool = False  # an entry was OpenSSL cipher-list syntax (librdkafka), not an IANA name

    @property
    def allows_tls12(self) -> bool:
        return bool(self.tls12)

    @property
    def allows_tls13(self) -> bool:
        """IANA names only: TLS 1.3 only if one of its suites is listed (JSSE); OpenSSL syntax never touches it."""
        return bool(self.tls13) or self.openssl_syntax

    @property
    def openssl_cipher_string(self) -> str:
        """The ``set_ciphers`` argument (TLS 1.2 and older); empty when only TLS 1.3 suites were listed."""
        return ":".join(self.tls12)

    def validate(self, setting: str = "ssl.cipher.suites") -> None:
        """Check OpenSSL accepts the TLS 1.2 part (``SecurityConfigError`` naming the setting otherwise)."""
        if not self.tls12:
            return
        # OpenSSL silently drops unknown names from a list that selects anything, so plain names are checked one
        # by one; cipher-string operators (``!x``, ``-x``, ``+x``, ``@STRENGTH``) only as part of the whole.
        for entry in self.tls12:
            for name in entry.split(":"):
                if name and name[0] not in "!-+@" and not _openssl_accepts(name):
                    raise SecurityConfigError(f"{setting}: OpenSSL does not know the cipher {name!r}")
        if not _openssl_accepts(self.openssl_cipher_string):
            raise SecurityConfigError(
                f"{setting}: OpenSSL accepts none of the cipher suites {self.openssl_cipher_string!r}"
            )


def _openssl_accepts(cipher_string: str) -> bool:
    try:
        ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT).set_ciphers(cipher_string)
    except ssl.SSLError:
        return False
    return True


def parse_cipher_suites(
    value: str | Sequence[str] | None, *, setting: str = "ssl.cipher.suites"
) -> CipherSelection | None:
    """Parse the setting (None or empty: no restriction, the library defaults, as Kafka's JVM default)."""
    if value is None:
        return None
    names = [n.strip() for n in (value.split(",") if isinstance(value, str) else value)]
    names = [n for n in names if n and n != _SCSV]
    if not names:
        return None
    tls12: list[str] = []
    tls13: list[str] = []
    openssl_syntax = False
    for name in names:
        if name in TLS13_SUITES:
            tls13.append(name)
        elif name.startswith(("TLS_", "SSL_")):
            tls12.append(openssl_cipher_name(name, setting=setting))
        else:
            tls12.append(name)
            openssl_syntax = True
    selection = CipherSelection(tuple(tls12), tuple(tls13), openssl_syntax)
    selection.validate(setting)
    return selection
