"""Kafka's sasl.jaas.config grammar (JaasConfig's StreamTokenizer rules) and the login modules we accept."""

from __future__ import annotations

import pytest

from spark_kafkalog.security.errors import SecurityConfigError
from spark_kafkalog.security.jaas import JaasConfig, parse_jaas_config, plain_users

PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule"
OAUTH = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"


@pytest.mark.parametrize(
    "text, options",
    [
        (f'{PLAIN} required username="u" password="p";', {"username": "u", "password": "p"}),
        (f"{PLAIN} required username='u' password='p';", {"username": "u", "password": "p"}),
        (f"{PLAIN} required;", {}),
        (
            f'  {PLAIN}\n  required\n  username=alice\n  password="s3cr;t"  ;  ',
            {"username": "alice", "password": "s3cr;t"},
        ),
        (f"{PLAIN} required k=bare.word-1_$x;", {"k": "bare.word-1_$x"}),
        (
            f"{PLAIN} required iterations=8192 n=-1.5 u=a:b,c@d{{e}}\\x;",
            {"iterations": "8192", "n": "-1.5", "u": "a:b,c@d{e}\\x"},
        ),
        (f"{PLAIN} required k=ünïcødé€ j=$x-1;", {"k": "ünïcødé€", "j": "$x-1"}),
        (f'{PLAIN} required k="a\\"b\\\\c\\td\\101";', {"k": 'a"b\\c\tdA'}),
        (f"{PLAIN} required k='it\\'s';", {"k": "it's"}),
        (f'{PLAIN} required k="" j=x;', {"k": "", "j": "x"}),
        (f'{PLAIN} required /* block */ k="v" // line comment\n ;', {"k": "v"}),
        (f'// leading\n{PLAIN} required k="v";', {"k": "v"}),
        (f'{PLAIN} required k="a=b,c";', {"k": "a=b,c"}),
        (f'{PLAIN} required k="v" k="w";', {"k": "w"}),  # Java's HashMap.put: the last one wins
        (
            f'{SCRAM} required username="tok" password="hmac" tokenauth="true";',
            {"username": "tok", "password": "hmac", "tokenauth": "true"},
        ),
    ],
)
def test_parses_entries(text, options):
    jaas = parse_jaas_config(text)
    assert dict(jaas.options) == options
    assert jaas.flag == "required"


@pytest.mark.parametrize("flag", ["required", "REQUIRED", "Requisite", "sufficient", "optional"])
def test_control_flags_any_case(flag):
    assert parse_jaas_config(f"{PLAIN} {flag};").flag == flag.lower()


@pytest.mark.parametrize(
    "module, kind",
    [(PLAIN, "PLAIN"), (SCRAM, "SCRAM"), (OAUTH, "OAUTHBEARER")],
)
def test_kind_of_each_accepted_module(module, kind):
    assert parse_jaas_config(f"{module} required;").kind == kind


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("", "login module not specified"),
        ("/* only a comment */", "login module not specified"),
        (PLAIN, "control flag not specified"),
        (f"{PLAIN} mandatory;", "invalid login module control flag"),
        (f'{PLAIN} required username="u"', "not terminated by semi-colon"),
        (f"{PLAIN} required k=;", "value not specified for key 'k'"),
        (f"{PLAIN} required k;", "value not specified for key 'k'"),
        (f"{PLAIN} required url=http://x;", "not terminated by semi-colon"),  # '/' ends the word, '//' comments
        (f"{PLAIN} required k=a\x85b;", "expected an option name"),  # \x81-\x9f are ordinary characters
        (f"{PLAIN} required =v;", "expected an option name"),
        (f"{PLAIN} required; {SCRAM} required;", "contains 2 login modules, should be 1"),
    ],
)
def test_malformed_configs_name_the_problem(text, fragment):
    with pytest.raises(SecurityConfigError, match="sasl.jaas.config") as e:
        parse_jaas_config(text)
    assert fragment in str(e.value)


@pytest.mark.parametrize(
    "module",
    [
        "com.sun.security.auth.module.JndiLoginModule",
        "com.sun.security.auth.module.LdapLoginModule",
        "com.sun.security.auth.module.Krb5LoginModule",
        "org.apache.kafka.shaded.org.apache.kafka.common.security.plain.PlainLoginModule",
        "org.apache.kafka.common.security.plain.PlainLoginModuleX",
        "PlainLoginModule",
    ],
)
def test_other_login_modules_are_refused_by_name(module):
    text = f'{module} required user.provider.url="ldap://evil/x" password="hunter2";'
    with pytest.raises(SecurityConfigError) as e:
        parse_jaas_config(text)
    message = str(e.value)
    assert module in message and "refused" in message and "CVE-2023-25194" in message
    assert "hunter2" not in message


def test_repr_and_str_hide_secrets_but_show_the_rest():
    jaas = parse_jaas_config(
        f'{PLAIN} required username="admin" password="pw-1" user_admin="pw-2" user_alice="pw-3" '
        'clientSecret="pw-4" trustStorePassword="pw-5" scope="s";'
    )
    for text in (repr(jaas), str(jaas)):
        assert "admin" in text and "'scope': 's'" in text
        for secret in ("pw-1", "pw-2", "pw-3", "pw-4", "pw-5"):
            assert secret not in text


def test_errors_never_show_values_after_a_secret():
    with pytest.raises(SecurityConfigError) as e:
        parse_jaas_config(f'{PLAIN} required password="hunter2" next=;')
    assert "hunter2" not in str(e.value)


def test_plain_users_and_identity():
    jaas = parse_jaas_config(
        f'{PLAIN} required username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret" user_="x";'
    )
    assert plain_users(jaas) == {"admin": "admin-secret", "alice": "alice-secret"}
    assert (jaas.username, jaas.password) == ("admin", "admin-secret")
    assert jaas.token_auth is False


@pytest.mark.parametrize("value, expected", [('"true"', True), ('"TRUE"', True), ("true", True), ('"false"', False)])
def test_token_auth_option(value, expected):
    assert parse_jaas_config(f'{SCRAM} required tokenauth={value} username="t" password="h";').token_auth is expected


def test_jaas_config_is_frozen():
    jaas = parse_jaas_config(f'{PLAIN} required username="u";')
    assert isinstance(jaas, JaasConfig)
    with pytest.raises(TypeError):
        jaas.options["username"] = "v"  # type: ignore[index]  # the options are a read-only mapping
