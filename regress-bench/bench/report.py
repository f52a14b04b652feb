#!/usr/bin/env python3
"""regress-bench/bench/report.py -- turn a bench results directory into
table.md (markdown) and plots/*.png.

    python3 regress-bench/bench/report.py build/bench/latest   # re-render

Input: results.jsonl (one row per run) and machine.json, as written by
bench.py.  Units: MB/s = 10^6 bytes per second; CPU s/GB = CPU seconds
(user + system) per 10^9 bytes.
"""

import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import fmt_loss, fmt_mbs as fmt, tool_conns  # noqa: E402

MIB = 1 << 20
WINDOW = 2 * MIB
TOOL_ORDER = ["ssh-up", "ssh-down", "scp-up", "scp-down", "scp-O-up",
              "sftp-put", "sftp-get", "rsync-up"]
CIPHER_ORDER = ["default", "aes128-gcm", "chacha20", "none"]


def label(r):
    """A row's link label: the link spec (RATE/RTT[/LOSS]) and the TCP
    congestion control it was measured with, e.g. '1gbit/100/1e-4 cubic'."""
    return r["link"] + (" " + r["cc"] if r.get("cc") else "")


def split_label(lab):
    """'1gbit/100/1e-4 cubic' -> ('1gbit/100/1e-4', 'cubic')"""
    spec, _, cc = lab.partition(" ")
    return spec, cc


def link_parts(lab):
    """(rate, rtt ms, loss, cc) of a label; loopback: (None, 0, 0, cc)."""
    spec, cc = split_label(lab)
    if spec == "loopback":
        return None, 0.0, 0.0, cc
    f = spec.split("/")
    return f[0], float(f[1].rstrip("ms")), float(f[2]) if len(f) > 2 else 0.0, cc


def link_key(lab):
    rate, rtt, loss, cc = link_parts(lab)
    if rate is None:
        return (0, 0, "", 0, cc)
    return (1, rtt, rate, loss, cc)


def tool_key(tool):
    base, n = tool_conns(tool)
    return (TOOL_ORDER.index(base) if base in TOOL_ORDER else 99, n)


def fmt_ratio(v):
    return "–" if v is None else "%.2f" % v


def aggregate(rows):
    """{(link, tool, cipher, comp, tree): stats} over valid measured runs."""
    groups = {}
    for r in rows:
        if r.get("kind") != "ssh" or r.get("run", -1) < 0 or not r.get("valid"):
            continue
        k = (label(r), r["tool"], r["cipher"], bool(r["compression"]), r["tree"])
        groups.setdefault(k, []).append(r)
    out = {}
    for k, rs in groups.items():
        net = [r["size"] / max(r["wall"] - r["setup_s"], 1e-3) / 1e6 for r in rs]
        wall = [r["size"] / r["wall"] / 1e6 for r in rs]
        gb = [r["size"] / 1e9 for r in rs]
        out[k] = dict(
            n=len(rs), size=rs[0]["size"],
            mbs=statistics.median(net), mbs_min=min(net), mbs_max=max(net),
            mbs_wall=statistics.median(wall),
            secs=statistics.median([r["wall"] for r in rs]),
            setup=rs[0]["setup_s"],
            cpu_c=statistics.median([r["cpu_client"] / g for r, g in zip(rs, gb)]),
            cpu_s=statistics.median([r["cpu_server"] / g for r, g in zip(rs, gb)]),
            rtt=rs[0]["rtt_ms"], rate=rs[0]["rate"], dir=rs[0]["dir"])
    return out


def tcp_by_link(rows, what="mbs"):
    """{(label, dir, streams): median MB/s (or retransmits)} of the raw TCP rows."""
    t = {}
    for r in rows:
        if r.get("kind") == "tcp" and r.get(what) is not None:
            t.setdefault((label(r), r["dir"], r.get("streams", 1)), []).append(r[what])
    return {k: statistics.median(v) for k, v in t.items()}


def window_ceiling(lab):
    rate, rtt, _, _ = link_parts(lab)
    return WINDOW / (rtt / 1e3) / 1e6 if rate and rtt > 0 else None


def cell(st):
    if not st:
        return "–"
    return "%s (%s–%s)" % (fmt(st["mbs"]), fmt(st["mbs_min"]), fmt(st["mbs_max"]))


def point_key(k):
    """Sort order of a (link, tool, cipher, compression) point in the tables."""
    return (link_key(k[0]), tool_key(k[1]), k[3],
            CIPHER_ORDER.index(k[2]) if k[2] in CIPHER_ORDER else 9)


