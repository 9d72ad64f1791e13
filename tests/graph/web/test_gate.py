"""The web app's gate alone: keys, sessions and form tokens are HMACs under the app's secret,
each bound to one person; nothing another person holds, or a guess, opens a session."""

from graph.web.gate import Gate, Person

ALICE, BOB = Person("alice", "operator"), Person("bob", "reader")
GATE = Gate(8711, b"secret", (ALICE, BOB))


def test_a_key_opens_a_session_for_its_person_only():
    assert GATE.person_of_key(GATE.key_of(ALICE)) == ALICE
    assert GATE.person_of_key(GATE.key_of(BOB)) == BOB
    alice_mac = GATE.key_of(ALICE).split(".", 1)[1]
    assert GATE.person_of_key(f"bob.{alice_mac}") is None  # alice's mac under bob's name
    assert GATE.person_of_key("carol." + alice_mac) is None  # nobody the app admits
    assert GATE.person_of_key("alice") is None


def test_a_session_is_its_person_s_and_survives_a_restart_with_the_same_secret():
    cookie = GATE.open_session(BOB)
    assert GATE.session_person(cookie) == BOB
    restarted = Gate(8711, b"secret", (ALICE, BOB))
    assert restarted.session_person(cookie) == BOB
    assert Gate(8711, b"another", (ALICE, BOB)).session_person(cookie) is None
    _, nonce, mac = cookie.split(".")
    assert GATE.session_person(f"alice.{nonce}.{mac}") is None  # bob's session renamed
    assert GATE.session_person(f"bob.{nonce}.{'0' * len(mac)}") is None
    assert GATE.session_person("") is None


def test_form_tokens_differ_by_session():
    first, second = GATE.open_session(ALICE), GATE.open_session(ALICE)
    assert GATE.form_token(first) != GATE.form_token(second)
    assert GATE.form_token(first) == Gate(8711, b"secret", (ALICE,)).form_token(first)
