#!/usr/bin/env python3
"""check-names.py -- every file and function a comment or a doc names exists.
Run by scripts/check-house.sh (see there for the rules).

Usage: check-names.py TOP

Where names are looked for:

- comments: the comments of the .c and .h files of src/ and its folders
  (C comments), and the comment lines (starting with '#') of the scripts,
  TAP tests, benchmark and fuzzer files, the Makefile and the packaging;
- docs: README.md, CONTRIBUTING.md and docs/*.md, whole.

What is checked:

- a file name (a word ending in .c, .h, .pl, .pm, .sh, .py, .sql or .md):
  with a directory part it must exist at that path from TOP, or from src/
  when its first directory is one of src/'s (slots/count.c) (a "*" in it is
  a glob, and a path under a directory the repository does not have, such as
  PostgreSQL's src/backend/..., is someone else's); without one, some file
  of the repository must have that name.  PostgreSQL's and other projects'
  files that comments and docs cite are listed in EXTERNAL_FILES;
- in the comments of src/, an identifier of ours (ng_..., Ng..., NG_...) must
  be a name the code of src/ (comments left out) or the SQL scripts use;
- in docs, a function named as `name()` must be a name the code of src/ or
  the SQL scripts use, or one of EXTERNAL_FUNCTIONS (PostgreSQL's and other
  projects' functions the docs cite), and an identifier of ours in backticks
  must be one the code uses.

Names are matched as whole words.  Prints one line per stale name, with the
file and line that names it; exits 1 if there is any.
"""
import fnmatch
import os
import re
import subprocess
import sys

# files of PostgreSQL and other projects that comments and docs cite
EXTERNAL_FILES = {
    'aset.c', 'backend_status.c', 'dsa.c', 'dsm_impl.c', 'dshash.c',
    'freelist.c', 'pg_stat_statements.c', 'pgstat.c', 'pgstat_internal.h',
    'autoprewarm.c', 'simplehash.h', 'queryjumblefuncs.c', 'elog.c',
    'postgres.c', 'proc.c', 'ipci.c', 'dsm.c', 'bgworker.c', 'postmaster.c',
    'xact.c', 'portalmem.c', 'guc.h', 'pgtime.h', 'pg_bsd_indent',
    'Cluster.pm', 'Utils.pm', 'instrument.c', 'walsender.c', 'lwlock.c',
    'scansup.c', 'scan.l', 'gram.y', 'kwlookup.c', 'pg_prng.c', 'procarray.c',
    'execMain.c', 'pquery.c', 'utility.h', 'miscinit.c', 'mcxt.c',
    'pg_wait_sampling.c', 'nodeFuncs.c', 'analyze.c', 'gssapi.h',
}
# functions of PostgreSQL and other projects that the docs name as name()
EXTERNAL_FUNCTIONS = {
    'log', 'pg_memory_barrier', 'pg_write_barrier', 'pg_read_barrier',
    'GetUserId', 'take_sample', 'powa_take_snapshot',
    'pg_stat_statements_reset', 'pg_stat_statements',
    'pg_stat_statements_info', 'pg_sleep', 'now',
}
# names of files that scripts write (the benchmark runner's output and
# scripts), and patterns standing for a family of files
NOT_FILES = {'results.md', 'multi.sql', 'unique.sql', 'scenario_N.sql',
             't/NAME.pl'}

FILE_RE = re.compile(r'(?<![\w/.*-])((?:[\w.*-]+/)*[\w*-]+\.(?:c|h|pl|pm|sh|py|sql|md))(?![\w-])')
OURS_RE = re.compile(r'\b(ng_[a-z0-9_]*[a-z0-9]|Ng[A-Z][A-Za-z0-9]+|NG_[A-Z0-9_]*[A-Z0-9])\b(?!\*)')
CALL_RE = re.compile(r'`([A-Za-z_][A-Za-z0-9_]*)\(\)`')
TICK_OURS_RE = re.compile(r'`(ng_[a-z0-9_]+|Ng[A-Z][A-Za-z0-9]+|NG_[A-Z0-9_]+)`')
IDENT_RE = re.compile(r'[A-Za-z_][A-Za-z0-9_]*')


def c_comments(text):
    """(line number, comment text) of each line of each C comment."""
    out = []
    for m in re.finditer(r'/\*.*?\*/|//[^\n]*', text, re.S):
        line = text.count('\n', 0, m.start()) + 1
        for i, part in enumerate(m.group(0).split('\n')):
            out.append((line + i, part))
    return out