def table(agg, tcp):
    lines = ["| link | cc | tool | cipher | stock MB/s med (min–max) | lfn MB/s med (min–max) | lfn/stock "
             "| raw TCP MB/s | lfn/TCP | stock window ceiling (2 MiB/RTT) | stock/ceiling "
             "| CPU s/GB stock client/server | CPU s/GB lfn client/server | s/run stock/lfn |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    keys = sorted({k[:4] for k in agg},
                  key=point_key)
    notes = set()
    for k in keys:
        link, tool, cipher, comp = k
        conns = tool_conns(tool)[1]
        s = agg.get(k + ("stock",))
        l = agg.get(k + ("lfn",))
        cname = cipher + (" +C" if comp else "")
        ratio = None
        if l and s:
            ratio = l["mbs"] / s["mbs"]
        elif l and cipher == "none":
            s0 = agg.get((link, tool, "aes128-gcm", comp, "stock")) or \
                agg.get((link, tool, "default", comp, "stock"))
            if s0:
                ratio = l["mbs"] / s0["mbs"]
                cname += " †"
                notes.add("† none: lfn/stock is against stock's aes128-gcm (or default) cipher "
                          "on the same tool and link; stock has no none cipher.")
        direction = (l or s)["dir"]
        t = tcp.get((link, direction, 1))
        tname = fmt(t)
        if conns > 1 and tcp.get((link, direction, conns)):
            # N connections against N TCP streams
            t = tcp[(link, direction, conns)]
            tname = "%s ×%d" % (fmt(t), conns)
            notes.add("×N: a TOOL-xN row (one transfer over N connections, lfn only) is compared "
                      "with N raw TCP streams (the raw TCP reference with N streams).")
        wc = window_ceiling(link)
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            split_label(link)[0], split_label(link)[1] or "–", tool, cname, cell(s), cell(l),
            fmt_ratio(ratio), tname,
            fmt_ratio(l["mbs"] / t if l and t else None), fmt(wc),
            fmt_ratio(s["mbs"] / wc if s and wc else None),
            "%s / %s" % (fmt(s["cpu_c"]), fmt(s["cpu_s"])) if s else "–",
            "%s / %s" % (fmt(l["cpu_c"]), fmt(l["cpu_s"])) if l else "–",
            "%s / %s" % ("%.1f" % s["secs"] if s else "–", "%.1f" % l["secs"] if l else "–")))
    return lines, sorted(notes)


def hpn_table(agg, tcp):
    """stock, openssh-lfn and HPN-SSH side by side, when the run had HPN-SSH."""
    keys = sorted({k[:4] for k in agg if k[4] == "hpn"},
                  key=point_key)
    if not keys:
        return []
    lines = ["| link | cc | tool | cipher | stock MB/s | lfn MB/s | HPN-SSH MB/s | lfn/HPN | raw TCP MB/s "
             "| CPU s/GB client/server stock · lfn · HPN |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for k in keys:
        link, tool, cipher, comp = k
        s, l, h = (agg.get(k + (t,)) for t in ("stock", "lfn", "hpn"))
        t = tcp.get((link, (l or h)["dir"], 1))
        cpu = " · ".join("%s / %s" % (fmt(x["cpu_c"]), fmt(x["cpu_s"])) if x else "–" for x in (s, l, h))
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            split_label(link)[0], split_label(link)[1] or "–", tool, cipher + (" +C" if comp else ""),
            cell(s), cell(l), cell(h), fmt_ratio(l["mbs"] / h["mbs"] if l and h else None),
            fmt(t), cpu))
    return lines


