"""Credentials redact() used to let through: sshpass and curl passwords, GitHub and Slack
tokens, a long ``key=key=...`` line (it crashed), and a secret on a log line that two reads
of a recorded file cut in half."""

from __future__ import annotations

import gzip

import pytest

from cockpit.record import Recorder, Recording, RecordingTransport, ReplayClock, ReplayTransport
from cockpit.safety import REDACTED, redact, redact_in_place

GH_CLASSIC = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
GH_FINE = "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJ"
SLACK_BOT = "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbmEiLCJleHAiOjE3MDB9.q1w2e3r4t5y6u7i8o9p0"
GITLAB = "glpat-AbCdEfGhIjKlMnOpQrSt"
SLACK_USER = "xoxp-123456789012-123456789012-123456789012-0123456789abcdef0123456789abcdef"

CASES = [
    ("sshpass -p s3cr3tPw ssh ops@login01 squeue", "s3cr3tPw", "sshpass -p <redacted> ssh"),
    ("sshpass -ps3cr3tPw scp a b", "s3cr3tPw", "sshpass -p<redacted> scp"),
    ("curl -u alice:Pa55word https://obs/x", "Pa55word", "curl -u alice:<redacted> https"),
    ("curl -sS --user alice:Pa55word https://x", "Pa55word", "--user alice:<redacted> https"),
    ("curl --user=alice:Pa55word https://x", "Pa55word", "--user=alice:<redacted>"),
    (f"git clone https://github.com/x/y.git # {GH_CLASSIC}", GH_CLASSIC, f"# {REDACTED}"),
    (f"GH={GH_FINE}", GH_FINE, "GH=<redacted>"),
    (f"slack post with {SLACK_BOT} failed", SLACK_BOT, f"with {REDACTED} failed"),
    (f"token {SLACK_USER}", SLACK_USER, f"token {REDACTED}"),
    # the forms a hostile-input review found going out unredacted
    (f"export SLURM_JWT={JWT}", JWT, "SLURM_JWT=<redacted>"),
    (f"auth failed for token {JWT} (expired)", JWT, f"token {REDACTED} (expired)"),
    ("celery broker redis://:hunter22@cache:6379/0 refused", "hunter22", "redis://:<redacted>@"),
    (
        "aliyun AccessKeyId LTAI5tAbCdEfGhIjKlMnOpQr denied",
        "LTAI5tAbCdEfGhIjKlMnOpQr",
        "Id <redacted>",
    ),
    (
        "python train.py --hf_token hfTok3nValue99 --epochs 3",
        "hfTok3nValue99",
        "--hf_token <redacted>",
    ),
    ("python serve.py --api_key k3yValue --port 80", "k3yValue", "--api_key <redacted> --port"),
    ("python serve.py --api-key k3yValue --port 80", "k3yValue", "--api-key <redacted> --port"),
    ("sshpass -p 'two words' ssh ops@login01", "two words", "-p '<redacted>' ssh"),
    (f"remote: {GITLAB} rejected", GITLAB, f"remote: {REDACTED} rejected"),
    ("HUAWEICLOUD_SDK_SK = 'abc def'", "abc def", "SK = '<redacted>'"),
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
        "python -u train.py --epochs 3",  # -u without user:password
        "squeue -u alice -t R",
        "curl -sS https://obs.example.com/bucket/x",
        "ghp_short and xoxb-1",  # too short to be tokens
    ],
)
def test_ordinary_lines_stay(line):
    assert redact(line) == line


def test_a_long_chain_of_keys_is_redacted_not_a_crash():
    # every value here holds another key=: the old scan recursed once per key and a log line
    # of a few thousand of them raised RecursionError on every way out
    line = "key=" * 5000 + "password=hunter2"
    out = redact(line)
    assert out.endswith("password=<redacted>") and "hunter2" not in out
    assert redact(line.encode()).endswith(b"password=<redacted>")


def test_redact_in_place_keeps_every_offset():
    text = b"a=1\nexport HUAWEICLOUD_SDK_SK=abc\npassword=hunter2 ok\nmysql -pX y\n"
    out = redact_in_place(text)
    assert len(out) == len(text)
    assert [len(x) for x in out.split(b"\n")] == [len(x) for x in text.split(b"\n")]
    assert b"abc" not in out and b"hunter2" not in out and b" ok\n" in out


# ------------------------------------------------------------------ a secret cut by two reads

SK = "Zq8PweRt5YuI9oPaSdF3gHjK7lZxCvBn2Mq4Wr6T"  # 40 mixed case: a Huawei Cloud SK
FILE = (
    b"".join(b"step %04d loss=0.5\n" % i for i in range(20))
    + f"export HUAWEICLOUD_SDK_SK={SK}\n".encode()
    + f"found {GH_CLASSIC} in env\n".encode()
    + b"".join(b"step %04d loss=0.4\n" % i for i in range(20, 40))
)


