#!/usr/bin/env python3
"""Every example of the strata command in README.md and docs/*.md stays true.

A block that starts with a line `$ strata ARGS` (up to the closing ```) is an
excerpt of that command's output: every line of it other than `...` must be a
line the command prints today (stdout and stderr). `strata bench` blocks are
measurements of one machine at one time, and blocks naming a file that does
not exist illustrate several files' errors: both are skipped. With --update, a
stale line is replaced by the output line that starts with the same words
(review the diff before committing).

usage: doc_examples.py STRATA SOURCE_DIR [--update]
"""
import os

from doc_files import doc_files
import re
import subprocess
import sys


def key(line):
    """The leading words of a line, up to its first figure."""
    m = re.match(r'^\s*([^\d]*?)\s*(?=[-+]?\d|$)', line)
    return m.group(1) if m else line.strip()


def check(strata, path, update):
    env = dict(os.environ, STRATA_PROGRESS='0')
    lines = open(path, encoding='utf-8').read().split('\n')
    bad = 0
    changed = False
    i = 0
    while i < len(lines):
        m = re.match(r'^\$ strata(.*?)(\s+#.*)?$', lines[i])
        if not m:
            i += 1
            continue
        args = m.group(1).split()
        j = i + 1
        while j < len(lines) and not lines[j].startswith('```'):
            j += 1
        # bench output is one machine's measurement; a block whose file does not
        # exist (formats.md's bad.json) illustrates the errors of several files
        files = [a for a in args if a.endswith(('.json', '.xml'))]
        if (args and args[0] == 'bench') or any(
                not os.path.exists(os.path.join(os.path.dirname(path), f)) for f in files):
            i = j
            continue
        run = subprocess.run([strata] + args, capture_output=True, text=True, env=env,
                             cwd=os.path.dirname(path), timeout=120)
        out = [l.rstrip() for l in (run.stdout + run.stderr).split('\n')]
        have = set(out)
        for k in range(i + 1, j):
            doc = lines[k].rstrip()
            if not doc.strip() or '...' in doc or doc in have:
                continue
            alt = [o for o in out if o.strip() and key(o) == key(doc)]
            if update and len(alt) == 1:
                lines[k] = alt[0]
                changed = True
                continue
            bad += 1
            print(f'{path}:{k + 1}: `strata {" ".join(args)}` no longer prints:\n  {doc}')
        i = j
    if changed:
        open(path, 'w', encoding='utf-8').write('\n'.join(lines))
    return bad


def main():
    strata, src = os.path.abspath(sys.argv[1]), sys.argv[2]
    update = '--update' in sys.argv[3:]
    docs = doc_files(src)
    bad = sum(check(strata, d, update) for d in docs)
    print(f'doc examples: {bad} stale line(s)')
    sys.exit(1 if bad else 0)


main()