def sftp_table(rows, agg):
    """scp and sftp against ssh in the same direction, per link and tree:
    the difference split into the tool's own fixed cost (a 10 kB transfer,
    kind "fixed", beyond ssh's) and the data phase (MB/s net of each tool's
    own fixed cost)."""
    fixed = {(label(r), r["tool"], r["cipher"], bool(r["compression"]), r["tree"]): r["seconds"]
             for r in rows if r.get("kind") == "fixed" and r.get("seconds")}
    walls = {}
    for r in rows:
        if r.get("kind") == "ssh" and r.get("run", -1) >= 0 and r.get("valid"):
            k = (label(r), r["tool"], r["cipher"], bool(r["compression"]), r["tree"])
            walls.setdefault(k, []).append((r["size"], r["wall"]))

    def phase(k):
        f = fixed.get(k)
        if f is None or k not in walls:
            return None
        return statistics.median(sz / max(w - f, 1e-3) / 1e6 for sz, w in walls[k])

    lines = []
    for k in sorted(agg, key=lambda k: (point_key(k[:4]), k[4])):
        link, tool, cipher, comp, tree = k
        if tool_conns(tool)[1] != 1 or not tool.startswith(("scp", "sftp")):
            continue
        ref = (link, "ssh-" + agg[k]["dir"], cipher, comp, tree)
        if ref not in agg:
            continue
        rtt = agg[k]["rtt"]
        extra = fixed[k] - fixed[ref] if k in fixed and ref in fixed else None
        pt, pr = phase(k), phase(ref)
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            split_label(link)[0], split_label(link)[1] or "–", tree, tool, cipher + (" +C" if comp else ""),
            fmt(agg[ref]["mbs"]), fmt(agg[k]["mbs"]), fmt_ratio(agg[k]["mbs"] / agg[ref]["mbs"]),
            "–" if extra is None else "%.0f ms%s" % (extra * 1e3, " (%.1f RTT)" % (extra * 1e3 / rtt)
                                                       if rtt else ""),
            "–" if pt is None or pr is None else "%s / %s" % (fmt(pr), fmt(pt)),
            fmt_ratio(pt / pr if pt and pr else None)))
    if not lines:
        return []
    return ["| link | cc | tree | tool | cipher | ssh MB/s | tool MB/s | tool/ssh | fixed cost beyond ssh's "
            "| data phase MB/s ssh / tool | data phase tool/ssh |",
            "|---|---|---|---|---|---|---|---|---|---|---|"] + lines


def ceiling_note(agg):
    """stock's numbers against the window / RTT arithmetic."""
    out = []
    by_link = {}
    for k, st in agg.items():
        link, tool, cipher, comp, tree = k
        if tree != "stock" or not link_parts(link)[0] or comp:
            continue
        by_link.setdefault(link, []).append((tool, cipher, st))
    for link in sorted(by_link, key=link_key):
        wc = window_ceiling(link)
        parts = ["%s%s %s (%.2f)" % (tool, "" if c == "default" else "/" + c, fmt(st["mbs"]), st["mbs"] / wc)
                 for tool, c, st in sorted(by_link[link], key=lambda x: (tool_key(x[0]), x[1]))]
        out.append("- %s: 2 MiB / %g ms = %s MB/s; stock measured (MB/s, fraction of that ceiling): %s."
                   % (link, link_parts(link)[1], fmt(wc), ", ".join(parts)))
    return out


def tcp_table(tcp, retrans):
    """Raw TCP per link, cc and direction: one stream and N streams."""
    streams = sorted({k[2] for k in tcp})
    if not tcp:
        return []
    lines = ["| link | cc | dir | %s | retransmitted segments (%s) |" % (
        " | ".join("TCP×%d MB/s" % n for n in streams) + "".join(" | TCP×%d/×1" % n for n in streams[1:]),
        ", ".join("×%d" % n for n in streams)),
        "|---|---|---|" + "---|" * (2 * len(streams))]
    for link, d in sorted({k[:2] for k in tcp}, key=lambda x: (link_key(x[0]), x[1] != "up")):
        one = tcp.get((link, d, 1))
        lines.append("| %s | %s | %s | %s | %s |" % (
            split_label(link)[0], split_label(link)[1] or "–", d,
            " | ".join(fmt(tcp.get((link, d, n))) for n in streams) +
            "".join(" | " + fmt_ratio(tcp[(link, d, n)] / one if one and tcp.get((link, d, n)) else None)
                    for n in streams[1:]),
            " / ".join("%.0f" % retrans[(link, d, n)] if (link, d, n) in retrans else "–" for n in streams)))
    return lines


