#!/usr/bin/env python3
"""fuzz/make_corpus.py LAYOUT DUMP OUTDIR -- the loader fuzzer's corpus.

From one real dump (DUMP, written by a server at a clean shutdown, loaded as
the drop-in, so that its header names contrib's file written beside it) and
the format's layout (LAYOUT: fuzz/loader_layout.c's output, whose format
number N names the files), writes into OUTDIR the dump itself and variants
of it, each with its entry count and CRC made right:

  vN-real.stat          the dump as written: every statement of the workload
  vN-no-contrib.stat    its first 20 entries, naming no contrib file (size
                        and CRC 0), as a server without the drop-in writes it
  vN-empty.stat         no entries
  vN-no-texts.stat      20 entries without text (text_len -1)
  vN-empty-texts.stat   20 entries with an empty text (text_len 0)
  vN-max-hist.stat      8 entries with every histogram group
  vN-long-text.stat     one entry with a 100 kB text (across the loader's
                        64 kB read chunks)

Files of an older format (vK-*.stat, K < N) are kept, renamed old-vK-*.stat:
the loader refuses them at the header, and the fuzzer mutates them too.
From format 6 the failures by SQLSTATE follow the entries; every file keeps
the real dump's (they are keyed, not tied to an entry's place).  From format
7 the plan rows follow them (the real dump's in every file), and three more
files vary them:

  vN-plans-no-texts.stat    every plan row of a plan without its text
  vN-plans-long-text.stat   a plan text of 60 kB (across the 64 kB chunks)
  vN-no-plans.stat          no plan row
"""

import os
import re
import struct
import sys

CRC32C_POLY = 0x82F63B78
_table = []
for i in range(256):
    c = i
    for _ in range(8):
        c = (c >> 1) ^ CRC32C_POLY if c & 1 else c >> 1
    _table.append(c)


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = _table[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def main():
    layout = dict(line.split() for line in open(sys.argv[1]) if line.strip())
    L = {k: int(v) for k, v in layout.items()}
    raw = open(sys.argv[2], "rb").read()
    out = sys.argv[3]
    body = raw[:-4]
    assert struct.unpack("<I", raw[-4:])[0] == crc32c(body), "the dump's CRC is wrong"
    hdr = bytearray(body[:L["header_size"]])
    assert struct.unpack_from("<I", hdr, L["header_format"])[0] == L["format"], \
        "the dump is of another format than the layout"
    n = struct.unpack_from("<Q", hdr, L["header_nentries"])[0]
    entries = []
    pos = L["header_size"]
    for _ in range(n):
        fixed = bytearray(body[pos:pos + L["entry_size"]])
        pos += L["entry_size"]
        mask = struct.unpack_from("<I", fixed, L["entry_hist_mask"])[0]
        glen = bin(mask).count("1") * L["group_bytes"]
        groups = body[pos:pos + glen]
        pos += glen
        tlen = struct.unpack_from("<i", fixed, L["entry_text_len"])[0]
        text = body[pos:pos + max(tlen, 0)]
        pos += max(tlen, 0)
        entries.append([fixed, groups, text])
    # format 6: the failures by SQLSTATE follow the entries, kept as they are
    tail = body[pos:]
    assert L["format"] >= 6 or not tail, "the dump has bytes after its entries"
    # format 7: the plan rows follow the failures, each with its text
    plans_head, plans = b"", []
    if L["format"] >= 7:
        nerr = struct.unpack_from("<Q", body, pos + L["errors_head_nerrors"])[0]
        ppos = pos + L["errors_head_size"] + nerr * L["errors_size"]
        errors = body[pos:ppos]
        plans_head = bytearray(body[ppos:ppos + L["plans_head_size"]])
        np_ = struct.unpack_from("<Q", plans_head, L["plans_head_nplans"])[0]
        ppos += L["plans_head_size"]
        for _ in range(np_):
            fixed = bytearray(body[ppos:ppos + L["plan_size"]])
            ppos += L["plan_size"]
            tlen = struct.unpack_from("<i", fixed, L["plan_text_len"])[0]
            plans.append([fixed, body[ppos:ppos + max(tlen, 0)]])
            ppos += max(tlen, 0)
        assert ppos == len(body), "the plan rows do not end at the trailer"
        assert any(t for _, t in plans), "the dump has no plan text"
        assert any(struct.unpack_from("<Q", f, L["plan_planid"])[0] == 0 for f, _ in plans), \
            "the dump has no \"other\" plan row"
        tail = errors

    def plan_tail(rows):
        h = bytearray(plans_head)
        if h:
            struct.pack_into("<Q", h, L["plans_head_nplans"], len(rows))
        return bytes(h) + b"".join(bytes(f) + t for f, t in rows)

    def plan_with_text(r, text):
        f = bytearray(r[0])
        struct.pack_into("<i", f, L["plan_text_len"], -1 if text is None else len(text))
        return [f, text or b""]

    fmt = L["format"]
    for name in sorted(os.listdir(out)):
        m = re.match(r"v(\d+)(-.*)?\.stat$", name)
        if m and int(m.group(1)) != fmt:
            os.rename("%s/%s" % (out, name), "%s/old-%s" % (out, name))
        elif m:
            os.remove("%s/%s" % (out, name))

    def write(name, header, ents, prows=None):
        h = bytearray(header)
        struct.pack_into("<Q", h, L["header_nentries"], len(ents))
        b = bytes(h) + b"".join(bytes(f) + g + (t or b"") for f, g, t in ents)
        b += tail + plan_tail(plans if prows is None else prows)
        with open("%s/v%d-%s.stat" % (out, fmt, name), "wb") as fh:
            fh.write(b + struct.pack("<I", crc32c(b)))

    def with_text(e, text):
        f = bytearray(e[0])
        struct.pack_into("<i", f, L["entry_text_len"], -1 if text is None else len(text))
        return [f, e[1], text]

    def with_all_groups(e):
        f = bytearray(e[0])
        struct.pack_into("<I", f, L["entry_hist_mask"], 0xFFFFFFFF)
        groups = b"".join(struct.pack("<Q", (g * 7 + i) % 5)
                          for g in range(32) for i in range(L["group_bytes"] // 8))
        return [f, groups, e[2]]

    assert struct.unpack_from("<Q", hdr, L["header_contrib_size"])[0] != 0, \
        "the dump names no contrib file: was the server loaded as the drop-in?"
    no_contrib = bytearray(hdr)
    struct.pack_into("<QI", no_contrib, L["header_contrib_size"], 0, 0)
    few = entries[:20]
    write("real", hdr, entries)
    write("no-contrib", no_contrib, few)
    write("empty", hdr, [])
    write("no-texts", hdr, [with_text(e, None) for e in few])
    write("empty-texts", hdr, [with_text(e, b"") for e in few])
    write("max-hist", hdr, [with_all_groups(e) for e in entries[:8]])
    long = b"SELECT $1 AS " + b"x" * (100 * 1024) + b" FROM t"
    write("long-text", hdr, [with_text(entries[0], long)] + entries[1:3])
    if plans_head:
        owned = [r for r in plans if struct.unpack_from("<Q", r[0], L["plan_planid"])[0] != 0]
        write("plans-no-texts", hdr, entries,
              [plan_with_text(r, None) if r in owned else r for r in plans])
        write("plans-long-text", hdr, entries,
              [plan_with_text(owned[0], b"Seq Scan on t\n" + b"  Filter: x\n" * 5000)] + plans[1:])
        write("no-plans", hdr, entries, [])
    print("format %d, %d entries; corpus written to %s" % (fmt, n, out))


if __name__ == "__main__":
    main()
