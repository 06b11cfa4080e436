"""Kafka's ``sasl.jaas.config`` value: parsed, checked against the three login modules we know, never run.

Grammar (Kafka's ``JaasConfig``: a ``java.io.StreamTokenizer`` after ``resetSyntax()``, with
``wordChars(32, 128)``, ``wordChars(160, 255)``, ordinary ``;`` and ``=``, whitespace 0-32, comment character
``/`` plus ``//`` and ``/* */`` comments, quote characters ``"`` and ``'``)::

    entry   := <module> <flag> (<key> '=' <value>)* ';'
    flag    := required | requisite | sufficient | optional          (any case)
    value   := word | '"' chars '"' | "'" chars "'"

* a bare word is a run of any characters from ``!`` to ``\\u0080`` and from ``\\u00a0`` up, except
  ``; = / " '``: digits, ``:``, ``,``, ``@``, ``{`` ... are word characters (``iterations=8192`` is a value);
  characters ``\\u0081``-``\\u009f`` are ordinary characters, never part of a word;
* quoted strings take Java escapes (``\\n \\t \\b \\f \\r \\a \\v``, octal ``\\ooo``, ``\\x`` = ``x``) and
  end at the closing quote or at the end of the line;
* ``/`` ends a word and starts a comment to the end of the line (``//`` and a lone ``/`` alike), ``/*`` one to
  ``*/``: so ``url=http://host/`` reads as ``url=http:`` and loses its ``;`` (quote URLs);
* the trailing ``;`` is mandatory and a SASL ``sasl.jaas.config`` holds exactly one entry.

Only ``org.apache.kafka.common.security.{plain.PlainLoginModule, scram.ScramLoginModule,
oauthbearer.OAuthBearerLoginModule}`` are accepted (exact class names, as Kafka itself loads them; shaded
copies such as ``org.apache.kafka.shaded...`` are refused too). Any other module (``JndiLoginModule``,
``LdapLoginModule``, ``Krb5LoginModule``...) raises ``SecurityConfigError``: a config that names a JNDI or
LDAP module is the remote-code-execution vector of CVE-2023-25194 / CVE-2025-27818 / CVE-2025-27819, and
nothing named here is ever imported or instantiated anyway.

Secrets: option values whose key is ``password``, ``clientSecret``, ``user_<name>`` or contains
"password"/"secret" never appear in ``repr`` or in an error message.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

from .errors import SecurityConfigError

__all__ = ["JaasConfig", "JaasKind", "LOGIN_MODULES", "is_secret_option", "parse_jaas_config", "plain_users"]

JaasKind = Literal["PLAIN", "SCRAM", "OAUTHBEARER"]

LOGIN_MODULES: Mapping[str, JaasKind] = MappingProxyType(
    {
        "org.apache.kafka.common.security.plain.PlainLoginModule": "PLAIN",
        "org.apache.kafka.common.security.scram.ScramLoginModule": "SCRAM",
        "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule": "OAUTHBEARER",
    }
)

_FLAGS = ("required", "requisite", "sufficient", "optional")
_SETTING = "sasl.jaas.config"


def is_secret_option(key: str) -> bool:
    """True for JAAS options whose value is a secret (never logged, never in a repr or an error)."""
    lowered = key.lower()
    return key.startswith("user_") or "password" in lowered or "secret" in lowered


def _redacted(options: Mapping[str, str]) -> dict[str, str]:
    return {k: ("[hidden]" if is_secret_option(k) else v) for k, v in options.items()}


@dataclass(frozen=True)
class JaasConfig:
    """One JAAS entry: ``module flag key=value ... ;`` (``flag`` lower-cased)."""

    module: str
    flag: str
    options: Mapping[str, str] = field(default_factory=dict)

    def __repr__(self) -> str:
        return f"JaasConfig(module={self.module!r}, flag={self.flag!r}, options={_redacted(self.options)!r})"

    __str__ = __repr__

    @property
    def kind(self) -> JaasKind:
        """ "PLAIN", "SCRAM" or "OAUTHBEARER" (``parse_jaas_config`` refuses every other module)."""
        return LOGIN_MODULES[self.module]

    @property
    def username(self) -> str | None:
        """The identity's ``username`` option (a broker's inter-broker identity, a client's user)."""
        return self.options.get("username")

    @property
    def password(self) -> str | None:
        return self.options.get("password")

    @property
    def token_auth(self) -> bool:
        """SCRAM ``tokenauth="true"``: the username is a delegation token id, the password its HMAC."""
        return self.options.get("tokenauth", "false").strip().lower() == "true"


def plain_users(jaas: JaasConfig) -> dict[str, str]:
    """PLAIN's accepted users on a broker: every ``user_<name>="<password>"`` option (name may be empty
    in Kafka's grammar only if written ``user_``; such an entry is ignored, an empty user never logs in)."""
    return {
        key[len("user_") :]: value for key, value in jaas.options.items() if key.startswith("user_") and len(key) > 5
    }


