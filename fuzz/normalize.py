#!/usr/bin/env python3
"""fuzz/normalize.py -- a fuzzer for the normalizer (src/qtext.c).

Generates statements with constants in every position (IN lists and
= ANY(ARRAY[..]) of every length up to thousands, nested ARRAY[], VALUES,
function arguments, CASE, LIMIT, casts, every quoting form and numeric
literal form, comments and newlines between tokens, multi-byte characters),
in plain and utility statements (EXPLAIN, COPY (..), CREATE TABLE AS, DO,
PREPARE/EXECUTE, SET, COMMENT, CREATE FUNCTION, ALTER ROLE .. PASSWORD),
multi-statement strings, and statements damaged into syntax errors; sends
each, exactly as generated, to a server with the extension preloaded
(libpq through ctypes, one statement string per PQexec), and checks every
text the extension stores:

  * no constant of the input is in it: every string constant the generator
    writes holds the marker zq, every numeric constant the digits 7319 (in
    the decimal forms, with any underscores) or a 0x/0o/0b prefix, and no
    stored text may hold either, nor a single quote or a dollar quote,
    outside its comments (a comment is the user's text: a damaged statement
    can leave constants inside one);
  * it is valid UTF-8 (the server encoding): the reader shows an invalid
    byte as \\xNN, which no stored text may hold (the generator writes no
    backslash outside its string constants);
  * its parameter symbols $n are 1..k without gaps, each squashed list
    counting as one ("$n /*, ... */"), for texts of statements that had no
    $n of their own.

Texts are read, checked and the statistics reset every --batch statements.
A crash of the backend, a failed check or an error the generator did not
intend (a server error is expected only of statements built to fail) stops
the run with the seed, the statement's number and its text; the same seed
replays the same statements.  The server's own logs (ASan, UBSan, valgrind,
memory-context warnings) are the caller's to check (scripts/fuzz.sh).

  fuzz/normalize.py --libpq LIB --host SOCKDIR --port N --seed S \\
      (--statements N | --seconds T) [--jobs 2] [--batch 2000]

--jobs connections send statements at once, each from its own generator
(seeded from the seed and its number): a seed and a job count replay the
same statements.
"""

import argparse
import ctypes
import random
import re
import sys
import threading
import time

# ------------------------------------------------------------------ libpq


