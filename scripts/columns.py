#!/usr/bin/env python3
"""columns.py -- src/columns.h's list of a statement's columns, for scripts.

The statement rows' columns of every API version are defined once, in
src/columns.h's NG_COLUMNS list (the C code is made from it); this module
reads that list, and the order of the API versions from src/funcs.h's NgApi.
scripts/gen-dropin.py takes contrib's column lists from it.

    scripts/columns.py --check   check that our SQL scripts' statement
                                 functions, the drop-in's generated scripts
                                 (dropin/) and docs/compatibility.md's column
                                 list agree with the list (check-house.sh
                                 runs it); exit 1 if not
    scripts/columns.py --docs    write docs/compatibility.md's column list
"""
import glob
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.normpath(os.path.join(HERE, ".."))

# a form of columns.h (a column's SQL type)
SQL_TYPE = {"OID": "oid", "BOOL": "bool", "BIGINT": "bigint", "TEXT": "text",
            "INT8": "int8", "FLOAT8": "float8", "NUMERIC": "numeric",
            "TSTZ": "timestamp with time zone"}

# the extension versions each API version serves, for the docs
PGSS_SERVES = {"PGSS_1_3": ("1.3", "1.7")}
NG_SERVES = {"NG_1_0": ("1.0", "1.1")}

DOCS = os.path.join(TOP, "docs", "compatibility.md")
DOCS_BEGIN = "<!-- the column list: scripts/columns.py --docs writes it -->"
DOCS_END = "<!-- end of the column list -->"


def split_args(text):
    """The arguments of a macro call, split at the commas outside
    parentheses."""
    args, depth, cur = [], 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            args.append(cur.strip())
            cur = ""
            continue
        depth += (ch == "(") - (ch == ")")
        cur += ch
    args.append(cur.strip())
    return args


def apis(top=TOP):
    """NgApi's versions in order, without their prefix, then LAST and NONE."""
    with open(os.path.join(top, "src", "funcs.h")) as f:
        text = f.read()
    body = re.search(r"typedef enum NgApi\s*\{(.*?)\}\s*NgApi;", text, re.S).group(1)
    body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
    names = re.findall(r"NG_API_(\w+)", body)
    return names + ["LAST", "NONE"]


def rows(top=TOP):
    """columns.h's rows, in order: dicts with kind (K, F or V), and for F
    and V rows column, form, first, last (indexes into apis()), and for F
    and K rows member."""
    order = apis(top)
    index = {a: i for i, a in enumerate(order)}
    index["LAST"] = len(order) - 2
    out = []
    with open(os.path.join(top, "src", "columns.h")) as f:
        text = f.read()
    body = re.search(r"#define NG_COLUMNS\(K, F, V\) \\\n(.*?)\n\n", text, re.S).group(1)
    body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
    for line in body.split("\n"):
        line = line.rstrip().rstrip("\\").strip()
        if not line:
            continue
        m = re.fullmatch(r"([KFV])\((.*)\)", line)
        if not m:
            raise SystemExit(f"columns.py: a row of columns.h not understood: {line}")
        kind, args = m.group(1), split_args(m.group(2))
        if kind == "K":
            out.append({"kind": "K", "member": args[0]})
            continue
        row = {"kind": kind, "column": args[0], "form": args[1],
               "first": index[args[2]], "last": index[args[3]]}
        if kind == "F":
            row["member"] = args[5]
            row["merge"] = args[6]
        out.append(row)
    return out


def columns_of(api, top=TOP):
    """The (name, SQL type) columns of API version api (e.g. "PGSS_1_12",
    "NG_1_2"), in order."""
    i = apis(top).index(api)
    return [(r["column"], SQL_TYPE[r["form"]]) for r in rows(top)
            if r["kind"] != "K" and r["first"] <= i <= r["last"]]


def sql_functions(path):
    """The statement functions a SQL script creates: (symbol, [(name,
    type)] of its OUT columns)."""
    with open(path) as f:
        text = f.read()
    out = []
    for m in re.finditer(r"CREATE FUNCTION \w+\((.*?)\)\s*RETURNS SETOF record\s*"
                         r"AS 'MODULE_PATHNAME', '(pg_stat_statements_ng_\w+)'",
                         text, re.S):
        cols = re.findall(r"OUT (\w+) ([^,\n]+?),?\n", m.group(1) + "\n")
        out.append((m.group(2), cols))
    return out