def hash_comments(text):
    """(line number, text) of the comment lines of a script."""
    out = []
    for i, line in enumerate(text.split('\n')):
        s = line.lstrip()
        if s.startswith('#') and not s.startswith('#!') \
                and not re.match(r'#\s*(include|define|if|endif|else)', s):
            out.append((i + 1, s))
    return out


def strip_c_comments(text):
    return re.sub(r'/\*.*?\*/|//[^\n]*', ' ', text, flags=re.S)


def main():
    top = sys.argv[1]
    files = subprocess.run(['git', '-C', top, 'ls-files', '--cached', '--others',
                            '--exclude-standard'], capture_output=True,
                           text=True).stdout.split('\n')
    files = [f for f in files if f and os.path.exists(os.path.join(top, f))]
    # a tree that is not a git work tree (the self-test's): every file
    if not files:
        for d, _, names in os.walk(top):
            for n in names:
                files.append(os.path.relpath(os.path.join(d, n), top))
    basenames = {os.path.basename(f) for f in files}
    dirs = {os.path.dirname(f) for f in files}
    dirs |= {d.split('/')[0] for d in dirs if d}

    code_names = set()
    for f in files:
        path = os.path.join(top, f)
        if f.startswith('src/') and f.endswith(('.c', '.h')):
            with open(path, encoding='utf-8') as fh:
                code_names.update(IDENT_RE.findall(strip_c_comments(fh.read())))
        elif f.endswith('.sql'):
            with open(path, encoding='utf-8') as fh:
                code_names.update(IDENT_RE.findall(fh.read()))

    problems = []

    def file_exists(name):
        if name in NOT_FILES or name in EXTERNAL_FILES:
            return True
        if '/' not in name:
            if '*' in name:
                return any(fnmatch.fnmatch(b, name) for b in basenames)
            return name in basenames
        name = name.lstrip('./')
        first = name.split('/')[0]
        # a path from src/ (slots/count.c), as the sources include it
        if first not in dirs and os.path.isdir(os.path.join(top, 'src', first)):
            name = 'src/' + name
            first = 'src'
        if first not in dirs and not os.path.exists(os.path.join(top, first)):
            return True         # a path in another tree (PostgreSQL's, ...)
        if '*' in name:
            return any(fnmatch.fnmatch(f, name) for f in files)
        return os.path.exists(os.path.join(top, name)) or \
            os.path.basename(name) in EXTERNAL_FILES

    def check_files(where, line, text):
        for m in FILE_RE.finditer(text):
            name = m.group(1)
            if not file_exists(name):
                problems.append('%s:%d: names a file that does not exist: %s'
                                % (where, line, name))

    def check_ours(where, line, text, regex):
        for m in regex.finditer(text):
            name = m.group(1)
            if name not in code_names:
                problems.append('%s:%d: names what the code does not have: %s'
                                % (where, line, name))

    for f in sorted(files):
        path = os.path.join(top, f)
        base = os.path.basename(f)
        try:
            with open(path, encoding='utf-8') as fh:
                text = fh.read()
        except (UnicodeDecodeError, IsADirectoryError):
            continue
        if f.startswith('src/') and f.endswith(('.c', '.h')):
            for line, part in c_comments(text):
                check_files(f, line, part)
                check_ours(f, line, part, OURS_RE)
        elif f.endswith('.md') and (f in ('README.md', 'CONTRIBUTING.md')
                                    or f.startswith('docs/')):
            for i, line in enumerate(text.split('\n')):
                check_files(f, i + 1, line)
                for m in CALL_RE.finditer(line):
                    name = m.group(1)
                    if name not in code_names and name not in EXTERNAL_FUNCTIONS:
                        problems.append('%s:%d: names a function that does not '
                                        'exist: %s()' % (f, i + 1, name))
                check_ours(f, i + 1, line, TICK_OURS_RE)
        elif (f.split('/')[0] in ('scripts', 't', 'bench', 'fuzz', 'debian')
              or base in ('Makefile',)) \
                and (f.endswith(('.sh', '.py', '.pl', '.pm')) or base == 'Makefile'
                     or f.startswith('debian/')):
            for line, part in hash_comments(text):
                check_files(f, line, part)
            # a Python module's docstrings are its comments
            if f.endswith('.py'):
                for m in re.finditer(r'"""(.*?)"""', text, re.S):
                    line = text.count('\n', 0, m.start()) + 1
                    for i, part in enumerate(m.group(1).split('\n')):
                        check_files(f, line + i, part)

    for p in problems:
        print('check-names: ' + p)
    if problems:
        print('check-names: %d stale name(s)' % len(problems))
        return 1
    print('check-names: clean (%d file(s))' % len(files))
    return 0


if __name__ == '__main__':
    sys.exit(main())
