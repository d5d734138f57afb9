#!/usr/bin/env python3
"""fuzz/make_corpus.py LAYOUT DUMP OUTDIR -- the loader fuzzer's corpus.

From one real dump (DUMP, written by a server at a clean shutdown) and the
format's layout (LAYOUT: fuzz/loader_layout.c's output), writes into OUTDIR
the dump itself and variants of it, each with its CRC made right:

  v4-real.stat          the dump as written
  v4-empty.stat         no entries
  v4-no-texts.stat      every entry without text (text_len -1)
  v4-empty-texts.stat   every entry with an empty text (text_len 0)
  v4-max-hist.stat      every entry with every histogram group
  v4-long-text.stat     one entry with a 100 kB text (across the loader's
                        64 kB read chunks)
  v1.stat .. v4.stat    the dump with an older format number (the loader
                        refuses these at the header)
  v5.stat               the dump in format 5: without the failures by
                        SQLSTATE that follow the entries from format 6 (the
                        loader reads it)
"""

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

    def write(name, header, ents, fmt=None):
        h = bytearray(header)
        struct.pack_into("<Q", h, L["header_nentries"], len(ents))
        if fmt is not None:
            struct.pack_into("<I", h, L["header_format"], fmt)
        b = bytes(h)
        for fixed, groups, text in ents:
            f = bytearray(fixed)
            struct.pack_into("<I", f, L["entry_hist_mask"],
                             struct.unpack_from("<I", fixed, L["entry_hist_mask"])[0])
            b += bytes(f) + groups + (text if text is not None else b"")
        if fmt is None or fmt >= 6:
            b += tail
        with open("%s/%s" % (out, name), "wb") as fh:
            fh.write(b + struct.pack("<I", crc32c(b)))

    def with_text(e, text):
        f = bytearray(e[0])
        struct.pack_into("<i", f, L["entry_text_len"], -1 if text is None else len(text))
        return [f, e[1], text]

    def with_all_groups(e):
        f = bytearray(e[0])
        struct.pack_into("<I", f, L["entry_hist_mask"], 0xFFFFFFFF)
        groups = b"".join(struct.pack("<Q", (g * 7 + i) % 5) for g in range(32) for i in range(L["group_bytes"] // 8))
        return [f, groups, e[2]]

    write("v4-real.stat", hdr, entries)
    write("v4-empty.stat", hdr, [])
    write("v4-no-texts.stat", hdr, [with_text(e, None) for e in entries])
    write("v4-empty-texts.stat", hdr, [with_text(e, b"") for e in entries])
    write("v4-max-hist.stat", hdr, [with_all_groups(e) for e in entries])
    long = b"SELECT $1 AS " + b"x" * (100 * 1024) + b" FROM t"
    write("v4-long-text.stat", hdr, [with_text(entries[0], long)] + entries[1:3])
    for v in range(1, L["format"]):
        write("v%d.stat" % v, hdr, entries[:5], fmt=v)
    print("%d entries; corpus written to %s" % (n, out))


if __name__ == "__main__":
    main()