class PG:
    """The few libpq calls the fuzzer needs, through ctypes."""

    PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_COPY_OUT = 1, 2, 3
    PGRES_COPY_IN = 4
    CONNECTION_OK = 0

    def __init__(self, lib, conninfo):
        pq = ctypes.CDLL(lib)
        pq.PQconnectdb.restype = ctypes.c_void_p
        pq.PQconnectdb.argtypes = [ctypes.c_char_p]
        pq.PQstatus.argtypes = [ctypes.c_void_p]
        pq.PQerrorMessage.restype = ctypes.c_char_p
        pq.PQerrorMessage.argtypes = [ctypes.c_void_p]
        pq.PQexec.restype = ctypes.c_void_p
        pq.PQexec.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
        pq.PQgetResult.restype = ctypes.c_void_p
        pq.PQgetResult.argtypes = [ctypes.c_void_p]
        pq.PQresultStatus.argtypes = [ctypes.c_void_p]
        pq.PQresultErrorMessage.restype = ctypes.c_char_p
        pq.PQresultErrorMessage.argtypes = [ctypes.c_void_p]
        pq.PQntuples.argtypes = [ctypes.c_void_p]
        pq.PQnfields.argtypes = [ctypes.c_void_p]
        pq.PQgetvalue.restype = ctypes.c_void_p
        pq.PQgetvalue.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
        pq.PQgetlength.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
        pq.PQgetisnull.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
        pq.PQclear.argtypes = [ctypes.c_void_p]
        pq.PQfinish.argtypes = [ctypes.c_void_p]
        pq.PQputCopyEnd.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
        pq.PQgetCopyData.argtypes = [ctypes.c_void_p,
                                     ctypes.POINTER(ctypes.c_void_p), ctypes.c_int]
        pq.PQfreemem.argtypes = [ctypes.c_void_p]
        self.pq = pq
        self.conn = pq.PQconnectdb(conninfo.encode())
        if pq.PQstatus(self.conn) != self.CONNECTION_OK:
            raise RuntimeError("connect: " + pq.PQerrorMessage(self.conn).decode(errors="replace"))

    def alive(self):
        return self.pq.PQstatus(self.conn) == self.CONNECTION_OK

    def execute(self, sql):
        """Run one query string; returns (ok, rows of bytes, error text)."""
        pq = self.pq
        res = pq.PQexec(self.conn, sql)
        ok, rows, err = True, [], ""
        # a multi-statement string: PQexec returns the last result; a COPY
        # in or out is ended at once
        while res:
            st = pq.PQresultStatus(res)
            if st == self.PGRES_COPY_OUT:
                buf = ctypes.c_void_p()
                while pq.PQgetCopyData(self.conn, ctypes.byref(buf), 0) > 0:
                    pq.PQfreemem(buf)
            elif st == self.PGRES_COPY_IN:
                pq.PQputCopyEnd(self.conn, b"fuzz: no data")
            elif st == self.PGRES_TUPLES_OK and pq.PQnfields(res) > 0:
                for i in range(pq.PQntuples(res)):
                    v = pq.PQgetvalue(res, i, 0)
                    n = pq.PQgetlength(res, i, 0)
                    rows.append(None if pq.PQgetisnull(res, i, 0) else ctypes.string_at(v, n))
            elif st != self.PGRES_COMMAND_OK:
                ok = False
                err = pq.PQresultErrorMessage(res).decode(errors="replace")
            pq.PQclear(res)
            if st not in (self.PGRES_COPY_OUT, self.PGRES_COPY_IN):
                break
            res = pq.PQgetResult(self.conn)
        # drain what follows a COPY
        while True:
            r = pq.PQgetResult(self.conn)
            if not r:
                break
            if pq.PQresultStatus(r) not in (self.PGRES_COMMAND_OK, self.PGRES_TUPLES_OK):
                ok = False
                err = err or pq.PQresultErrorMessage(r).decode(errors="replace")
            pq.PQclear(r)
        return ok, rows, err

    def close(self):
        self.pq.PQfinish(self.conn)


# ------------------------------------------------------------- generator

MB = ["é", "ü", "日本", "語", "ö", "ß", "€", "𝄞"]


