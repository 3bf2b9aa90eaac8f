"""More credential forms that reach job logs and node reasons: URL passwords holding ``/`` or
``@``, registry logins, object-storage and SigV4 signatures, Kubernetes env entries, PGP keys,
vendor tokens (OpenAI, Google, npm) and Azure storage keys. Each must leave every way out
redacted, as text, bytes and offset-keeping bytes; ordinary lines must stay as they are."""

from __future__ import annotations

import pytest

from cockpit.safety import REDACTED, redact, redact_in_place

OPENAI = "sk-proj-" + "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv_Wx-Yz12345"
GOOGLE = "AIza" + "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"
NPM = "npm_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
AZURE_KEY = (
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/" + "K1SZFPTOtr/KBHBeksoGMGw=="
)
PGP = (
    "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n"
    "lQOYBGXzq7wBCADHk3pNwLqR7sVb2yT8uE0o\n=Xq2b\n"
    "-----END PGP PRIVATE KEY BLOCK-----"
)

CASES = [
    # URL passwords as people type them: unencoded "/" and "@"
    ("git clone https://ops:p@ss/w@git.example.com/x.git", "p@ss/w", "https://ops:<redacted>@git"),
    ("mongodb://admin:pa@ss@mongo:27017/db down", "pa@ss", "mongodb://admin:<redacted>@mongo"),
    # registry logins
    ("docker login -u bob -p Hunter2pw swr.example.com", "Hunter2pw", "-p <redacted> swr"),
    ("docker login --password Hunter2pw reg", "Hunter2pw", "--password <redacted> reg"),
    ("docker login --password=Hunter2pw reg", "Hunter2pw", "--password=<redacted> reg"),
    ("podman login -p 'two words' reg", "two words", "-p <redacted> reg"),
    # object storage and AWS signatures: the AK and the signature both go
    ("Authorization: OBS QTWAOYTTINDUT2QV:c2lnbmF0dXJl", "c2lnbmF0dXJl", "OBS <redacted>"),
    ("Authorization: OSS LTAI5tQ9:c2lnbmF0dXJl", "c2lnbmF0dXJl", "OSS <redacted>"),
    ("Authorization: AWS AKIDEXAMPLE:c2lnbmF0dXJl", "AKIDEXAMPLE", "AWS <redacted>"),
    (
        "Authorization: AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/"
        "aws4_request, SignedHeaders=host, Signature=5d672d79c15b13162d9279b0855cfba6",
        "AKIDEXAMPLE",
        "Credential=<redacted>/20150830/us-east-1",
    ),
    ('{"Authorization": "Bearer abc.def.ghi123"}', "abc.def.ghi123", '"Bearer <redacted>"'),
    # YAML and Kubernetes manifests echoed into a log
    ("    password: hunter2pw", "hunter2pw", "password: <redacted>"),
    ("  secret: hunter2pw", "hunter2pw", "secret: <redacted>"),
    ("  token: hunter2pw", "hunter2pw", "token: <redacted>"),
    ("- name: DB_PASSWORD\n  value: hunter2pw\n", "hunter2pw", "value: <redacted>"),
    ('{"name": "HF_TOKEN", "value": "hfsecret99"}', "hfsecret99", '"value": "<redacted>"'),
    # keys and vendor tokens
    (PGP, "lQOYBGXzq7wBCADHk3pN", "<redacted private key>"),
    (f"openai.AuthenticationError: key {OPENAI} revoked", OPENAI, f"key {REDACTED} revoked"),
    (f"GOOGLE_API={GOOGLE}", GOOGLE, "GOOGLE_API=<redacted>"),
    (f"maps?k {GOOGLE} quota", GOOGLE, f"k {REDACTED} quota"),
    (f"//registry.npmjs.org/:_authToken {NPM}", NPM, f"_authToken {REDACTED}"),
    (
        f"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={AZURE_KEY};EndpointSuffix=x",
        AZURE_KEY,
        "AccountKey=<redacted>;EndpointSuffix",
    ),
    (
        "GET https://acct.blob.core.windows.net/c/f?sv=2021-08-06&sr=b&sp=r&sig=abc%2Bdef%3D 403",
        "abc%2Bdef",
        "&sig=<redacted> 403",
    ),
]


@pytest.mark.parametrize(("line", "secret", "shown"), CASES)
def test_each_form_is_redacted_in_text_and_bytes(line, secret, shown):
    out = redact(line)
    assert secret not in out and shown in out, out
    raw = redact(line.encode())
    assert secret.encode() not in raw and shown.encode() in raw
    same = redact_in_place(line.encode())
    assert secret.encode() not in same and len(same) == len(line.encode())


@pytest.mark.parametrize(
    "line",
    [
        "pip download https://registry.npmjs.org:443/@babel/core",  # a port, then a path with @
        "fetch https://host:8080/api/user@example.com failed",
        "see https://github.com/foo/bar/issues/12 and mail bob@example.com",
        "postgres://db.example.com:5432/app refused",
        "ssh://git@host:22/repo",
        "docker run -p 8080:80 nginx",  # -p of run is a port
        "docker login -u bob --password-stdin swr.example.com",
        "Authorization failed: token expired",
        "conda install scikit-learn; sk-learn 1.2",
        "name: worker\n  value: 3",
        "Credentials loaded from /etc/creds",
        "srun -p gpu --signal=USR1@90 python x.py",
        "http://[::1]:8080/metrics",
    ],
)
def test_what_an_operator_needs_is_not_taken_for_a_secret(line):
    assert redact(line) == line
