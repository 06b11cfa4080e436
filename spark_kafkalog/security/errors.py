"""Errors of the security layer, shared by the broker and the client.

* ``SecurityConfigError``: a TLS or SASL setting cannot be used (unreadable store, wrong store password,
  unknown mechanism, a JAAS line naming a login module we refuse). The message names the setting and
  never contains a password, key or token.
* ``SaslAuthenticationFailed``: one SASL exchange failed. ``str(e)`` is safe to send to the peer (the
  broker answers it in SaslAuthenticate's error message, error 58) and does not tell a wrong password
  from an unknown user; ``detail`` is for the server's own log only (still without secrets).
"""

from __future__ import annotations

__all__ = ["SaslAuthenticationFailed", "SecurityConfigError"]


class SecurityConfigError(ValueError):
    """A security setting is wrong or unusable; the message names the setting, never its secret value."""


class SaslAuthenticationFailed(Exception):
    """A SASL exchange failed. ``str(self)`` goes to the peer; ``detail`` only to the local log."""

    def __init__(self, message: str, *, detail: str | None = None) -> None:
        super().__init__(message)
        self.detail = detail or message
