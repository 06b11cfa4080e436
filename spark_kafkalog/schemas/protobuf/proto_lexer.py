"""The ``.proto`` tokenizer and the token cursor the parser's grammar reads from.

Tokens (``Token(kind, text, line, column)``, line and column 1-based): ``float``, ``int`` (decimal, ``0x`` hex,
``0`` octal), ``ident``, ``string`` (single or double quoted, C escapes) and ``symbol`` (one character of
``{}[]()<>;,=.:+-/``), then one ``eof``. Whitespace and ``//``/``/* */`` comments are skipped. Signs are
separate ``symbol`` tokens.

``TokenCursor`` walks the tokens: ``tok`` (current), ``next``/``at``/``accept``/``expect`` and readers of
identifiers, dotted names, type references, (adjacent, concatenated) string literals and signed integers.
``c_escape`` is ``unescape``'s inverse for the text the printer and option defaults write.
Every error is a ``ProtoSyntaxError`` whose message starts ``line L, column C:`` and names what was found.
Pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TOKEN = re.compile(
    r"""
    (?P<ws>[ \t\r\n\f\v]+)
  | (?P<line_comment>//[^\n]*)
  | (?P<block_comment>/\*.*?\*/)
  | (?P<float>(?:\d+\.\d*|\.\d+)(?:[eE][+-]?\d+)?[fF]?|\d+[eE][+-]?\d+[fF]?)
  | (?P<int>0[xX][0-9a-fA-F]+|0[0-7]*|[1-9]\d*)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<string>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
  | (?P<symbol>[{}\[\]()<>;,=.:+\-/])
    """,
    re.VERBOSE | re.DOTALL,
)
_ESCAPES = {"a": 7, "b": 8, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11, "\\": 92, "'": 39, '"': 34, "?": 63}


class ProtoSyntaxError(ValueError):
    """A ``.proto`` text that does not parse or names an unknown type; the message names line and column."""


@dataclass(frozen=True)
class Token:
    """One token: its kind (a group name of the token pattern, or ``eof``), its text, and where it starts."""

    kind: str
    text: str
    line: int
    column: int


def tokenize(text: str) -> list[Token]:
    """The tokens of ``text``, ending with an ``eof`` token; a character no token starts with is an error."""
    tokens = []
    pos, line, line_start = 0, 1, 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise ProtoSyntaxError(f"line {line}, column {pos - line_start + 1}: unexpected character {text[pos]!r}")
        kind = m.lastgroup or ""
        if kind not in ("ws", "line_comment", "block_comment"):
            tokens.append(Token(kind, m.group(), line, pos - line_start + 1))
        newlines = m.group().count("\n")
        if newlines:
            line += newlines
            line_start = m.start() + m.group().rindex("\n") + 1
        pos = m.end()
    tokens.append(Token("eof", "", line, pos - line_start + 1))
    return tokens


def unescape(literal: str) -> bytes:
    """The bytes of a quoted string literal (quotes included in ``literal``): C escapes, ``\\x`` hex, octal,
    ``\\u``/``\\U`` code points (UTF-8 encoded); raises ``ValueError``/``IndexError`` for a malformed escape."""
    body, out, i = literal[1:-1], bytearray(), 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out += c.encode()
            i += 1
            continue
        i += 1
        e = body[i]
        if e in _ESCAPES:
            out.append(_ESCAPES[e])
            i += 1
        elif e in "xX":
            m = re.match(r"[0-9a-fA-F]{1,2}", body[i + 1 :])
            if not m:
                raise ValueError("\\x needs hex digits")
            out.append(int(m.group(), 16))
            i += 1 + len(m.group())
        elif e in "01234567":
            m = re.match(r"[0-7]{1,3}", body[i:])
            assert m is not None
            out.append(int(m.group(), 8) & 0xFF)
            i += len(m.group())
        elif e in "uU":
            width = 4 if e == "u" else 8
            out += chr(int(body[i + 1 : i + 1 + width], 16)).encode()
            i += 1 + width
        else:
            raise ValueError(f"unknown escape \\{e}")
    return bytes(out)


def c_escape(data: bytes, *, escape_single_quote: bool = True) -> str:
    """protoc's CEscape of ``data`` (no surrounding quotes): ``\\n``, ``\\r``, ``\\t``, a backslash before
    ``"``, ``\\`` and (unless ``escape_single_quote`` is false) ``'``, printable ASCII as itself, any other
    byte as a three-digit octal escape."""
    specials = "\"'\\" if escape_single_quote else '"\\'
    out = []
    for b in data:
        c = chr(b)
        if c == "\n":
            out.append("\\n")
        elif c == "\r":
            out.append("\\r")
        elif c == "\t":
            out.append("\\t")
        elif c in specials:
            out.append("\\" + c)
        elif 0x20 <= b < 0x7F:
            out.append(c)
        else:
            out.append(f"\\{b:03o}")
    return "".join(out)


def int_literal(text: str) -> int:
    """The value of an ``int`` token's text: ``0x`` hex, a leading ``0`` octal, else decimal."""
    return int(text, 8) if re.fullmatch(r"0[0-7]+", text) else int(text, 0)


def syntax_error(message: str, tok: Token) -> ProtoSyntaxError:
    """``line L, column C: <message> (found <token>)`` at ``tok``."""
    found = "end of input" if tok.kind == "eof" else repr(tok.text)
    return ProtoSyntaxError(f"line {tok.line}, column {tok.column}: {message} (found {found})")


class TokenCursor:
    """A position in the tokens of one ``.proto`` text, with the readers the grammar is written in."""

    def __init__(self, text: str) -> None:
        self.tokens = tokenize(text)
        self.i = 0

    @property
    def tok(self) -> Token:
        return self.tokens[self.i]

    def error(self, message: str, tok: Token | None = None) -> ProtoSyntaxError:
        """The error at ``tok`` (default: the current token)."""
        return syntax_error(message, tok or self.tok)

    def next(self) -> Token:
        t = self.tok
        self.i += 1
        return t

    def at(self, text: str) -> bool:
        """Whether the current token is the keyword or symbol ``text`` (never a string literal's text)."""
        return self.tok.text == text and self.tok.kind in ("symbol", "ident")

    def accept(self, text: str) -> bool:
        if self.at(text):
            self.i += 1
            return True
        return False

    def expect(self, text: str) -> Token:
        if not self.at(text):
            raise self.error(f"expected {text!r}")
        return self.next()

    def ident(self, what: str = "an identifier") -> str:
        if self.tok.kind != "ident":
            raise self.error(f"expected {what}")
        return self.next().text

    def full_ident(self) -> str:
        """A dotted name ``a.b.c``."""
        parts = [self.ident()]
        while self.accept("."):
            parts.append(self.ident())
        return ".".join(parts)

    def type_ref(self) -> str:
        """A type reference as written: a dotted name, with a leading ``.`` when fully qualified."""
        lead = "." if self.accept(".") else ""
        return lead + self.full_ident()

    def string(self) -> bytes:
        """One or more adjacent string literals, concatenated."""
        if self.tok.kind != "string":
            raise self.error("expected a string")
        out = b""
        while self.tok.kind == "string":
            t = self.next()
            try:
                out += unescape(t.text)
            except (ValueError, IndexError) as e:
                raise self.error(f"invalid string literal: {e}", t) from None
        return out

    def integer(self, what: str = "an integer") -> int:
        """An integer literal, optionally preceded by ``-``."""
        negative = self.accept("-")
        if self.tok.kind != "int":
            raise self.error(f"expected {what}")
        value = int_literal(self.next().text)
        return -value if negative else value

    def end_statement(self) -> None:
        self.expect(";")
