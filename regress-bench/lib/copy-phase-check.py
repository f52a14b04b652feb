#!/usr/bin/env python3
"""copy-phase-check.py [--file-size N | --no-sockets | --whole-pages PROG]
STRACE_LOG...: from
`strace [-ff] -e trace=read,write,pread64,close,execve
-e raw=read,write,pread64,close`, check that bulk reads (>= 4096 bytes)
land at least 64 bytes away, modulo the page size, from the stream offset
they read (the kernel's copy is slow when its destination is 1-63 bytes
past its source), and that bulk writes do not start 1-63 bytes behind the
offset they write at.  Stream offset = bytes the descriptor read (or
wrote) since this process's log began or it was opened; a pread's is the
offset it names.  Only descriptors that moved at least 1 MiB are checked;
with --file-size only preads and the reads of descriptors that read
exactly N bytes (a file); with --no-sockets not the descriptors that were
both read and written (a server process inherits its connection after the
login: its log does not know the connection's offset).  One log per
process: a log whose process ends up running a program other than ssh*,
scp or sftp-server (a shell, cat) is left out.  Prints one line per
descriptor and direction checked; exit 1 if a bulk call is in the slow
band or if nothing was checked.  --whole-pages PROG: instead, every write of
more than a page by PROG (to a descriptor it wrote 1 MiB to) starts and
ends on a page boundary of that descriptor's stream, so that a pipe's pages
hold the bytes at their stream offset (a pipe fills each write into fresh
pages)."""
import re
import sys

PAGE = 4096
OURS = ("ssh", "scp", "sftp-server")
EXEC = re.compile(r'^(?:\d+\s+)?execve\("([^"]*)"')
CLOSE = re.compile(r"^(?:\d+\s+)?close\(0x([0-9a-f]+)\)")
CALL = re.compile(r"^(?:\d+\s+)?(read|write)\(0x([0-9a-f]+), 0x([0-9a-f]+), "
                  r"0x[0-9a-f]+\)\s+= 0x([0-9a-f]+)")
PREAD = re.compile(r"^(?:\d+\s+)?pread64\(0x([0-9a-f]+), 0x([0-9a-f]+), "
                   r"0x[0-9a-f]+, 0x([0-9a-f]+)\)\s+= 0x([0-9a-f]+)")


def last_program(lines):
    """the program a log's process last exec'd ("" if none)"""
    progs = [m.group(1).split("/")[-1] for m in map(EXEC.match, lines) if m]
    return progs[-1] if progs else ""


def check(path, file_size, no_sockets):
    """(descriptors checked, calls in the slow band) of one log"""
    lines = open(path).read().splitlines()
    prog = last_program(lines)
    if prog and not prog.startswith(OURS):
        return 0, 0
    off, calls, done = {}, {}, {}
    opened = 0  # descriptors are reused: one key per opening
    for line in lines:
        m = CLOSE.match(line)
        if m:
            fd = int(m.group(1), 16)
            for key in [k for k in off if k[1] == fd]:
                done[key] = off.pop(key)
            continue
        m = PREAD.match(line)
        if m:
            # a file read at an offset it names (the split transfers)
            key = ("pread", int(m.group(1), 16), 0)
            addr, at, n = (int(m.group(i), 16) for i in (2, 3, 4))
            off[key] = off.get(key, 0) + n
            if n >= PAGE:
                d = (addr - at) % PAGE
                calls.setdefault(key, []).append((n, 1 <= d <= 63))
            continue
        m = CALL.match(line)
        if not m:
            continue
        op, fd = m.group(1), int(m.group(2), 16)
        addr, n = int(m.group(3), 16), int(m.group(4), 16)
        key = [k for k in off if k[1] == fd and k[0] == op]
        if not key:
            opened += 1
            key = [(op, fd, opened)]
            # the other direction of the same opening, if any
            other = [k for k in off if k[1] == fd]
            if other:
                key = [(op, fd, other[0][2])]
        key = key[0]
        pos = off.get(key, 0)
        off[key] = pos + n
        if n >= PAGE:
            d = (addr - pos) % PAGE
            slow = (1 <= d <= 63) if op == "read" else (PAGE - 63 <= d <= PAGE - 1)
            calls.setdefault(key, []).append((n, slow))
    done.update(off)
    both = {k[2] for k in done if k[0] == "read"} & {k[2] for k in done if k[0] == "write"}
    checked = bad = 0
    for key in sorted(calls):
        op, fd, opening = key
        if done[key] < 1 << 20:
            continue
        if no_sockets and opening in both:
            continue
        if file_size is not None and op != "pread" and (
                op != "read" or done[key] != file_size):
            continue
        lst = calls[key]
        nslow = sum(1 for n, s in lst if s)
        print("%s: %s fd %d: %d bulk calls, %d bytes; in the slow band: %d calls, %d bytes"
              % (path.split("/")[-1], op, fd, len(lst), done[key], nslow,
                 sum(n for n, s in lst if s)))
        checked += 1
        bad += nslow
    return checked, bad


def whole_pages(path, prog):
    """(descriptors checked, bulk writes starting or ending off a page
    boundary of their stream) of one log of PROG"""
    lines = open(path).read().splitlines()
    if last_program(lines) != prog:
        return 0, 0
    pos, bulk, off_page = {}, {}, {}
    for m in map(CALL.match, lines):
        if not m or m.group(1) != "write":
            continue
        fd, n = int(m.group(2), 16), int(m.group(4), 16)
        start = pos.get(fd, 0)
        pos[fd] = start + n
        if n > PAGE:
            bulk[fd] = bulk.get(fd, 0) + 1
            off_page[fd] = off_page.get(fd, 0) + (
                start % PAGE != 0 or (start + n) % PAGE != 0)
    checked = bad = 0
    for fd in sorted(bulk):
        if pos[fd] < 1 << 20:
            continue
        print("%s: %s write fd %d: %d bulk writes, %d bytes; not whole "
              "pages of the stream: %d" % (path.split("/")[-1], prog, fd, bulk[fd],
                                     pos[fd], off_page[fd]))
        checked += 1
        bad += off_page[fd]
    return checked, bad


def main(args):
    file_size, no_sockets = None, False
    if args[:1] == ["--whole-pages"]:
        checked = bad = 0
        for path in args[2:]:
            c, b = whole_pages(path, args[1])
            checked += c
            bad += b
        if checked == 0:
            print("nothing checked: no %s log wrote 1 MiB" % args[1])
            return 1
        return 1 if bad else 0
    if args[:1] == ["--file-size"]:
        file_size, args = int(args[1]), args[2:]
    elif args[:1] == ["--no-sockets"]:
        no_sockets, args = True, args[1:]
    checked = bad = 0
    for path in args:
        c, b = check(path, file_size, no_sockets)
        checked += c
        bad += b
    if checked == 0:
        print("nothing checked: no descriptor moved 1 MiB")
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
