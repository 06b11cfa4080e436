"""The principal of an SSL connection: the client certificate's subject DN through ``ssl.principal.mapping.rules``.

``ssl_principal(peer_der, rules)`` returns ``"User:<name>"``: ``User:ANONYMOUS`` without a client certificate (as
Kafka's ``DefaultKafkaPrincipalBuilder``), else the subject DN as Java's ``X500Principal.getName()`` prints it
(RFC 2253, most specific RDN first, e.g. ``CN=alice,OU=Eng,O=Org,L=City,ST=State,C=US``) mapped by the rules.

DN form (``subject_dn``): attributes with an RFC 2253 keyword in the JDK (CN, C, L, ST, O, OU, STREET, DC, UID)
print as ``KEY=value`` with RFC 2253 escaping (``cryptography``'s RFC 4514 output, identical for these);
every other attribute prints as Java does, ``<dotted OID>=#<hex of the value's DER>`` (e.g. emailAddress:
``1.2.840.113549.1.9.1=#1609...``), where ``cryptography`` alone would print ``1.2.840.113549.1.9.1=a@b``.
Multi-valued RDNs keep their encoded order (the JDK's non-canonical form does too).

``SslPrincipalMapper`` implements Kafka's ``ssl.principal.mapping.rules`` (``SslPrincipalMapper.java``):
comma-separated rules, each ``DEFAULT`` (the DN unchanged) or ``RULE:<regex>/<replacement>/[L|U]``; ``/`` inside
regex or replacement is written ``\\/``. A rule applies when its regex matches the whole DN; the result is the DN
with every match replaced (Java's ``replaceAll``), then lower- (``L``) or upper-cased (``U``). Rules are tried in
order; when none applies, ``NoMatchingRule`` is raised (Kafka fails the authentication). Replacement syntax is
Java's: ``$n`` / ``${name}`` group references, ``\\x`` a literal x; as Kafka does, a ``$n`` beyond the group count
is a literal ``$n`` (``$12`` with 3 groups is group 1 then ``2``). Java regex syntax is translated where Python's
differs: named groups ``(?<name>...)`` and ``\\Q...\\E`` quoting; other Java-only constructs (``\\p{Lower}``,
possessive classes) fail at parse time with ``SecurityConfigError`` naming the rule.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from cryptography import x509
from cryptography.x509.oid import NameOID

from .errors import SecurityConfigError

__all__ = ["ANONYMOUS", "NoMatchingRule", "SslPrincipalMapper", "ssl_principal", "subject_dn"]

ANONYMOUS = "User:ANONYMOUS"

# Java's RULE_PATTERN and RULE_SPLITTER (SslPrincipalMapper.java), as Python patterns.
_RULE = r"(DEFAULT)|RULE:((\\.|[^\\/])*)/((\\.|[^\\/])*)/([LU]?).*?|(.*?)"
_RULE_SPLITTER = re.compile(r"\s*(" + _RULE + r")\s*(,\s*|$)")
_RULE_PARSER = re.compile(_RULE)

_JAVA_KEYWORDS = {
    NameOID.COMMON_NAME,
    NameOID.COUNTRY_NAME,
    NameOID.LOCALITY_NAME,
    NameOID.STATE_OR_PROVINCE_NAME,
    NameOID.ORGANIZATION_NAME,
    NameOID.ORGANIZATIONAL_UNIT_NAME,
    NameOID.STREET_ADDRESS,
    NameOID.DOMAIN_COMPONENT,
    NameOID.USER_ID,
}


class NoMatchingRule(Exception):  # noqa: N818 (Kafka's name)
    """No ``ssl.principal.mapping.rules`` rule applies to a DN (the connection's authentication fails)."""


def _der_element(data: bytes, pos: int) -> tuple[int, int, int]:
    """(content start, content end, element end) of the DER element at ``pos``."""
    first = data[pos + 1]
    start = pos + 2
    if first < 0x80:
        length = first
    else:
        n = first & 0x7F
        length = int.from_bytes(data[start : start + n], "big")
        start += n
    return start, start + length, start + length


def _raw_attribute_values(name_der: bytes) -> list[list[bytes]]:
    """The DER of every AttributeValue, per RDN, in encoded order (Name ::= SEQUENCE OF SET OF SEQUENCE {oid, value})."""
    start, end, _ = _der_element(name_der, 0)
    rdns = []
    pos = start
    while pos < end:
        set_start, set_end, pos = _der_element(name_der, pos)
        values = []
        inner = set_start
        while inner < set_end:
            seq_start, _seq_end, inner = _der_element(name_der, inner)
            _oid_start, _oid_end, value_pos = _der_element(name_der, seq_start)
            _v_start, _v_end, value_end = _der_element(name_der, value_pos)
            values.append(name_der[value_pos:value_end])
        rdns.append(values)
    return rdns


def subject_dn(name: x509.Name) -> str:
    """``name`` as Java's ``X500Principal.getName()`` (RFC 2253) prints it (see the module docstring)."""
    rdns = list(name.rdns)
    raw = _raw_attribute_values(name.public_bytes())
    parts = []
    for rdn, raw_values in zip(reversed(rdns), reversed(raw), strict=True):
        attributes = []
        for attribute, value_der in zip(rdn, raw_values, strict=True):
            if attribute.oid in _JAVA_KEYWORDS:
                attributes.append(attribute.rfc4514_string())
            else:
                attributes.append(f"{attribute.oid.dotted_string}=#{value_der.hex()}")
        parts.append("+".join(attributes))
    return ",".join(parts)


def _java_regex_to_python(pattern: str) -> str:
    out = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("\\Q", i):
            end = pattern.find("\\E", i + 2)
            literal = pattern[i + 2 :] if end < 0 else pattern[i + 2 : end]
            out.append(re.escape(literal))
            i = len(pattern) if end < 0 else end + 2
        elif pattern[i] == "\\" and i + 1 < len(pattern):
            out.append(pattern[i : i + 2])
            i += 2
        elif pattern.startswith("(?<", i) and i + 3 < len(pattern) and pattern[i + 3] not in "=!":
            out.append("(?P<")
            i += 3
        else:
            out.append(pattern[i])
            i += 1
    return "".join(out)


def _expand(match: re.Match[str], replacement: str, group_count: int) -> str:
    """Java ``Matcher.appendReplacement`` after Kafka's ``escapeLiteralBackReferences``."""
    out = []
    i = 0
    while i < len(replacement):
        char = replacement[i]
        if char == "\\":
            if i + 1 < len(replacement):
                out.append(replacement[i + 1])
            i += 2
        elif char == "$" and i + 1 < len(replacement) and replacement[i + 1] == "{":
            end = replacement.index("}", i + 2)
            out.append(match.group(replacement[i + 2 : end]) or "")
            i = end + 1
        elif char == "$" and i + 1 < len(replacement) and replacement[i + 1].isdigit():
            ref = int(replacement[i + 1])
            if ref > group_count:
                out.append("$")  # Kafka escapes a reference beyond the groups: a literal "$n"
                i += 1
                continue
            i += 2
            while i < len(replacement) and replacement[i].isdigit() and ref * 10 + int(replacement[i]) <= group_count:
                ref = ref * 10 + int(replacement[i])
                i += 1
            out.append(match.group(ref) or "")
        else:
            out.append(char)
            i += 1
    return "".join(out)


def _check_replacement(replacement: str, compiled: re.Pattern[str], rule: str) -> None:
    i = 0
    while i < len(replacement):
        char = replacement[i]
        if char == "\\":
            if i + 1 >= len(replacement):
                raise SecurityConfigError(f"ssl.principal.mapping.rules: rule `{rule}`: replacement ends with '\\'")
            i += 2
            continue
        if char == "$":
            following = replacement[i + 1 : i + 2]
            if following == "{":
                end = replacement.find("}", i + 2)
                if end < 0 or replacement[i + 2 : end] not in compiled.groupindex:
                    raise SecurityConfigError(
                        f"ssl.principal.mapping.rules: rule `{rule}`: unknown named group in the replacement"
                    )
                i = end + 1
                continue
            if not following.isdigit():
                raise SecurityConfigError(f"ssl.principal.mapping.rules: rule `{rule}`: illegal group reference '$'")
            if compiled.groups == 0 and following != "0":
                raise SecurityConfigError(
                    f"ssl.principal.mapping.rules: rule `{rule}`: the replacement refers to a group the regex lacks"
                )
        i += 1


@dataclass(frozen=True)
class _Rule:
    text: str
    pattern: re.Pattern[str] | None  # None: DEFAULT
    replacement: str = ""
    case: str = ""

    def apply(self, dn: str) -> str | None:
        if self.pattern is None:
            return dn
        if self.pattern.fullmatch(dn) is None:
            return None
        groups = self.pattern.groups
        result = self.pattern.sub(lambda m: _expand(m, self.replacement, groups), dn)
        if self.case == "L":
            return result.lower()
        if self.case == "U":
            return result.upper()
        return result


class SslPrincipalMapper:
    """Kafka's ``ssl.principal.mapping.rules`` (see the module docstring); immutable, thread-safe."""

    def __init__(self, rules: str | None = "DEFAULT") -> None:
        self.rules = self._parse(rules if rules is not None else "DEFAULT")

    @staticmethod
    def _parse(text: str) -> tuple[_Rule, ...]:
        parsed = []
        for split in _RULE_SPLITTER.finditer(text.strip()):
            rule = split.group(1)
            match = _RULE_PARSER.match(rule)
            if match is None or match.end() != len(rule):
                unmatched = rule[match.end() :] if match else rule
                raise SecurityConfigError(
                    f"ssl.principal.mapping.rules: invalid rule `{rule}`, unmatched substring: `{unmatched}`"
                )
            if match.group(1) is not None:
                parsed.append(_Rule("DEFAULT", None))
            elif match.group(2) is not None:
                pattern_text, replacement, case = match.group(2), match.group(4), match.group(6)
                try:
                    compiled = re.compile(_java_regex_to_python(pattern_text))
                except re.error as e:
                    raise SecurityConfigError(
                        f"ssl.principal.mapping.rules: rule `{rule}`: invalid regex ({e})"
                    ) from None
                _check_replacement(replacement, compiled, rule)
                parsed.append(_Rule(rule, compiled, replacement, case))
            # an empty rule is ignored, as in Kafka
        return tuple(parsed)

    def get_name(self, distinguished_name: str) -> str:
        """The mapped name of a DN; ``NoMatchingRule`` when no rule applies."""
        for rule in self.rules:
            name = rule.apply(distinguished_name)
            if name is not None:
                return name
        raise NoMatchingRule(f"No rules apply to {distinguished_name}, rules {[r.text for r in self.rules]}")

    def __repr__(self) -> str:
        return f"SslPrincipalMapper(rules = {[r.text for r in self.rules]})"


@functools.lru_cache(maxsize=64)
def _mapper(rules: str) -> SslPrincipalMapper:
    """Parsed rules, cached: a broker passes the same listener's rules string for every connection."""
    return SslPrincipalMapper(rules.strip() or "DEFAULT")


def ssl_principal(peer_der: bytes | None, rules: str | SslPrincipalMapper = "DEFAULT") -> str:
    """``User:<mapped subject DN>`` of a peer certificate (DER), or ``User:ANONYMOUS`` without one.

    ``rules`` is ``ssl.principal.mapping.rules`` (an empty string counts as ``DEFAULT``) or a parsed mapper;
    raises ``NoMatchingRule`` when no rule applies and ``SecurityConfigError`` for invalid rules.
    """
    if not peer_der:
        return ANONYMOUS
    mapper = rules if isinstance(rules, SslPrincipalMapper) else _mapper(rules)
    certificate = x509.load_der_x509_certificate(peer_der)
    return "User:" + mapper.get_name(subject_dn(certificate.subject))
