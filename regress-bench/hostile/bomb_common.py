"""bomb_common.py: what the compress-bomb peers (compress-bomb.py, the
hostile client, and compress-bomb-server.py) share: their size options and
the compressed SSH2_MSG_IGNORE they send.  Test-only."""
import paramiko
from paramiko.common import cMSG_IGNORE


def add_bomb_args(ap):
    """--ok-size, --bomb-size and --bombs, with the tests' defaults."""
    ap.add_argument("--ok-size", type=int, default=200 * 1024)
    ap.add_argument("--bomb-size", type=int, default=16 * 1024 * 1024)
    ap.add_argument("--bombs", type=int, default=2)


def ignore(t, size):
    """Send an SSH2_MSG_IGNORE of SIZE zeros on paramiko Transport T (it
    compresses to a small packet once compression is on)."""
    m = paramiko.Message()
    m.add_byte(cMSG_IGNORE)
    m.add_string(b"\0" * size)
    t._send_user_message(m)
