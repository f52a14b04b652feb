#!/usr/bin/python3
"""pyclient.py -- one operation of a Python SSH client (paramiko or asyncssh)
against a server, for the foreign-client test and bench.

    pyclient.py paramiko|asyncssh HOST PORT USER KEY KNOWN_HOSTS OP ARGS...

OP: put LOCAL REMOTE | get REMOTE LOCAL | ls DIR | mv OLD NEW | rm PATH |
    cmd COMMAND
KNOWN_HOSTS: an OpenSSH known_hosts file; the server's key must be in it
(strict checking).  `ls` prints one name per line; `cmd` prints the
command's output and exits with its status.  Any error: a message on stderr
and exit 1.  Uses Debian's python3-paramiko / python3-asyncssh.
"""

import sys
import warnings

warnings.filterwarnings("ignore")


def die(msg):
    print("pyclient: %s" % msg, file=sys.stderr)
    sys.exit(1)


def with_paramiko(host, port, user, key, known, op, args):
    import paramiko
    c = paramiko.SSHClient()
    c.load_host_keys(known)
    c.set_missing_host_key_policy(paramiko.RejectPolicy())
    c.connect(host, port=port, username=user, key_filename=key,
              allow_agent=False, look_for_keys=False, timeout=30)
    try:
        if op == "cmd":
            _, out, err = c.exec_command(args[0])
            sys.stdout.write(out.read().decode())
            sys.stderr.write(err.read().decode())
            return out.channel.recv_exit_status()
        s = c.open_sftp()
        if op == "put":
            s.put(args[0], args[1])
        elif op == "get":
            s.get(args[0], args[1])
        elif op == "ls":
            print("\n".join(sorted(s.listdir(args[0]))))
        elif op == "mv":
            s.rename(args[0], args[1])
        elif op == "rm":
            s.remove(args[0])
        else:
            die("unknown operation %s" % op)
        s.close()
        return 0
    finally:
        c.close()


def with_asyncssh(host, port, user, key, known, op, args):
    import asyncio
    import asyncssh

    async def run():
        async with asyncssh.connect(host, port=port, username=user, client_keys=[key],
                                    known_hosts=known, agent_path=None) as conn:
            if op == "cmd":
                r = await conn.run(args[0])
                sys.stdout.write(r.stdout or "")
                sys.stderr.write(r.stderr or "")
                return r.exit_status
            async with conn.start_sftp_client() as s:
                if op == "put":
                    await s.put(args[0], args[1])
                elif op == "get":
                    await s.get(args[0], args[1])
                elif op == "ls":
                    names = [n for n in await s.listdir(args[0]) if n not in (".", "..")]
                    print("\n".join(sorted(names)))
                elif op == "mv":
                    await s.rename(args[0], args[1])
                elif op == "rm":
                    await s.remove(args[0])
                else:
                    die("unknown operation %s" % op)
            return 0
    return asyncio.run(run())


def main():
    if len(sys.argv) < 8:
        die("usage: pyclient.py paramiko|asyncssh HOST PORT USER KEY KNOWN_HOSTS OP ARGS...")
    lib, host, port, user, key, known, op = sys.argv[1:8]
    args = sys.argv[8:]
    fn = {"paramiko": with_paramiko, "asyncssh": with_asyncssh}.get(lib)
    if fn is None:
        die("unknown client %s" % lib)
    try:
        rc = fn(host, int(port), user, key, known, op, args)
    except SystemExit:
        raise
    except Exception as e:     # the client's own error, said clearly
        die("%s %s: %s: %s" % (lib, op, type(e).__name__, e))
    sys.exit(rc)


if __name__ == "__main__":
    main()