def conns_table(agg, tcp):
    """For one link and cc: lfn over one connection vs N connections vs one
    TCP stream vs N streams (default cipher, no compression)."""
    rows = {}
    for (link, tool, cipher, comp, tree), st in agg.items():
        if tree == "lfn" and cipher == "default" and not comp:
            base, n = tool_conns(tool)
            rows.setdefault((link, base), {})[n] = st
    lines = []
    for (link, base) in sorted(rows, key=lambda x: (link_key(x[0]), tool_key(x[1]))):
        by_n = rows[(link, base)]
        d = "down" if base.endswith(("-down", "-get")) else "up"
        ns = sorted({n for n in by_n if n > 1} | {k[2] for k in tcp if k[:2] == (link, d) and k[2] > 1})
        one, tcp1 = by_n.get(1), tcp.get((link, d, 1))
        for n in ns:
            xn, tcpn = by_n.get(n), tcp.get((link, d, n))
            mbs = lambda st: st["mbs"] if st else None
            ratio = lambda a, b: a / b if a and b else None
            lines.append("| %s | %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                split_label(link)[0], split_label(link)[1] or "–", base, n, cell(one), cell(xn),
                fmt_ratio(ratio(mbs(xn), mbs(one))), fmt(tcp1), fmt(tcpn),
                fmt_ratio(ratio(mbs(one), tcp1)), fmt_ratio(ratio(mbs(xn), tcpn)),
                fmt_ratio(ratio(tcpn, tcp1))))
    if not lines:
        return []
    return ["| link | cc | tool | N | lfn x1 MB/s | lfn xN MB/s | xN/x1 | TCP×1 MB/s | TCP×N MB/s "
            "| x1/TCP×1 | xN/TCP×N | TCP×N/×1 |", "|---|---|---|---|---|---|---|---|---|---|---|---|"] + lines


def machine_md(m):
    fl = m.get("cpu_flags", {})
    lines = [
        "- CPU: %s, %s CPUs (nproc %s)%s; flags: %s" % (
            m.get("Model name", "?"), m.get("CPU(s)", "?"), m.get("nproc"),
            ", hypervisor " + m["Hypervisor vendor"] if m.get("Hypervisor vendor") else "",
            " ".join("%s=%s" % (k, "yes" if v else "no") for k, v in fl.items())),
        "- kernel %s, %s; %s; python %s" % (m.get("kernel"), m.get("os"), m.get("openssl_cli"), m.get("python")),
        "- stock: `%s`; lfn: `%s`" % (m.get("ssh -V stock", "–"), m.get("ssh -V lfn", "–")),
        "- tarball: %s; upstream/pin: %s" % (
            ", ".join("%s sha256 %s" % (k, (v or ["?"])[0]) for k, v in m.get("tarball", {}).items()),
            " ".join(l for l in m.get("upstream/pin", "").splitlines() if l.strip() and not l.startswith("#"))),
        "- series: git describe `%s`; patches: %s" % (m.get("git describe"), ", ".join(m.get("patches", [])) or "none"),
        "- none cipher: stock %s, lfn %s" % (m.get("none cipher stock"), m.get("none cipher lfn")),
        "- sysctls (root namespace): %s" % "; ".join("%s=%s" % (k, v) for k, v in m.get("sysctl", {}).items()),
        "- load average at start / end: %s / %s (2 shared cores: other jobs run at the same time)" % (
            m.get("loadavg_start"), m.get("loadavg_end")),
    ] + (["- competing CPU load: %s" % m["cpu load"]] if m.get("cpu load") else []) + [
        "- profile %s, args `%s`, wall time %s s" % (m.get("profile"), " ".join(m.get("argv", [])),
                                                   m.get("wall_seconds")),
    ]
    for link, li in sorted(m.get("links", {}).items(), key=lambda x: link_key(x[0])):
        lines.append("- link %s: MTU %s; TCP buffers %s%s%s" % (link, li.get("mtu"), li.get("tcp buffers", "raised"), "".join(
            "; %s=%s" % (k, v) for k, v in li.items() if k.startswith("net.")),
            "; measured with congestion control %s" % ", ".join(
                "%s (%s)" % kv for kv in li["congestion control"].items())
            if li.get("congestion control") else ""))
    for miss in m.get("missing", []):
        lines.append("- MISSING: " + miss)
    return lines