class FileTransport:
    name = "files"

    def __init__(self, data: bytes) -> None:
        self.data = data

    async def read_range(self, path, offset, length):
        return self.data[offset : offset + length]

    async def close(self):
        return None


class Clock:
    def __init__(self) -> None:
        from datetime import UTC, datetime

        self.now = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)

    def __call__(self):
        return self.now


def _pieces(secret: str) -> list[bytes]:
    """Every 8-byte piece of ``secret``: no part of it may be in the recording."""
    return [secret[i : i + 8].encode() for i in range(0, len(secret) - 7, 4)]


async def _record(tmp_path, reads):
    clock = Clock()
    rec = Recorder(tmp_path, "lab", clock)
    t = RecordingTransport(FileTransport(FILE), rec)
    got = [await t.read_range("/logs/train.out", off, n) for off, n in reads]
    await t.close()
    return got, gzip.decompress((tmp_path / "lab.jsonl.gz").read_bytes())


@pytest.mark.parametrize("chunk", [7, 64, 100, 409, 430, 455])
async def test_a_secret_straddling_two_reads_never_reaches_the_recording(tmp_path, chunk):
    """Reads one after the other (each starting where the last ended), with the boundary
    anywhere in the secret's line; each half alone does not look like a secret."""
    reads = [(off, chunk) for off in range(0, len(FILE), chunk)]
    got, raw = await _record(tmp_path, reads)
    assert b"".join(got) == FILE  # the reader itself sees the file as it is
    for piece in _pieces(SK) + _pieces(GH_CLASSIC):
        assert piece not in raw, (chunk, piece)
    assert b"step 0039 loss=0.4" in raw and b"HUAWEICLOUD_SDK_SK=" in raw


async def test_the_log_viewers_reads_replay_redacted_at_their_offsets(tmp_path):
    """The viewer reads a chunk, then goes on from the last line start it saw: the replay
    answers the same reads with the same line boundaries, the secret masked in place."""
    secret_line = FILE.index(b"export")
    first = secret_line + 20  # the first chunk ends inside the secret
    second_from = FILE.rindex(b"\n", 0, first) + 1
    reads = [(0, first), (second_from, len(FILE) - second_from)]
    _, raw = await _record(tmp_path, reads)
    for piece in _pieces(SK):
        assert piece not in raw
    recording = Recording.load(tmp_path / "lab.jsonl.gz", "lab")
    clock = ReplayClock([Clock()()])
    replay = ReplayTransport(recording, clock)
    head = await replay.read_range("/logs/train.out", 0, first)
    assert head == FILE[:second_from]  # whole lines only: the cut line comes with the next read
    rest = await replay.read_range("/logs/train.out", second_from, len(FILE) - second_from)
    assert len(rest) == len(FILE) - second_from
    assert rest.startswith(b"export HUAWEICLOUD_SDK_SK=<redacted>***")
    assert b"found <redacted>" in rest and GH_CLASSIC.encode() not in rest
    assert rest.split(b"\n")[2:] == FILE[second_from:].split(b"\n")[2:]


def test_a_file_name_is_not_a_key_but_a_key_after_a_message_is():
    assert redact("cat: /etc/passwd: No such file or directory") == (
        "cat: /etc/passwd: No such file or directory"
    )
    # a secret key right after another "key: " (an error prefix) is still found
    assert redact("Error: password: hunter2") == "Error: password: <redacted>"


@pytest.mark.parametrize(
    "line",
    [
        "/shared/Projects/Alice/Vision/Logs/slurm-1234.out",  # 40 mixed-case path characters
        "module load mysql/8.0; srun -pgpu hostname",  # srun's partition, not mysql's -p
        "epoch 3 --pass 2 done",
        "obsutil: Access=ReadWrite on bucket",
    ],
)
def test_what_an_operator_needs_is_not_taken_for_a_secret(line):
    assert redact(line) == line


@pytest.mark.parametrize(
    ("line", "secret"),
    [
        ("mysqldump --single-transaction -u backup -p'S3cret pass' prod", "S3cret pass"),
        ('mysql -h db -u root -p"hunter2" -e "select 1"', "hunter2"),
        ("mysql -u root -pPlain db", "Plain"),
    ],
)
def test_mysql_password_quoted_or_plain_is_redacted(line, secret):
    """A quote right after mysql's -p left the whole value in place (scripts quote it)."""
    out = redact(line)
    assert secret not in out and "-p" + REDACTED in out, out


def test_a_long_command_of_mysql_words_is_redacted_in_one_pass():
    """Each 'mysql' rescanned the rest of the line for its -p (a 160 kB command of such
    words took 5 s in the poll's thread): the -p is looked for within 1 KiB of its word,
    and a real one among thousands of decoys is still found."""
    decoys = " ".join(["mysql -u a -p"] * 3_000)  # no value after -p: nothing to redact
    line = f"{decoys} mysql -u root -pRealOne db {decoys}"
    out = redact(line)
    assert "RealOne" not in out and out.count(REDACTED) == 1
