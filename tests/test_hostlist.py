import pytest
from hypothesis import given
from hypothesis import strategies as st

from cockpit.errors import ParseError
from cockpit.slurm.hostlist import compress, expand


@pytest.mark.parametrize(
    ("expr", "hosts"),
    [
        ("c[1-3,5],gpu[01-02]", ("c1", "c2", "c3", "c5", "gpu01", "gpu02")),
        ("c3", ("c3",)),
        ("c[1-2]", ("c1", "c2")),
        ("rack[1-2]-n[1-2]", ("rack1-n1", "rack1-n2", "rack2-n1", "rack2-n2")),
        ("node[008-010]", ("node008", "node009", "node010")),
        ("", ()),
        ("(null)", ()),
        ("login,c[1-2]", ("login", "c1", "c2")),
    ],
)
def test_expand(expr, hosts):
    assert expand(expr) == hosts


@pytest.mark.parametrize("bad", ["c[1-3", "c1-3]", "c[a-b]", "c[5-1]", "c[1-99999999]"])
def test_expand_rejects_malformed(bad):
    with pytest.raises(ParseError):
        expand(bad)


def test_compress():
    assert compress(["c1", "c2", "c3", "c5", "gpu01", "gpu02"]) == "c[1-3,5],gpu[01-02]"
    assert compress(["c3"]) == "c3"
    assert compress(["login", "c2", "c1"]) == "login,c[1-2]"


@given(
    st.lists(
        st.tuples(st.sampled_from(["c", "gpu", "n-"]), st.integers(0, 300)), min_size=1, max_size=40
    )
)
def test_compress_expand_roundtrip(pairs):
    hosts = [f"{p}{n}" for p, n in pairs]
    assert sorted(set(expand(compress(hosts)))) == sorted(set(hosts))


def test_padded_numbers_across_a_decade_are_one_range():
    from cockpit.slurm.hostlist import compress, expand

    names = [f"gpu{i:02d}" for i in range(1, 17)]
    assert compress(names) == "gpu[01-16]"
    assert list(expand(compress(names))) == names
    assert compress(["c1", "c2", "c10", "c11"]) == "c[1-2,10-11]"  # unpadded stays unpadded