class Gen:
    """Random statements; every constant is distinctive (see the header)."""

    def __init__(self, rnd):
        self.r = rnd
        self.n = 0

    def ws(self):
        r = self.r.random()
        if r < 0.55:
            return " "
        if r < 0.7:
            return "\n"
        if r < 0.8:
            return " /* c */ "
        if r < 0.87:
            return " -- c\n"
        if r < 0.93:
            return "\t"
        return "\n\n"

    def sep(self):
        """Between list elements: a comma with whitespace or comments about."""
        r = self.r.random()
        if r < 0.6:
            return ","
        if r < 0.8:
            return ", "
        return self.ws() + "," + self.ws()

    def mark(self):
        self.n += 1
        return str(self.n % 100000)

    def num(self):
        r = self.r.random()
        m = self.mark()
        if r < 0.35:
            return "7319" + m
        if r < 0.45:
            return "-7319" + m
        if r < 0.55:
            return "7319" + m + "." + m
        if r < 0.6:
            return "7319" + m + "e" + str(self.r.randint(-5, 5))
        if r < 0.65:
            return ".7319" + m
        if r < 0.72:
            return "0x7319" + format(int(m), "X")
        if r < 0.78:
            return "0o7" + format(int(m), "o")
        if r < 0.83:
            return "0b1" + format(int(m), "b")
        if r < 0.9:
            return "7_319_" + m
        if r < 0.95:
            return "7_319." + m + "_1"
        return "- 7319" + m

    def int_(self):
        r = self.r.random()
        m = self.mark()
        if r < 0.6:
            return "7319" + m
        if r < 0.7:
            return "0x7319" + format(int(m), "X")
        if r < 0.8:
            return "7_319_" + m
        if r < 0.85:
            return "0o7" + format(int(m), "o")
        if r < 0.9:
            return "0b1" + format(int(m), "b")
        return "-7319" + m

    def body(self):
        """Text inside a string constant: the marker, sometimes multi-byte."""
        s = "zq" + self.mark()
        r = self.r.random()
        if r < 0.3:
            s = self.r.choice(MB) + s + self.r.choice(MB)
        elif r < 0.4:
            s += " IN (1,2,3) ARRAY[4,5] $7 "
        return s

    def str_(self):
        r = self.r.random()
        b = self.body()
        if r < 0.45:
            return "'" + b.replace("'", "''") + "'"
        if r < 0.55:
            return "E'" + b + "\\'\\n'"
        if r < 0.62:
            return "U&'\\0041" + "".join(c for c in b if ord(c) < 128) + "'"
        if r < 0.72:
            return "$$" + b + "$$"
        if r < 0.8:
            return "$zqt$" + b + "$$ $zqt$"
        if r < 0.85:
            return "'" + b + "'\n'" + self.mark() + "'"  # continued string
        if r < 0.9:
            return "text '" + b + "'"
        return "'" + b + "'::text"

    def bits(self):
        return self.r.choice(["B'", "b'", "X'", "x'"]) + "1" * self.r.randint(1, 8) + "'"

    def ival(self):
        """An integer-valued expression holding constants."""
        d = self.r.random()
        if d < 0.6:
            return self.int_()
        if d < 0.7:
            return "(" + self.int_() + ")"
        if d < 0.8:
            return self.int_() + "::int8"
        if d < 0.85:
            return "'" + "7319" + self.mark() + "'::int8"
        if d < 0.9:
            return "coalesce(a," + self.int_() + ")"
        return "length(" + self.str_() + ")"

    def ilist(self, lo=0, hi=12):
        r = self.r.random()
        if r < 0.004:
            n = self.r.randint(500, 4000)
        elif r < 0.03:
            n = self.r.randint(13, 300)
        else:
            n = self.r.randint(max(lo, 1), hi)
        return self.sep().join(self.ival() for _ in range(n))

    def slist(self, hi=8):
        n = self.r.randint(1, hi)
        return self.sep().join(self.str_() for _ in range(n))

    def array(self, depth=0):
        if depth < 3 and self.r.random() < 0.25:
            k = self.r.randint(1, 3)
            return "ARRAY[" + self.sep().join(self.array(depth + 1) for _ in range(k)) + "]"
        return "ARRAY[" + self.ilist(1) + "]"

    def pred(self, depth=0):
        r = self.r.random()
        w = self.ws
        if r < 0.25:
            return "a" + w() + "IN" + w() + "(" + self.ilist(1) + ")"
        if r < 0.35:
            return "a NOT IN (" + self.ilist(1) + ")"
        if r < 0.5:
            return "a = ANY(" + self.array() + ")"
        if r < 0.6:
            return "b IN (" + self.slist() + ")"
        if r < 0.65:
            return "b = ANY(ARRAY[" + self.slist() + "])"
        if r < 0.72:
            return "a > " + self.num()
        if r < 0.78:
            return "b LIKE " + self.str_()
        if r < 0.83 and depth < 3:
            return "a IN (SELECT a FROM fz WHERE " + self.pred(depth + 1) + ")"
        if r < 0.88 and depth < 3:
            return "(" + self.pred(depth + 1) + w() + self.r.choice(["AND", "OR"]) + w() + self.pred(depth + 1) + ")"
        if r < 0.92:
            return "c = " + self.bits()
        if r < 0.96:
            return "(a, b) IN ((" + self.int_() + ", " + self.str_() + "), (" + self.int_() + ", " + self.str_() + "))"
        return "a = " + self.ival()

    def sel_item(self):
        r = self.r.random()
        if r < 0.3:
            return self.num()
        if r < 0.5:
            return self.str_()
        if r < 0.6:
            return self.array()
        if r < 0.7:
            return "CASE WHEN a > " + self.int_() + " THEN " + self.str_() + " ELSE " + self.str_() + " END"
        if r < 0.75:
            return "substr(b, " + self.int_() + ", " + self.int_() + ")"
        if r < 0.8:
            return self.int_() + " IN (" + self.ilist(1) + ")"
        if r < 0.85:
            return '"' + self.r.choice(MB) + '"'
        if r < 0.9:
            return "interval '7319" + self.mark() + " days'"
        return "a"

    def select(self, depth=0):
        w = self.ws
        items = ", ".join(self.sel_item() for _ in range(self.r.randint(1, 4)))
        s = "SELECT" + w() + items
        r = self.r.random()
        if r < 0.6:
            s += w() + "FROM fz" + w() + "WHERE" + w() + self.pred()
        elif r < 0.75:
            s += " FROM (VALUES (" + self.int_() + ", " + self.str_() + "), (" + self.int_() + ", " + self.str_() + ")) v(a, b) WHERE " + self.pred()
        elif r < 0.85 and depth < 2:
            s += " FROM (" + self.select(depth + 1) + ") s(a)"
        if self.r.random() < 0.2:
            s += " LIMIT " + self.int_()
        if self.r.random() < 0.1:
            s += " OFFSET " + self.int_()
        return s

    def plain(self):
        r = self.r.random()
        if r < 0.6:
            return self.select()
        if r < 0.72:
            return "INSERT INTO fz VALUES (" + self.int_() + ", " + self.str_() + ")"
        if r < 0.8:
            return "UPDATE fz SET b = " + self.str_() + " WHERE " + self.pred()
        if r < 0.86:
            return "DELETE FROM fz WHERE " + self.pred()
        if r < 0.92:
            return "SELECT * FROM fz WHERE a IN (" + self.ilist(2, 30) + ")"
        return "SELECT " + self.array() + " = ANY(ARRAY[" + self.array() + "])"

    def utility(self):
        r = self.r.random()
        if r < 0.12:
            return "EXPLAIN (COSTS OFF) " + self.plain()
        if r < 0.22:
            return "COPY (" + self.select() + ") TO STDOUT"
        if r < 0.3:
            return "CREATE TEMP TABLE fz_ctas AS " + self.select() + "; DROP TABLE fz_ctas"
        if r < 0.42:
            inner = self.plain()
            if inner.startswith("SELECT"):
                inner = "PERFORM" + inner[len("SELECT"):]
            return "DO $do$ BEGIN " + inner + "; EXCEPTION WHEN others THEN NULL; END $do$"
        if r < 0.5:
            return "SET work_mem = " + self.r.choice(["7319" + self.mark(), "'7319" + self.mark() + "kB'"])
        if r < 0.56:
            return "SET application_name = " + self.str_()
        if r < 0.62:
            return "COMMENT ON TABLE fz IS " + self.str_()
        if r < 0.68:
            return "ALTER ROLE fz_role PASSWORD " + self.str_()
        if r < 0.74:
            return ("CREATE OR REPLACE FUNCTION fz_f() RETURNS int LANGUAGE sql AS $fb$ SELECT (" +
                    self.int_() + " + length(" + self.str_() + "))::int $fb$; SELECT fz_f()")
        if r < 0.8:
            return "PREPARE fz_p AS " + self.select() + "; EXECUTE fz_p; DEALLOCATE fz_p"
        if r < 0.86:
            return "CREATE TEMP VIEW fz_v AS " + self.select() + "; DROP VIEW fz_v"
        if r < 0.92:
            return "DECLARE fz_c CURSOR WITH HOLD FOR " + self.select() + "; CLOSE fz_c"
        return "ALTER TABLE fz ALTER COLUMN a SET DEFAULT " + self.int_()

    def damage(self, s):
        """A syntax error: a character dropped or doubled, a token cut."""
        r = self.r.random()
        if not s:
            return "SELECT (("
        i = self.r.randrange(len(s))
        if r < 0.25:
            return s[:i] + s[i + 1:]
        if r < 0.45:
            return s[:i]
        if r < 0.6:
            return s[:i] + ",," + s[i:]
        if r < 0.7:
            return s[:i] + "'" + s[i:]
        if r < 0.8:
            return s[:i] + "/*" + s[i:]
        if r < 0.9:
            return s[:i] + "$q$" + s[i:]
        return s[:i] + "(" + s[i:]

    def statement(self):
        """(text, may_fail): a statement the fuzzer sends."""
        r = self.r.random()
        if r < 0.55:
            s = self.plain()
        elif r < 0.85:
            s = self.utility()
        else:
            s = self.plain() + ";" + self.ws() + self.plain()
        if self.r.random() < 0.1:
            s = self.damage(s)
        if self.r.random() < 0.3:
            s += ";"
        return s


