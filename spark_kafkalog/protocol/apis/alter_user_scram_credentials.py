"""AlterUserScramCredentials (key 51), v0, flexible (KIP-554). Deletions name a user and a mechanism
(1 = SCRAM-SHA-256, 2 = SCRAM-SHA-512); upsertions also carry the iterations, the client's random salt and the
salted password (PBKDF2 of the password, computed by the client: the password never travels). One result per
affected user."""

from ..schema import declare_api

API = declare_api(
    51,
    "AlterUserScramCredentials",
    versions="0",
    flexible="0+",
    request="""
        deletions                  []ScramCredentialDeletion
          name                     string
          mechanism                int8
        upsertions                 []ScramCredentialUpsertion
          name                     string
          mechanism                int8
          iterations               int32
          salt                     bytes
          salted_password          bytes       secret
    """,
    response="""
        throttle_time_ms           int32
        results                    []AlterUserScramCredentialsResult
          user                     string
          error_code               int16
          error_message            string?
    """,
)
