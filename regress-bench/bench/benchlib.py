"""benchlib: what the bench scripts share (bench.py, report.py, senders.py,
clients.py): the tool names and the formats of their tables.  Standard
library only."""

import re

TOOLS = ["ssh-up", "ssh-down", "scp-up", "scp-down", "scp-O-up",
         "sftp-put", "sftp-get", "rsync-up"]
# one transfer over N connections: TOOL-xN runs TOOL with -X connections=N
# (scp/sftp of the lfn tree, patch 0273; stock has no such option); TOOL-x1
# is TOOL itself, and a literal "-xN" takes N from --connections
MULTI_TOOLS = ["scp-up", "scp-down", "sftp-put", "sftp-get"]


def tool_conns(tool):
    """'scp-up-x4' -> ('scp-up', 4); 'ssh-up' -> ('ssh-up', 1)."""
    m = re.fullmatch(r"(.*)-x(\d+)", tool)
    return (m.group(1), int(m.group(2))) if m and m.group(1) in MULTI_TOOLS else (tool, 1)


def fmt_dur(s):
    """Seconds as '5s' or '2m05s'."""
    s = int(max(0, s))
    return "%dm%02ds" % (s // 60, s % 60) if s >= 60 else "%ds" % s


def fmt_mbs(v):
    """MB/s with three significant digits, '–' for none."""
    if v is None:
        return "–"
    return "%.0f" % v if v >= 100 else ("%.1f" % v if v >= 10 else "%.2f" % v)


def fmt_loss(loss):
    """0.0001 -> '1e-4', 2.5e-05 -> '2.5e-5', 0.01 -> '0.01'"""
    if loss == 0 or loss >= 0.01:
        return "%g" % loss
    m, e = ("%.3e" % loss).split("e")
    return "%se%d" % (m.rstrip("0").rstrip("."), int(e))
