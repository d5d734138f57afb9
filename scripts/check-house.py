#!/usr/bin/env python3
"""check-house.py -- the shape of src/: file and function sizes, functions'
parameters, include and call circles.  Run by scripts/check-house.sh (see there for the rules).

Usage: check-house.py SRCDIR [ALLOWLIST]

Works on the source text (no build needed), which is pgindent-formatted:

- a function definition is a line starting in column 0 with NAME( whose
  parameter list is followed by a "{" in column 0; its length is counted from
  the line after the name line to its closing "}" in column 0 (inclusive);
- a definition's parameters are the text between its parentheses, split at
  the commas outside nested ones; a bool parameter is one declared
  "bool name" (a pointer to a bool is an out-parameter, not a flag);
- a function-like macro (#define NAME(...)) in a header counts as a function
  defined in that header;
- calls are found by name: after comments, strings and character constants
  are removed, every identifier in a file that names a function (or a header's
  function-like macro) defined in another src/ file is a reference from this
  file to that one (a call, or the function's address taken: both tie the
  files together).  A name a file defines itself (a static function) refers
  to its own.  A header's static inline functions and macros are the
  header's: a file that uses one depends on the header, and the header on
  whatever the inline function calls, so a circle through a header's inline
  code shows up as a circle through the header.
- files are every .c and .h under SRCDIR, named by their path from it
  (slots/count.c);
- includes are the #include "x" lines naming a file of SRCDIR, looked for
  beside the including file first, then from SRCDIR, as the compiler does.

A circle is a strongly connected component of more than one file.  The
calls are also checked between modules, a module being a header and the C
file of its name (store.h with store.c): store.c calling another module's
C file whose code calls an inline function of store.h is a module circle,
though no file calls back the one that called it.

A header that lists the files of its folder "from the top down: a file
calls only files below it" (one a line, " *<tab>FILE<tab>..."), as
slots/slots_int.h does, is held to it: every .c file of the folder is
listed, and no listed file refers to one above it.  With
CHECK_HOUSE_EDGES=1 in the environment it also prints every file-level call
edge (with one name that makes it), to see the layers.

Why source text rather than object files (nm): it needs no build, so
scripts/test.sh runs it first; and it sees a header's inline functions as
the header's, where in object files they vanish into their callers.  It
can be fooled only by a name that is both a function of one file and a
variable or member elsewhere; names defined in two files are ignored.
"""
import os
import re
import sys

MAX_FILE_LINES = 1000
MAX_FUNCTION_LINES = 100
MAX_PARAMETERS = 6
MAX_BOOL_PARAMETERS = 2

ORDER_PHRASE = 'from the top down: a file calls only files below it'
ORDER_LINE = re.compile(r'^ \*\t([A-Za-z0-9_]+\.c)\t', re.M)
IDENT = re.compile(r'[A-Za-z_][A-Za-z0-9_]*')
NAME_LINE = re.compile(r'^([A-Za-z_][A-Za-z0-9_]*)\(')
MACRO = re.compile(r'^#\s*define\s+([A-Za-z_][A-Za-z0-9_]*)\(')
INCLUDE = re.compile(r'^#\s*include\s+"([^"]+)"')