# --------------------------------------------------------------- checks

PARAM = re.compile(r"\$(\d+)")
# a marker inside an identifier (a damaged statement's x7319AB) is no constant
NUMERIC = re.compile(r"(?<![$0-9A-Za-z_])(7_?3_?1_?9|0[xXoObB][0-9A-Fa-f])")
DOLLAR = re.compile(r"(?<![A-Za-z0-9_$])\$[A-Za-z_]*\$")
IDENT = re.compile(r"(?<![0-9A-Za-z_$\u0080-\uffff])[A-Za-z_\u0080-\uffff][0-9A-Za-z_$\u0080-\uffff]*")


def strip_comments(t):
    """The text outside its comments (-- to the end of the line, /* */
    nested, not inside a quoted string or identifier) with its quoted
    identifiers emptied.  Comments and identifiers are the user's own text,
    not constants: a damaged statement can leave string constants inside a
    comment (its newline dropped before them), or a quote inside an
    identifier."""
    out, i, n, depth = [], 0, len(t), 0
    while i < n:
        if depth == 0 and t[i] in "'\"":
            j = t.find(t[i], i + 1)
            j = n if j < 0 else j + 1
            # a string stays, to be checked; an identifier is the user's
            out.append(t[i:j] if t[i] == "'" else '""')
            i = j
        elif depth == 0 and t.startswith("--", i):
            j = t.find("\n", i)
            i = n if j < 0 else j
        elif t.startswith("/*", i):
            depth += 1
            i += 2
        elif depth > 0 and t.startswith("*/", i):
            depth -= 1
            i += 2
        else:
            if depth == 0:
                out.append(t[i])
            i += 1
    return "".join(out)