# our statement functions' C symbols: the API version, and whether
# changed_since's generation comes first
SYMBOLS = {"pg_stat_statements_ng_1_0": ("NG_1_0", False),
           "pg_stat_statements_ng_1_2": ("NG_1_2", False),
           "pg_stat_statements_ng_changed_since_1_0": ("NG_1_0", True)}


def first_difference(have, want):
    """Where two column lists part, in words."""
    for i in range(max(len(have), len(want))):
        h = " ".join(have[i]) if i < len(have) else "nothing"
        w = " ".join(want[i]) if i < len(want) else "nothing"
        if h != w:
            return f"OUT column {i + 1} is {h}, columns.h has {w}"
    return ""


def check_sql(top=TOP):
    faults = []
    seen = 0
    for path in sorted(glob.glob(os.path.join(top, "pg_stat_statements_ng--*.sql"))):
        for symbol, cols in sql_functions(path):
            if symbol not in SYMBOLS:
                continue
            seen += 1
            api, generation = SYMBOLS[symbol]
            want = ([("generation", "bigint")] if generation else []) + columns_of(api, top)
            if cols != want:
                faults.append(f"{os.path.basename(path)}: {symbol}'s OUT columns are not "
                              f"columns.h's of {api}: {first_difference(cols, want)}")
    if seen == 0:
        faults.append("no statement function found in pg_stat_statements_ng--*.sql")
    return faults


def served(api, table):
    """The extension versions API version api serves (first, last)."""
    if api in table:
        return table[api]
    v = api.split("_", 1)[1].replace("_", ".")
    return (v, v)


def docs_list(top=TOP):
    """docs/compatibility.md's column list, as written from the list."""
    order = apis(top)
    pgss = [a for a in order if a.startswith("PGSS_")]
    ours = [a for a in order if a.startswith("NG_")]
    lines = ["| column | type | pg_stat_statements | pg_stat_statements_ng |",
             "|---|---|---|---|"]

    def versions(r, names, table):
        have = [a for a in names if r["first"] <= order.index(a) <= r["last"]]
        if not have:
            return ""
        first = served(have[0], table)[0]
        if have[-1] == names[-1]:
            return f"{first} on"
        last = served(have[-1], table)[1]
        return first if first == last else f"{first} to {last}"

    for r in rows(top):
        if r["kind"] == "K" or r["form"] == "NONE":
            continue
        lines.append(f"| `{r['column']}` | {SQL_TYPE[r['form']]} | "
                     f"{versions(r, pgss, PGSS_SERVES)} | {versions(r, ours, NG_SERVES)} |")
    return "\n".join(lines) + "\n"


def docs_split(text):
    a = text.index(DOCS_BEGIN) + len(DOCS_BEGIN) + 1
    b = text.index(DOCS_END)
    return text[:a], text[a:b], text[b:]


def check_docs(top=TOP):
    with open(os.path.join(top, "docs", "compatibility.md")) as f:
        text = f.read()
    if DOCS_BEGIN not in text or DOCS_END not in text:
        return ["docs/compatibility.md has no column list (scripts/columns.py --docs)"]
    if docs_split(text)[1] != docs_list(top):
        return ["docs/compatibility.md's column list is not columns.h's "
                "(scripts/columns.py --docs writes it)"]
    return []


def check_dropin(top=TOP):
    """The drop-in's scripts as scripts/gen-dropin.py writes them."""
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, os.path.join(top, "scripts", "gen-dropin.py"),
                        "--out", tmp], check=True)
        faults = []
        for path in sorted(glob.glob(os.path.join(tmp, "*.sql"))):
            name = os.path.basename(path)
            mine = os.path.join(top, "dropin", name)
            with open(path) as a:
                want = a.read()
            have = open(mine).read() if os.path.exists(mine) else None
            if have != want:
                faults.append(f"dropin/{name} is not what scripts/gen-dropin.py writes")
        return faults


def main():
    top = TOP
    if len(sys.argv) == 3:
        top = os.path.abspath(sys.argv[2])
    if len(sys.argv) >= 2 and sys.argv[1] == "--docs":
        with open(os.path.join(top, "docs", "compatibility.md")) as f:
            head, _, tail = docs_split(f.read())
        with open(os.path.join(top, "docs", "compatibility.md"), "w") as f:
            f.write(head + docs_list(top) + tail)
        return 0
    if len(sys.argv) >= 2 and sys.argv[1] == "--check":
        faults = check_sql(top) + check_docs(top) + check_dropin(top)
        for fault in faults:
            print(f"columns: {fault}")
        return 1 if faults else 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