def strip_code(text):
    """Blank comments, strings and char constants, keeping line breaks."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r'[^\n]', ' ', text[i:j]))
            i = j
        elif text.startswith('//', i):
            j = text.find('\n', i)
            j = n if j < 0 else j
            out.append(' ' * (j - i))
            i = j
        elif c in '"\'':
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == '\\' else 1
            j = min(j + 1, n)
            out.append(c + re.sub(r'[^\n]', ' ', text[i + 1:j - 1]) + c)
            i = j
        else:
            out.append(c)
            i += 1
    return ''.join(out)


def functions(lines):
    """(name, name_line_index, end_line_index) of each definition."""
    found = []
    i = 0
    while i < len(lines):
        m = NAME_LINE.match(lines[i])
        if not m:
            i += 1
            continue
        # the parameter list runs until a "{" line in column 0 (a definition)
        # or a line ending in ";" (a declaration or a macro invocation)
        j = i
        definition = False
        while j < len(lines):
            s = lines[j].rstrip()
            if j > i and s == '{':
                definition = True
                break
            if s.endswith(';') or (j > i and s.startswith('}')):
                break
            j += 1
        if not definition:
            i += 1
            continue
        k = j + 1
        while k < len(lines) and not lines[k].startswith('}'):
            k += 1
        found.append((m.group(1), i, k))
        i = k + 1
    return found


def parameters(lines, start):
    """The parameters of the definition whose name line is lines[start]:
    the text between its parentheses, split at the commas outside nested
    parentheses (a function pointer's own list); [] for (void)."""
    text = ' '.join(lines[start:start + 40])
    i = text.index('(') + 1
    depth, params, cur = 1, [], ''
    while i < len(text) and depth > 0:
        c = text[i]
        if c == '(':
            depth += 1
        elif c == ')':
            depth -= 1
            if depth == 0:
                break
        if c == ',' and depth == 1:
            params.append(cur)
            cur = ''
        else:
            cur += c
        i += 1
    params.append(cur)
    params = [' '.join(p.split()) for p in params]
    if params == ['void'] or params == ['']:
        return []
    return params


def is_bool(param):
    """A parameter passed as a bool (a flag), not a pointer to one."""
    return re.match(r'^(const )?bool [A-Za-z_][A-Za-z0-9_]*$', param) is not None


def macros(lines):
    """(name, first_line_index, last_line_index) of function-like macros."""
    found = []
    i = 0
    while i < len(lines):
        m = MACRO.match(lines[i])
        if m:
            k = i
            while lines[k].rstrip().endswith('\\') and k + 1 < len(lines):
                k += 1
            found.append((m.group(1), i, k))
            i = k
        i += 1
    return found


def sccs(nodes, edges):
    """Tarjan's strongly connected components, iteratively."""
    index, low, onstack, stack, result = {}, {}, set(), [], []
    counter = [0]
    for root in sorted(nodes):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        onstack.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    onstack.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                    advanced = True
                    break
                if w in onstack:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    onstack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                result.append(sorted(comp))
    return [c for c in result if len(c) > 1]


def describe_circle(comp, edges, why):
    lines = ['  ' + ' '.join(comp)]
    for a in comp:
        for b in sorted(edges.get(a, ())):
            if b in comp:
                lines.append('    %s -> %s%s' % (a, b, why.get((a, b), '')))
    return '\n'.join(lines)


def main():
    srcdir = sys.argv[1]
    allowed = set()
    if len(sys.argv) > 2 and os.path.exists(sys.argv[2]):
        with open(sys.argv[2]) as f:
            for line in f:
                line = line.split('#', 1)[0].strip()
                if line:
                    allowed.add(' '.join(line.split()))

    # every .c and .h file under srcdir, named by its path from there
    # (slots/count.c)
    files = sorted(os.path.relpath(os.path.join(d, n), srcdir)
                   for d, _, names in os.walk(srcdir)
                   for n in names if n.endswith(('.c', '.h')))
    problems, excused = [], []

    seen = set()

    def report(key, text):
        seen.add(key)
        (excused if key in allowed else problems).append(text)

    raw, code = {}, {}
    for f in files:
        with open(os.path.join(srcdir, f), encoding='utf-8') as fh:
            raw[f] = fh.read()
        code[f] = strip_code(raw[f]).split('\n')

    # sizes
    defined = {}                # file -> {name: (start, end)}
    for f in files:
        nlines = raw[f].count('\n')
        if f.endswith('.c') and nlines > MAX_FILE_LINES:
            report('lines %s' % f, 'file %s: %d lines (more than %d)'
                   % (f, nlines, MAX_FILE_LINES))
        defs = {}
        for name, start, end in functions(code[f]):
            defs[name] = (start, end)
            length = end - start
            if length > MAX_FUNCTION_LINES:
                report('function %s %s' % (f, name),
                       'function %s in %s: %d lines (more than %d)'
                       % (name, f, length, MAX_FUNCTION_LINES))
            params = parameters(code[f], start)
            bools = sum(1 for p in params if is_bool(p))
            if 'fixed-signature %s %s' % (f, name) in allowed:
                seen.add('fixed-signature %s %s' % (f, name))
            elif len(params) > MAX_PARAMETERS or bools > MAX_BOOL_PARAMETERS:
                report('parameters %s %s' % (f, name),
                       'function %s in %s: %d parameters, %d of them bool '
                       '(at most %d, and %d bool: a request struct instead)'
                       % (name, f, len(params), bools, MAX_PARAMETERS,
                          MAX_BOOL_PARAMETERS))
        if f.endswith('.h'):
            for name, start, end in macros(code[f]):
                defs[name] = (start, end)
        defined[f] = defs

    # includes
    inc_edges = {}
    for f in files:
        for line in raw[f].split('\n'):
            m = INCLUDE.match(line)
            if not m:
                continue
            # as the compiler looks: beside the including file, then from
            # srcdir (the -I of the Makefile)
            for cand in (os.path.normpath(os.path.join(os.path.dirname(f),
                                                       m.group(1))),
                         os.path.normpath(m.group(1))):
                if cand in raw:
                    if cand != f:
                        inc_edges.setdefault(f, set()).add(cand)
                    break
    for comp in sccs(files, inc_edges):
        report('include-circle ' + ' '.join(comp),
               'include circle:\n' + describe_circle(comp, inc_edges, {}))

    # calls: a name refers to the definition in the same file if there is
    # one, else to the one file that defines it (ambiguous names are skipped)
    owner = {}
    for f in files:
        for name in defined[f]:
            owner.setdefault(name, set()).add(f)
    call_edges, why = {}, {}
    for f in files:
        own = defined[f]
        # a header refers to other files only through the bodies of its
        # inline functions and macros: its prototypes name, not call
        if f.endswith('.h'):
            body = set()
            for start, end in own.values():
                body.update(range(start + 1, end + 1))
        for lineno, line in enumerate(code[f]):
            if f.endswith('.h') and lineno not in body:
                continue
            for m in IDENT.finditer(line):
                name = m.group(0)
                if name in own or name not in owner or len(owner[name]) != 1:
                    continue
                (g,) = owner[name]
                if g == f:
                    continue
                call_edges.setdefault(f, set()).add(g)
                why.setdefault((f, g), ' (%s)' % name)
    # a header whose comment lists its folder's files from the top down
    # (ORDER_PHRASE, then one file a line: " *<tab>FILE<tab>what it
    # owns") says that a file calls only files below it: every file of the
    # folder must be listed, and every call between them go down the list
    for h in files:
        if not h.endswith('.h') or \
                ORDER_PHRASE not in ' '.join(re.sub(r'\n\s*\*', ' ',
                                                    raw[h]).split()):
            continue
        folder = os.path.dirname(h)
        order = [os.path.join(folder, m.group(1))
                 for m in ORDER_LINE.finditer(raw[h])]
        rank = {f: i for i, f in enumerate(order)}
        for f in files:
            if f.endswith('.c') and os.path.dirname(f) == folder and \
                    f not in rank:
                report('order %s %s' % (h, f),
                       'file %s is missing from the order of %s' % (f, h))
        for a in order:
            for b in sorted(call_edges.get(a, ())):
                if b in rank and rank[b] < rank[a]:
                    report('order %s %s' % (a, b),
                           'file %s calls %s%s, above it in the order of %s'
                           % (a, b, why.get((a, b), ''), h))
    if os.environ.get('CHECK_HOUSE_EDGES'):
        for (a, b), w in sorted(why.items()):
            print('edge %s -> %s%s' % (a, b, w))
    for comp in sccs(files, call_edges):
        report('call-circle ' + ' '.join(comp),
               'call circle:\n' + describe_circle(comp, call_edges, why))

    # the same calls between modules: a module is a header and the C file
    # of its name, so that one module's C file calling another's, whose
    # code calls the first one's inline functions, is a circle, though no
    # file calls back the file that called it
    def module(f):
        return os.path.splitext(f)[0]
    mod_edges, mod_why = {}, {}
    for (a, b), w in why.items():
        if module(a) != module(b):
            mod_edges.setdefault(module(a), set()).add(module(b))
            mod_why.setdefault((module(a), module(b)),
                               ' (%s, %s -> %s)' % (w.strip(' ()'), a, b))
    for comp in sccs(set(module(f) for f in files), mod_edges):
        if any(set(comp) == set(module(f) for f in c)
               for c in sccs(files, call_edges)):
            continue            # reported above, file by file
        report('module-call-circle ' + ' '.join(comp),
               'module call circle:\n'
               + describe_circle(comp, mod_edges, mod_why))

    for p in problems:
        print('check-house: ' + p)
    # the functions whose parameters PostgreSQL dictates are not exceptions
    # being worked on: counted, not listed
    nfixed = len([k for k in seen if k.startswith('fixed-signature ')])
    for p in excused:
        print('check-house: allowed for now (%s): %s'
              % (os.path.basename(sys.argv[2]), p.split('\n')[0]))
    for k in sorted(allowed - seen):
        print('check-house: allow-list entry no longer needed: %s' % k)
    if problems:
        print('check-house: %d problem(s)' % len(problems))
        return 1
    print('check-house: clean (%d file(s), %d allowed exception(s), '
          '%d fixed signature(s))' % (len(files), len(excused), nfixed))
    return 0


if __name__ == '__main__':
    sys.exit(main())
