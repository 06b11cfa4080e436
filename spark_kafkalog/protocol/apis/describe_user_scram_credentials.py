"""DescribeUserScramCredentials (key 50), v0, flexible (KIP-554). The SCRAM mechanisms (1 = SCRAM-SHA-256,
2 = SCRAM-SHA-512) and iteration counts stored for each user; a null or empty user list asks for every user
with credentials. Per-user error codes; the top-level one is for authorization and infrastructure failures."""

from ..schema import declare_api

API = declare_api(
    50,
    "DescribeUserScramCredentials",
    versions="0",
    flexible="0+",
    request="""
        users                      []UserName?
          name                     string
    """,
    response="""
        throttle_time_ms           int32
        error_code                 int16
        error_message              string?
        results                    []DescribeUserScramCredentialsResult
          user                     string
          error_code               int16
          error_message            string?
          credential_infos         []CredentialInfo
            mechanism              int8
            iterations             int32
    """,
)
