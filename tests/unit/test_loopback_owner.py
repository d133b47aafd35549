"""Reading who holds a loopback connection's other end (see the shared-server test for
the real check against a port another user holds)."""

from __future__ import annotations

import socket
import struct

from goose_ls.agent.share.loopback_owner import linux_owners, lsof_owners

HEADER = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode"


def _hex(host: str, port: int) -> str:
    (number,) = struct.unpack("=I", socket.inet_aton(host))
    return f"{number:08X}:{port:04X}"


def _row(local: str, remote: str, state: str, uid: int) -> str:
    return f"   0: {local} {remote} {state} 00000000:00000000 00:00000000 00000000 {uid} 0 1"


OURS, THEIRS = ("127.0.0.1", 50000), ("127.0.0.1", 41000)
CONNECTED = _row(_hex(*THEIRS), _hex(*OURS), "01", 1000)
OUR_END = _row(_hex(*OURS), _hex(*THEIRS), "01", 1000)
LISTENING = _row(_hex(*THEIRS), _hex("0.0.0.0", 0), "0A", 1000)


def test_the_server_end_and_its_listener_name_their_owners() -> None:
    table = "\n".join([HEADER, OUR_END, CONNECTED, LISTENING])
    assert linux_owners(OURS, THEIRS, table) == {1000}
    squatter = _row(_hex("0.0.0.0", THEIRS[1]), _hex("0.0.0.0", 0), "0A", 1001)
    assert linux_owners(OURS, THEIRS, f"{table}\n{squatter}") == {1000, 1001}
    other_port = _row(_hex("127.0.0.1", 41001), _hex("0.0.0.0", 0), "0A", 1002)
    assert linux_owners(OURS, THEIRS, f"{table}\n{other_port}") == {1000}


def test_a_connection_whose_other_end_is_not_listed_has_no_owner() -> None:
    assert linux_owners(OURS, THEIRS, "\n".join([HEADER, OUR_END, LISTENING])) == set()


def test_lsof_field_output_names_the_owner_of_the_server_s_end() -> None:
    end = "127.0.0.1:41000->127.0.0.1:50000"
    output = (
        "p123\nu501\nf7\nn127.0.0.1:50000->127.0.0.1:41000\n"  # our own end
        f"p456\nu502\nf9\nn{end}\n"
    )
    assert lsof_owners(output, end) == {502}
    assert lsof_owners("p123\nu501\nf7\nn127.0.0.1:50000->127.0.0.1:41000\n", end) == set()
    assert lsof_owners("", end) == set()
