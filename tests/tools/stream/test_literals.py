"""count_literals counts as bytes.count does, in one pass, from several threads at once."""

from concurrent.futures import ThreadPoolExecutor

from hypothesis import given, settings
from hypothesis import strategies as st

from tools.stream.literals import count_literals

CHECKED = (b"slack (", b"data arrival time", b"nconstrained", b"NCONSTRAINED")
pieces = st.sampled_from([*CHECKED, b"slack", b"(", b"data arrival", b" time\n", b"x", b"\n"])


@settings(max_examples=300)
@given(st.lists(pieces | st.binary(max_size=8), max_size=40))
def test_counts_match_bytes_count(parts):
    data = b"".join(parts)
    assert count_literals(data, CHECKED) == [data.count(literal) for literal in CHECKED]


def test_threads_scanning_at_once_each_get_their_own_counts():
    texts = [b"slack (" * n + b"data arrival time" * (100 - n) for n in range(100)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        counted = list(pool.map(lambda text: count_literals(text * 200, CHECKED), texts))
    assert counted == [[200 * n, 200 * (100 - n), 0, 0] for n in range(100)]
