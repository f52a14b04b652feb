#!/usr/bin/python3
# larval-session-client.py HOST PORT USER KEYFILE MODE: a paramiko client
# that sends channel data on a session before its exec/subsystem request
# (patch 0242: sshd opens a session with a one-packet window and hands what
# came in it to the command).  Prints one line per step.
#   MODE early:   send 20000 bytes (within the 32 KiB window), then exec
#                 "cat"; read back: "early ok N" when all came back in order.
#   MODE overrun: ignore the window: send 96 KiB before the request.  sshd
#                 must disconnect ("disconnected" printed); anything else
#                 prints what happened.
#   MODE refused: send 20000 bytes, then ask for a subsystem that does not
#                 exist (refused), close; then a new session runs "echo
#                 fine": "refused ok" when the request failed and the
#                 connection still works.
import socket, sys, time
import paramiko

host, port, user, keyfile, mode = sys.argv[1], int(sys.argv[2]), \
    sys.argv[3], sys.argv[4], sys.argv[5]
sock = socket.create_connection((host, port), timeout=20)
t = paramiko.Transport(sock)
t.start_client(timeout=20)
t.auth_publickey(user, paramiko.Ed25519Key.from_private_key_file(keyfile))


def say(*a):
    print(*a, flush=True)


def readall(ch, n):
    got = b""
    while len(got) < n:
        d = ch.recv(n - len(got))
        if not d:
            break
        got += d
    return got


data = bytes((i * 7 + i // 251) & 0xff for i in range(20000))
ch = t.open_session(timeout=20)
ch.settimeout(10)
if mode == "early":
    # paramiko sends only within the window the server opened with
    # (upstream's sshd: 0, so this times out)
    try:
        ch.sendall(data)
    except socket.timeout:
        say("early: window closed before the request (sent nothing)")
        sys.exit(1)
    ch.exec_command("cat")
    ch.shutdown_write()
    got = readall(ch, len(data) + 1)
    if got == data:
        say("early ok", len(got))
    else:
        say("early: got %d bytes, %s" % (len(got),
            "a prefix" if data.startswith(got) else "different"))
        sys.exit(1)
    say("exit", ch.recv_exit_status())
elif mode == "overrun":
    ch.out_window_size = 1 << 30        # ignore what sshd granted
    blk = b"A" * 16384
    try:
        for _ in range(6):
            ch.sendall(blk)
        time.sleep(2)
        ch.exec_command("cat")
        say("not disconnected: exec accepted")
    except Exception as e:
        say("disconnected" if not t.is_active() else "error %r" % e)
    time.sleep(0.5)
    if t.is_active():
        say("transport still active")
elif mode == "refused":
    ch.sendall(data)
    try:
        ch.invoke_subsystem("no-such-subsystem-lfn")
        say("refused: subsystem accepted")
        sys.exit(1)
    except paramiko.SSHException:
        pass
    ch.close()
    c2 = t.open_session(timeout=20)
    c2.settimeout(10)
    c2.exec_command("echo fine")
    out = readall(c2, 5)
    say("refused ok" if out == b"fine\n" else "refused: second session said %r" % out)
t.close()