def check_text(raw):
    """None if a stored text keeps the promises, else what is wrong."""
    try:
        text = raw.decode("utf-8", errors="strict")
    except UnicodeDecodeError as e:
        return "not valid UTF-8: %s" % e
    # the view shows a byte that is not valid in the server encoding as
    # \xNN (textconv.c): the generator writes no backslash outside strings
    if "\\x" in text:
        return "a byte not valid in the server encoding is stored"
    # a comment is the user's text, not a constant
    bare = strip_comments(text)
    if "'" in bare:
        return "a quoted string constant is stored"
    if DOLLAR.search(bare):
        return "a dollar-quoted constant is stored"
    # a marker in an unquoted identifier is the user's text too: the
    # statement $$q$$zq1$$ is the constant $$q$$ and the alias zq1$$, stored
    # as $1zq1$$ (a constant's token is replaced whole, so a stored string
    # constant keeps its quotes, which the checks above catch)
    if "zq" in IDENT.sub("ID", PARAM.sub(r" $\1 ", bare)):
        return "a string constant's text is stored"
    m = NUMERIC.search(bare)
    if m:
        return "a numeric constant is stored (%r)" % m.group(0)
    nums = sorted({int(x) for x in PARAM.findall(bare)})
    if nums and nums != list(range(1, len(nums) + 1)):
        return "parameter symbols are not 1..k: %s" % nums[:20]
    return None


SESSION = [b"SET client_min_messages = error",
           b"SET pg_stat_statements_ng.track = 'all'",
           b"SET pg_stat_statements_ng.track_utility = on"]