# -- the tokenizer (StreamTokenizer rules used by Kafka's JaasConfig) ------------------------------------


_WORD, _QUOTED, _CHAR, _EOF = "word", "quoted", "char", "eof"
_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}


def _is_word_char(c: str) -> bool:
    """JaasConfig's tokenizer: word characters 33-128 and 160-255 (minus the ordinary, comment and quote
    characters), and every character above 255 (StreamTokenizer treats those as alphabetic)."""
    code = ord(c)
    return (32 < code <= 128 and c not in ";=\"'/") or code >= 160


@dataclass(frozen=True)
class _Token:
    kind: str
    text: str  # the string value for words and quoted strings, the character for ordinary characters
    position: int

    @property
    def sval(self) -> str | None:
        return self.text if self.kind in (_WORD, _QUOTED) else None


def _tokens(text: str) -> list[_Token]:
    out: list[_Token] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c <= " ":
            i += 1
        elif c == "/":
            if text.startswith("/*", i):
                end = text.find("*/", i + 2)
                if end < 0:
                    break  # StreamTokenizer: an unterminated block comment runs to the end
                i = end + 2
            else:  # "//" and a lone "/" (StreamTokenizer's comment character) end the line
                end = text.find("\n", i)
                i = n if end < 0 else end + 1
        elif c in "\"'":
            start, i = i, i + 1
            chars: list[str] = []
            while i < n and text[i] != c and text[i] not in "\r\n":
                if text[i] == "\\" and i + 1 < n:
                    e = text[i + 1]
                    if "0" <= e <= "7":
                        j = i + 1
                        limit = j + (3 if e <= "3" else 2)
                        while j < min(limit, n) and "0" <= text[j] <= "7":
                            j += 1
                        chars.append(chr(int(text[i + 1 : j], 8)))
                        i = j
                        continue
                    chars.append(_ESCAPES.get(e, e))
                    i += 2
                    continue
                chars.append(text[i])
                i += 1
            if i < n and text[i] == c:
                i += 1
            out.append(_Token(_QUOTED, "".join(chars), start))
        elif _is_word_char(c):
            start = i
            while i < n and _is_word_char(text[i]):
                i += 1
            out.append(_Token(_WORD, text[start:i], start))
        else:
            out.append(_Token(_CHAR, c, i))
            i += 1
    out.append(_Token(_EOF, "", n))
    return out


def _parse_entries(text: str) -> list[JaasConfig]:
    tokens = _tokens(text)
    pos = 0
    entries: list[JaasConfig] = []
    while tokens[pos].kind != _EOF:
        module = tokens[pos].sval
        if module is None:
            raise SecurityConfigError(
                f"{_SETTING}: expected a login module class name at position {tokens[pos].position}"
            )
        pos += 1
        flag_token = tokens[pos]
        if flag_token.kind == _EOF:
            raise SecurityConfigError(f"{_SETTING}: login module control flag not specified")
        flag = (flag_token.sval or "").lower()
        if flag not in _FLAGS:
            raise SecurityConfigError(
                f"{_SETTING}: invalid login module control flag at position {flag_token.position} "
                f"(expected one of {', '.join(_FLAGS)})"
            )
        pos += 1
        options: dict[str, str] = {}
        while tokens[pos].kind != _EOF and not (tokens[pos].kind == _CHAR and tokens[pos].text == ";"):
            key = tokens[pos].sval
            if key is None:
                raise SecurityConfigError(f"{_SETTING}: expected an option name at position {tokens[pos].position}")
            equals, value = tokens[pos + 1], tokens[pos + 2] if pos + 2 < len(tokens) else tokens[-1]
            if not (equals.kind == _CHAR and equals.text == "=") or value.sval is None:
                raise SecurityConfigError(
                    f"{_SETTING}: value not specified for key '{key}' (quote values containing ; = / or quotes)"
                )
            options[key] = value.sval
            pos += 3
        if tokens[pos].kind == _EOF:
            raise SecurityConfigError(f"{_SETTING}: JAAS config entry not terminated by semi-colon")
        pos += 1
        entries.append(JaasConfig(module, flag, MappingProxyType(options)))
    return entries


def parse_jaas_config(text: str) -> JaasConfig:
    """Parse a ``sasl.jaas.config`` value: exactly one entry, naming one of ``LOGIN_MODULES``.

    Raises ``SecurityConfigError`` naming what is wrong (never a secret value).
    """
    entries = _parse_entries(text)
    if not entries:
        raise SecurityConfigError(f"{_SETTING}: login module not specified")
    if len(entries) != 1:
        raise SecurityConfigError(f"{_SETTING} contains {len(entries)} login modules, should be 1 module")
    entry = entries[0]
    if entry.module not in LOGIN_MODULES:
        raise SecurityConfigError(
            f"{_SETTING}: login module {entry.module!r} is refused: only "
            f"{', '.join(LOGIN_MODULES)} are supported; other modules (JNDI, LDAP, Kerberos...) are never "
            "loaded (CVE-2023-25194)"
        )
    return entry