def plots(outdir, agg, tcp):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.stderr.write("bench: matplotlib not available (apt-get install -y python3-matplotlib): "
                         "no plots\n")
        return []
    pdir = os.path.join(outdir, "plots")
    os.makedirs(pdir, exist_ok=True)
    made = []
    # 1. throughput vs RTT per tool, one figure per rate (and loss and
    # congestion control, when there are several): stock, lfn, TCP
    ccs = {link_parts(k[0])[3] for k in agg}
    groups = sorted({link_parts(k[0])[0::2] + (link_parts(k[0])[3],) for k in agg
                     if link_parts(k[0])[0]}, key=lambda g: (g[0], g[1], g[2]))
    for rate, loss, cc in groups:
        ingroup = lambda lab: link_parts(lab)[0::2] + (link_parts(lab)[3],) == (rate, loss, cc)
        tools = [t for t in TOOL_ORDER if any(k[1] == t and ingroup(k[0]) for k in agg)]
        if not tools:
            continue
        n = len(tools)
        cols = min(4, n)
        rows = (n + cols - 1) // cols
        fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 3.3 * rows), squeeze=False)
        for i, tool in enumerate(tools):
            ax = axes[i // cols][i % cols]
            links = sorted({k[0] for k in agg if ingroup(k[0]) and k[1] == tool}, key=link_key)
            rtts = [link_parts(l)[1] for l in links]
            for tree, style, colour in (("stock", "o-", "C0"), ("hpn", "D-", "C7"),
                                        ("lfn", "s-", "C1")):
                xs, ys, lo, hi = [], [], [], []
                for l, r in zip(links, rtts):
                    st = agg.get((l, tool, "default", False, tree))
                    if st:
                        xs.append(r)
                        ys.append(st["mbs"])
                        lo.append(st["mbs"] - st["mbs_min"])
                        hi.append(st["mbs_max"] - st["mbs"])
                if xs:
                    ax.errorbar(xs, ys, yerr=[lo, hi], fmt=style, capsize=3, label=tree,
                                color=colour)
            d = "down" if tool.endswith(("-down", "-get")) else "up"
            tx = [(r, tcp[(l, d, 1)]) for l, r in zip(links, rtts) if (l, d, 1) in tcp]
            if tx:
                ax.plot([x for x, _ in tx], [y for _, y in tx], "k^--", label="raw TCP")
            if rtts:
                import numpy
                xr = numpy.linspace(max(min(rtts) * 0.5, 5), max(rtts) * 1.1, 50)
                ax.set_xlim(0, max(rtts) * 1.15)
                ax.plot(xr, WINDOW / (xr / 1e3) / 1e6, ":", color="grey", label="2 MiB/RTT")
            ax.set_title("%s @ %s" % (tool, rate))
            ax.set_xlabel("RTT (ms)")
            ax.set_ylabel("MB/s")
            ax.set_ylim(bottom=0)
            ax.grid(alpha=0.3)
            if i == 0:
                ax.legend(fontsize=8)
        for j in range(n, rows * cols):
            axes[j // cols][j % cols].axis("off")
        what = rate + (", loss %s" % fmt_loss(loss) if loss else "") + (", " + cc if cc else "")
        fig.suptitle("throughput vs RTT, %s link (default cipher; median, min-max bars)" % what, fontsize=9)
        fig.tight_layout()
        f = os.path.join(pdir, "throughput-vs-rtt-%s%s%s.png" % (
            rate, "-loss" + fmt_loss(loss) if loss else "", "-" + cc if len(ccs) > 1 else ""))
        fig.savefig(f, dpi=90)
        plt.close(fig)
        made.append(f)
    # 1a. throughput per emulated link (rate x RTT), per tool: stock,
    # HPN-SSH (when built), openssh-lfn and raw TCP side by side; for runs
    # with a few links, where throughput vs RTT has one point per curve
    f = link_bars(plt, pdir, agg, tcp)
    if f:
        made.append(f)
    # 1b. throughput vs loss, per rate and RTT with more than one loss:
    # lfn and stock per congestion control, raw TCP one and N streams
    for rate, rtt in sorted({link_parts(k[0])[:2] for k in agg if link_parts(k[0])[0]}):
        labs = [k[0] for k in agg if link_parts(k[0])[:2] == (rate, rtt)]
        losses = sorted({link_parts(l)[2] for l in labs})
        if len(losses) < 2:
            continue
        tools = sorted({k[1] for k in agg if k[0] in labs and k[2] == "default" and not k[3]}, key=tool_key)
        n = len(tools)
        cols = min(3, n)
        rows = (n + cols - 1) // cols
        fig, axes = plt.subplots(rows, cols, figsize=(5 * cols, 3.6 * rows), squeeze=False)
        for i, tool in enumerate(tools):
            ax = axes[i // cols][i % cols]
            d = "down" if tool.endswith(("-down", "-get")) else "up"
            conns = tool_conns(tool)[1]
            for cc in sorted({link_parts(l)[3] for l in labs}):
                bylos = sorted({(link_parts(l)[2], l) for l in labs if link_parts(l)[3] == cc})
                for tree, style in (("stock", "o-"), ("lfn", "s-")):
                    pts = [(x, agg[(l, tool, "default", False, tree)]["mbs"]) for x, l in bylos
                           if (l, tool, "default", False, tree) in agg]
                    if pts:
                        ax.plot([x for x, _ in pts], [y for _, y in pts], style,
                                label="%s %s" % (tree, cc or ""))
                for nst, style in ((1, "^--"), (conns, "v:")) if conns > 1 else ((1, "^--"),):
                    pts = [(x, tcp[(l, d, nst)]) for x, l in bylos if (l, d, nst) in tcp]
                    if pts:
                        ax.plot([x for x, _ in pts], [y for _, y in pts], style,
                                label="TCP×%d %s" % (nst, cc or ""))
            ax.set_xscale("symlog", linthresh=min(x for x in losses if x > 0) / 2)
            ax.set_title("%s @ %s/%g ms" % (tool, rate, rtt))
            ax.set_xlabel("random loss per packet")
            ax.set_ylabel("MB/s")
            ax.set_ylim(bottom=0)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7)
        for j in range(n, rows * cols):
            axes[j // cols][j % cols].axis("off")
        fig.suptitle("throughput vs loss, %s x %g ms (default cipher, median)" % (rate, rtt), fontsize=9)
        fig.tight_layout()
        f = os.path.join(pdir, "throughput-vs-loss-%s-%gms.png" % (rate, rtt))
        fig.savefig(f, dpi=90)
        plt.close(fig)
        made.append(f)
    # 2. CPU s/GB per cipher (client and server, stock and lfn), per link/tool with >1 cipher
    combos = sorted({(k[0], k[1]) for k in agg if k[2] != "default" and not k[3]},
                    key=lambda x: (link_key(x[0]), TOOL_ORDER.index(x[1]) if x[1] in TOOL_ORDER else 99))
    if combos:
        n = len(combos)
        cols = min(3, n)
        rows = (n + cols - 1) // cols
        fig, axes = plt.subplots(rows, cols, figsize=(5 * cols, 3.5 * rows), squeeze=False)
        for i, (link, tool) in enumerate(combos):
            ax = axes[i // cols][i % cols]
            ciphers = [c for c in CIPHER_ORDER if any((link, tool, c, False, t) in agg for t in ("stock", "lfn"))]
            width = 0.2
            series = [("stock", "cpu_c", "stock client"), ("stock", "cpu_s", "stock server"),
                      ("lfn", "cpu_c", "lfn client"), ("lfn", "cpu_s", "lfn server")]
            for j, (tree, key, lab) in enumerate(series):
                xs = [ci + (j - 1.5) * width for ci in range(len(ciphers))]
                ys = [(agg.get((link, tool, c, False, tree)) or {}).get(key, 0) for c in ciphers]
                ax.bar(xs, ys, width, label=lab)
            ax.set_xticks(range(len(ciphers)))
            ax.set_xticklabels(ciphers)
            ax.set_ylabel("CPU s/GB")
            ax.set_title("%s %s" % (tool, link))
            ax.grid(axis="y", alpha=0.3)
            if i == 0:
                ax.legend(fontsize=8)
        for j in range(n, rows * cols):
            axes[j // cols][j % cols].axis("off")
        fig.suptitle("CPU s/GB by cipher\n(client and server process trees, see table.md)", fontsize=9)
        fig.tight_layout()
        f = os.path.join(pdir, "cpu-per-cipher.png")
        fig.savefig(f, dpi=90)
        plt.close(fig)
        made.append(f)
    # 3. loopback: every tool, stock vs lfn vs TCP
    lb = sorted({k[0] for k in agg if not link_parts(k[0])[0]})
    lb = lb[0] if lb else "loopback"
    lt = [t for t in TOOL_ORDER if (lb, t, "default", False, "stock") in agg or
          (lb, t, "default", False, "lfn") in agg]
    if lt:
        fig, ax = plt.subplots(figsize=(9, 3.5))
        width = 0.38
        for j, tree in enumerate(("stock", "lfn")):
            ys = [(agg.get((lb, t, "default", False, tree)) or {}).get("mbs", 0) for t in lt]
            ax.bar([i + (j - 0.5) * width for i in range(len(lt))], ys, width, label=tree)
        ax.set_xticks(range(len(lt)))
        ax.set_xticklabels(lt, fontsize=8)
        ax.set_ylabel("MB/s")
        ax.set_title("loopback (CPU-bound), default cipher; raw TCP up %s MB/s" % fmt(tcp.get((lb, "up", 1))))
        ax.legend(fontsize=8)
        ax.grid(axis="y", alpha=0.3)
        fig.tight_layout()
        f = os.path.join(pdir, "loopback.png")
        fig.savefig(f, dpi=90)
        plt.close(fig)
        made.append(f)
    return made


RATE_NAMES = {"gbit": "Gbit/s", "mbit": "Mbit/s", "kbit": "kbit/s"}
LINK_BARS_MAX = 6      # more links than this: throughput-vs-rtt-*.png only
TREE_SERIES = (("stock", "stock OpenSSH", "#4c72b0"), ("hpn", "HPN-SSH", "#8c8c8c"),
               ("lfn", "openssh-lfn", "#dd8452"))


def link_name(lab, with_cc=False):
    """'2gbit/100/1e-4 bbr' -> '2 Gbit/s × 100 ms\nloss 1e-4' (for plot axes)."""
    rate, rtt, loss, cc = link_parts(lab)
    if rate is None:
        return "loopback"
    num = rate.rstrip("abcdefghijklmnopqrstuvwxyz")
    unit = RATE_NAMES.get(rate[len(num):], rate[len(num):])
    s = "%s %s × %g ms" % (num, unit, rtt)
    if loss:
        s += "\nloss %s" % fmt_loss(loss)
    if with_cc and cc:
        s += "\n" + cc
    return s


def link_bars(plt, pdir, agg, tcp):
    """plots/throughput-per-link.png: one panel per tool (default cipher,
    no compression), a group of bars per emulated link: each tree's median
    MB/s with min-max bars, and raw TCP (one stream, same direction)."""
    links = sorted({k[0] for k in agg if link_parts(k[0])[0] and k[2] == "default" and not k[3]},
                   key=link_key)
    if not links or len(links) > LINK_BARS_MAX:
        return None
    tools = [t for t in TOOL_ORDER
             if any((l, t, "default", False, tr) in agg for l in links for tr, _, _ in TREE_SERIES)]
    if not tools:
        return None
    trees = [s for s in TREE_SERIES if any(k[4] == s[0] and k[0] in links for k in agg)]
    with_cc = len({link_parts(l)[3] for l in links}) > 1
    nbars = len(trees) + 1
    width = 0.8 / nbars
    fig, axes = plt.subplots(1, len(tools), figsize=(max(4.2 * len(tools), 6), 4.2),
                             squeeze=False, sharey=True)
    for i, tool in enumerate(tools):
        ax = axes[0][i]
        d = "down" if tool.endswith(("-down", "-get")) else "up"
        for j, (tree, name, colour) in enumerate(trees):
            xs, ys, lo, hi = [], [], [], []
            for x, l in enumerate(links):
                st = agg.get((l, tool, "default", False, tree))
                if st:
                    xs.append(x + (j - (nbars - 1) / 2) * width)
                    ys.append(st["mbs"])
                    lo.append(st["mbs"] - st["mbs_min"])
                    hi.append(st["mbs_max"] - st["mbs"])
            if xs:
                bars = ax.bar(xs, ys, width, yerr=[lo, hi], capsize=2, color=colour,
                              label=name)
                if hasattr(ax, "bar_label"):     # matplotlib >= 3.4
                    ax.bar_label(bars, fmt="%.0f", fontsize=7, padding=1)
        pts = [(x + (nbars - 1) / 2 * width, tcp[(l, d, 1)]) for x, l in enumerate(links)
               if (l, d, 1) in tcp]
        if pts:
            bars = ax.bar([x for x, _ in pts], [y for _, y in pts], width, color="white",
                          edgecolor="black", hatch="//", label="raw TCP (1 stream)")
            if hasattr(ax, "bar_label"):     # matplotlib >= 3.4
                ax.bar_label(bars, fmt="%.0f", fontsize=7, padding=1)
        ax.set_xticks(range(len(links)))
        ax.set_xticklabels([link_name(l, with_cc) for l in links], fontsize=8)
        ax.set_title(tool, fontsize=10)
        ax.set_xlabel("emulated link (rate × RTT)", fontsize=8)
        if i == 0:
            ax.set_ylabel("MB/s (median, min–max bars)")
        ax.grid(axis="y", alpha=0.3)
        ax.set_axisbelow(True)
    handles, names = axes[0][0].get_legend_handles_labels()
    fig.suptitle("throughput per link, default cipher of each tree (MB/s net of setup)",
                 fontsize=10, y=0.99)
    fig.legend(handles, names, loc="upper center", ncol=len(names), fontsize=9,
               frameon=False, bbox_to_anchor=(0.5, 0.95))
    fig.tight_layout(rect=(0, 0, 1, 0.92))
    f = os.path.join(pdir, "throughput-per-link.png")
    fig.savefig(f, dpi=100)
    plt.close(fig)
    return f


def write_all(outdir, rows, machine, plots_on=True, plots=None):
    if plots is not None:
        plots_on = plots
    agg = aggregate(rows)
    tcp = tcp_by_link(rows)
    tl, notes = table(agg, tcp)
    made = globals()["plots"](outdir, agg, tcp) if plots_on else []
    # which raw TCP reference the rows hold: iperf3 -t, or tcpbytes.py
    # moving the same file (--tcp-bytes)
    same_bytes = any(r.get("kind") == "tcp" and str(r.get("tool", "")).startswith("tcpbytes")
                     for r in rows)
    tcp_what = ("tcpbytes.py moving the same file (--tcp-bytes; N streams take 1 MiB chunks "
                "from a shared counter)" if same_bytes else "iperf3 -t")
    md = ["# openssh-lfn bench: %s profile" % machine.get("profile", "?"), ""]
    md += ["MB/s = 10^6 bytes/s of payload, median of the measured runs (min–max), computed "
           "net of connection setup: size / (wall time − setup), where setup is the median "
           "time of `ssh host true` for that build, link and options (wall-clock MB/s is in "
           "results.jsonl). CPU s/GB = user+system CPU seconds per 10^9 bytes: client = the "
           "client command and all its children (getrusage of the waited-for process tree: "
           "scp/sftp/rsync plus the ssh they spawn); server = everything the per-build sshd "
           "listener reaped for the connection (cutime+cstime delta of its /proc stat: "
           "sshd-session, sshd-auth, the post-auth child and the remote command — cat, "
           "sftp-server, scp -t or rsync --server). Raw TCP = " + tcp_what + ", one stream, same link, "
           "congestion control (cc) and direction. A link is RATE/RTT ms[/random loss per wire "
           "packet, both directions]. The machine is shared (2 cores, other builds running): "
           "expect noise.", ""]
    md += tl
    md += [""] + notes
    ht = hpn_table(agg, tcp)
    if ht:
        md += ["", "## against HPN-SSH", "",
               "HPN-SSH built by regress-bench/bench/build-hpn (%s), each tree's own sshd on the "
               "same link; \"default\" is each tree's default cipher." % machine.get("ssh -V hpn", "?"),
               ""] + ht
    st = sftp_table(rows, agg)
    if st:
        md += ["", "## scp and sftp against ssh", "",
               "ssh = `ssh host cat` in the same direction on the same link and tree; MB/s as "
               "above (net of `ssh true`).  Fixed cost beyond ssh's = the tool's median time "
               "for a 10 kB file minus ssh's (the SFTP session's own round trips); data phase "
               "= size / (wall − that tool's own 10 kB time), median of the runs.", ""] + st
    ct = conns_table(agg, tcp)
    if ct:
        md += ["", "## one vs N connections, one vs N TCP streams", "",
               "openssh-lfn, default cipher: x1 = the tool over one connection, xN = the same "
               "transfer over N (`-X connections=N`, TOOL-xN), of the same size as x1's runs "
               "(since 2026-11-25); TCP×N = N streams of " + tcp_what + " "
               "on the same link, cc and direction.", ""] + ct
    tt = tcp_table(tcp, tcp_by_link(rows, "retransmits"))
    if tt:
        md += ["", "## raw TCP", "", tcp_what + ", the sum over the streams; the sender's "
               "retransmitted segments (median of the runs).", ""] + tt
    cn = ceiling_note(agg)
    if cn:
        md += ["", "## stock against its window ceiling (2 MiB / RTT)", ""] + cn
    md += ["", "## machine", ""] + machine_md(machine)
    if made:
        md += ["", "## plots", ""] + ["![%s](plots/%s)" % (os.path.basename(f), os.path.basename(f))
                                      for f in made]
    with open(os.path.join(outdir, "table.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    return os.path.join(outdir, "table.md")


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else "build/bench/latest"
    rows = [json.loads(l) for l in open(os.path.join(d, "results.jsonl")) if l.strip()]
    machine = json.load(open(os.path.join(d, "machine.json")))
    print(write_all(d, rows, machine, plots=("--no-plots" not in sys.argv)))


if __name__ == "__main__":
    main()
