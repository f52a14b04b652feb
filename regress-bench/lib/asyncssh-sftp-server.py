#!/usr/bin/python3
# asyncssh-sftp-server.py PORT HOST_KEY AUTHORIZED_KEYS: an SFTP server that
# is not OpenSSH, for the tests: Debian's python3-asyncssh, its stock
# SFTPServer (no chroot: a client's absolute paths are this machine's, as
# with sshd's sftp-server), the "sftp" subsystem only (no shell, no scp -O).
# Listens on 127.0.0.1:PORT with the test's host key; any user name, the
# keys in AUTHORIZED_KEYS.  Prints "Server listening on 127.0.0.1 port
# PORT" once it listens (what _lfn_sshd_run waits for), then runs until it
# is killed.  Requests are answered one at a time, in the order they came.
# When the client ends the session the channel gets exit status 0, as from
# sshd's sftp-server (asyncssh sends none: ssh then exits 255, and scp 1),
# and the server prints "session ended: at most N files open at once".
import asyncio
import sys
import warnings

warnings.simplefilter("ignore")		# cryptography's deprecations
import asyncssh  # noqa: E402


class Server(asyncssh.SFTPServer):
    """SFTPServer, counting the files a session holds open at once"""

    def __init__(self, chan):
        super().__init__(chan)
        self.files = self.peak = 0

    def open(self, path, pflags, attrs):
        f = super().open(path, pflags, attrs)
        self.files += 1
        self.peak = max(self.peak, self.files)
        return f

    def close(self, file_obj):
        self.files -= 1
        return super().close(file_obj)

    def exit(self):
        print("session ended: at most %d files open at once" % self.peak,
              flush=True)
        self.channel.exit(0)


async def main(port, host_key, authorized):
    await asyncssh.listen("127.0.0.1", port, server_host_keys=[host_key],
                          authorized_client_keys=authorized,
                          sftp_factory=Server, allow_scp=False,
                          reuse_address=True)
    print("Server listening on 127.0.0.1 port %d (asyncssh %s)"
          % (port, asyncssh.__version__), flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: asyncssh-sftp-server.py PORT HOST_KEY AUTHORIZED_KEYS")
    asyncio.run(main(int(sys.argv[1]), sys.argv[2], sys.argv[3]))
