#!/usr/bin/python3
"""check-file-client: the SFTP check-file extension of a server, asked by
paramiko (a client that is not OpenSSH), for transfer-resume-verify.sh.

  check-file-client.py HOST PORT KEY FILE

Prints one line per request: "ok HEX..." (the hashes) or "refused", for:
the whole file in 1 MiB blocks; a block under 256 bytes; more than 1024
blocks; more than 1 GiB (FILE must be larger); md5 only; a write-only
handle.  Exit 0 if the session stayed usable to the end."""
import sys
import paramiko

host, port, key, path = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
c = paramiko.SSHClient()
c.set_missing_host_key_policy(paramiko.AutoAddPolicy())
c.connect(host, port=port, key_filename=key, look_for_keys=False,
          allow_agent=False)
s = c.open_sftp()


def ask(f, alg, off, length, block):
    try:
        print("ok", f.check(alg, off, length, block).hex())
    except (IOError, paramiko.SFTPError):
        print("refused")


with s.open(path, "r") as f:
    ask(f, "sha256", 0, 8 << 20, 1 << 20)     # 8 blocks
    ask(f, "sha256", 0, 1 << 20, 128)         # block < 256
    ask(f, "sha256", 0, 8 << 20, 4096)        # 2048 blocks
    ask(f, "sha256", 0, 0, 0)                 # the whole file: > 1 GiB
    ask(f, "md5,sha1", 0, 1 << 20, 1 << 20)   # no sha256
with s.open(path + ".w", "w") as f:
    f.write(b"x" * 4096)
    ask(f, "sha256", 0, 4096, 0)              # write-only
s.stat(path)
c.close()