class Worker:
    """One connection and its own generator (seeded from the run's seed and
    its number, so that a seed and a job count replay the same statements)."""

    def __init__(self, a, seed, j):
        self.j = j
        self.gen = Gen(random.Random(seed * 1000 + j))
        self.pg = PG(a.libpq, "host=%s port=%d dbname=postgres user=postgres" % (a.host, a.port))
        for q in SESSION:
            self.pg.execute(q)
        self.sent = self.errors = 0
        self.batch = []
        self.failure = None

    def run(self, n):
        """Send n statements; stop at a dead connection."""
        for _ in range(n):
            s = self.gen.statement().encode()
            ok, _, err = self.pg.execute(s)
            self.sent += 1
            self.batch.append(("%d.%d" % (self.j, self.sent), s))
            if not ok:
                self.errors += 1
            if not self.pg.alive() or (not ok and "server closed the connection" in err):
                self.failure = "the connection died at statement #%d.%d: %s\nstatement #%d.%d: %r" % (
                    self.j, self.sent, err, self.j, self.sent, s[:4000])
                return
        # an aborted transaction block a statement may have left open
        self.pg.execute(b"ROLLBACK")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--libpq", required=True)
    ap.add_argument("--host", required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--jobs", type=int, default=2, help="connections sending statements")
    ap.add_argument("--statements", type=int, default=0)
    ap.add_argument("--seconds", type=float, default=0)
    ap.add_argument("--batch", type=int, default=2000)
    ap.add_argument("--show", type=int, default=0, help="print the first N statements of job 0 and stop")
    a = ap.parse_args()
    seed = a.seed if a.seed is not None else random.SystemRandom().randrange(1 << 31)
    print("fuzz/normalize.py: seed %d, %d jobs" % (seed, a.jobs), flush=True)
    if a.show:
        gen = Gen(random.Random(seed * 1000))
        for _ in range(a.show):
            print(gen.statement())
        return 0

    pg = PG(a.libpq, "host=%s port=%d dbname=postgres user=postgres" % (a.host, a.port))
    for setup in SESSION[:1] + [
            b"DROP TABLE IF EXISTS fz",
            b"CREATE TABLE fz (a int8, b text, c bit varying)",
            b"INSERT INTO fz SELECT i, 'row' || i FROM generate_series(1, 20) i",
            b"DO $$ BEGIN CREATE ROLE fz_role; EXCEPTION WHEN duplicate_object THEN NULL; END $$",
            b"CREATE EXTENSION IF NOT EXISTS pg_stat_statements_ng"]:
        ok, _, err = pg.execute(setup)
        if not ok:
            print("setup failed: %s: %s" % (setup.decode(), err))
            return 2
    workers = [Worker(a, seed, j) for j in range(a.jobs)]
    pg.execute(b"SELECT pg_stat_statements_ng_reset()")

    start = time.time()
    stored = 0

    def harvest():
        """Check every stored text, then reset; False at the first bad one."""
        nonlocal stored
        ok, rows, err = pg.execute(
            b"SELECT query FROM pg_stat_statements_ng WHERE query IS NOT NULL")
        if not ok:
            print("reading the texts failed: %s" % err)
            return False
        for raw in rows:
            if raw is None or b"pg_stat_statements_ng" in raw:
                continue
            stored += 1
            why = check_text(raw)
            if why:
                print("FAIL (seed %d, %d jobs): %s" % (seed, a.jobs, why))
                print("stored text: %r" % raw[:2000])
                # the statement of this batch that could have made it
                words = re.findall(rb"[A-Za-z_]+", raw)[:6]
                for w in workers:
                    for i, s in w.batch:
                        if all(x in s for x in words):
                            print("candidate statement #%s: %r" % (i, s[:2000]))
                            break
                return False
        pg.execute(b"SELECT pg_stat_statements_ng_reset()")
        for w in workers:
            w.batch = []
        return True

    def sent():
        return sum(w.sent for w in workers)

    while True:
        if a.statements and sent() >= a.statements:
            break
        if a.seconds and time.time() - start >= a.seconds:
            break
        per = a.batch // a.jobs
        if a.statements:
            per = min(per, -(-(a.statements - sent()) // a.jobs))
        threads = [threading.Thread(target=w.run, args=(per,)) for w in workers]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for w in workers:
            if w.failure:
                print("FAIL (seed %d, %d jobs): %s" % (seed, a.jobs, w.failure))
                return 1
        if not harvest():
            return 1
    el = time.time() - start
    n = sent()
    print("fuzz/normalize.py: seed %d, %d jobs: %d statements (%d ended in an error), "
          "%d stored texts checked, %.0f s, %.0f statements/s: ok"
          % (seed, a.jobs, n, sum(w.errors for w in workers), stored, el, n / max(el, 1e-9)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
