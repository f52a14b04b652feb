#!/usr/bin/env python3
"""regress-bench/bench/manyfiles-table.py DIR: the table of a
manyfiles-grid.sh run (DIR/results.tsv) as markdown on stdout.

Per link, tree and direction, one row per tool: wall seconds against each
server (median of the runs), the ratio to tar over ssh against the same
server, client and server CPU seconds; stock scp on the big tree copies a
subset and its time is scaled by the number of files (est.).  Then the
goals: the 200-file tree within 2x of tar, the 10,000-file tree within
1.3x of tar and faster than rsync's first copy (openssh-lfn scp -r)."""

import collections
import os
import statistics
import sys

NAMES = {"tar": "tar \\| ssh tar", "rsync": "rsync -a -e ssh (first copy)",
         "lfn-scp": "openssh-lfn scp -r", "stock-scp": "stock scp -r",
         "lfn-sftp": "openssh-lfn sftp put/get -R",
         "alt-scp": "scp -r of ALT_TREE (machine.txt)"}


def name(t):
    if t.startswith("lfn-scp-x"):
        return "openssh-lfn scp -r -X connections=" + t[len("lfn-scp-x"):]
    return NAMES.get(t, t)


def fmt(s):
    return "%.2f" % s if s < 10 else "%.1f" % s


def main():
    d = sys.argv[1]
    rows = []
    with open(os.path.join(d, "results.tsv")) as f:
        head = f.readline().rstrip("\n").split("\t")
        for line in f:
            rows.append(dict(zip(head, line.rstrip("\n").split("\t"))))
    runs = collections.defaultdict(list)
    order, tools, servers, meta = [], [], [], {}
    for r in rows:
        k = (r["rtt"], r["tree"], r["dir"])
        if k not in order:
            order.append(k)
        if r["tool"] not in tools:
            tools.append(r["tool"])
        if r["server"] not in servers:
            servers.append(r["server"])
        runs[k + (r["server"], r["tool"])].append(r)
        if r["scale"] == "1" and r["tree"] not in meta:
            meta[r["tree"]] = (r["files"], r["bytes"])
    tools.sort(key=lambda t: list(NAMES).index(t) if t in NAMES else 99)

    def cell(k, s, t):
        rs = runs.get(k + (s, t), [])
        good = [r for r in rs if r["ok"] == "ok"]
        if not rs:
            return None
        if not good:
            return {"wall": None, "failed": True}
        scale = float(good[0]["scale"])
        return {"wall": statistics.median(float(r["wall"]) * scale for r in good),
                "meas": statistics.median(float(r["wall"]) for r in good),
                "ccpu": statistics.median(float(r["client_cpu"]) for r in good),
                "scpu": statistics.median(float(r["server_cpu"]) for r in good),
                "est": scale != 1, "n": len(good), "files": good[0]["files"], "failed": len(good) < len(rs)}

    out = ["# Many files over a long fat network: scp -r, sftp -R, tar | ssh tar, rsync", ""]
    for tree, (n, b) in sorted(meta.items(), key=lambda x: x[0] != "small"):
        out.append("- tree `%s`: %s files, %s bytes (%.1f MB)" % (tree, n, b, int(b) / 1e6))
    out += ["",
            "Wall seconds (median of the runs; every copy compared with its source), `×tar` = "
            "wall / tar-over-ssh's against the same server; CPU s = client / server "
            "(server: what the sshd listener reaped).  est. = stock scp copied a systematic "
            "subset of the big tree (every Nth file) and its time is scaled by the number of files.", ""]
    hdr = "| link | tree | dir | tool |"
    sep = "|---|---|---|---|"
    for s in servers:
        hdr += " %s sshd s | ×tar | CPU s |" % s
        sep += "---|---|---|"
    out += [hdr, sep]
    goals = []
    for k in order:
        rtt, tree, dr = k
        tar = {s: (cell(k, s, "tar") or {}).get("wall") for s in servers}
        for t in tools:
            line = "| 1 Gbit/s × %s ms | %s | %s | %s |" % (rtt, tree, dr, name(t))
            for s in servers:
                c = cell(k, s, t)
                if c is None:
                    line += " – | – | – |"
                elif c["wall"] is None:
                    line += " FAILED | – | – |"
                else:
                    w = fmt(c["wall"]) + (" est. (%s files: %s)" % (c["files"], fmt(c["meas"])) if c["est"] else "")
                    if c["failed"]:
                        w += " (a run failed)"
                    ratio = "%.2f" % (c["wall"] / tar[s]) if tar[s] else "–"
                    line += " %s | %s | %.1f / %.1f |" % (w, ratio, c["ccpu"], c["scpu"])
            out.append(line)
        for s in servers:
            c, r = cell(k, s, "lfn-scp"), cell(k, s, "rsync")
            if not c or c["wall"] is None or not tar[s]:
                continue
            ratio = c["wall"] / tar[s]
            if tree == "small":
                g = "%s: %.2f× tar (goal ≤ 2): %s" % ("within 2x of tar", ratio, "met" if ratio <= 2 else "MISSED")
            else:
                g = "%.2f× tar (goal ≤ 1.3): %s" % (ratio, "met" if ratio <= 1.3 else "MISSED")
                if r and r["wall"]:
                    q = c["wall"] / r["wall"]
                    g += "; %.2f× rsync (goal < 1): %s" % (q, "met" if q < 1 else
                                                         "MISSED (a tie: within 2 %)" if q <= 1.02 else "MISSED")
            goals.append("- %s ms, %s tree, %s, %s sshd: openssh-lfn scp -r %s" % (rtt, tree, dr, s, g))
    out += ["", "## Goals (openssh-lfn scp -r)", ""] + goals
    try:
        with open(os.path.join(d, "machine.txt")) as f:
            out += ["", "## Machine", "", "```", f.read().rstrip(), "```"]
    except OSError:
        pass
    print("\n".join(out))


if __name__ == "__main__":
    main()
