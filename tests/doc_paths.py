#!/usr/bin/env python3
"""No doc cites a file the user does not have.

Every path README.md, docs/*.md and bench/README.md mention that looks like a file of this
repository — a relative markdown link target, or a word (in backticks or
plain text) that starts with one of the repository's top-level directories
(src/, docs/, tests/, tools/, bench/, data/, scripts/, cmake/, include/,
fuzz/, .ci/) — must exist in the source tree. Markdown links resolve from
the document's directory, words from the repository root (the way the docs
write them). Placeholders (<module>, NAME, *, {a,b}) are skipped: they name
a pattern, not a file. The shared/ tree beside the repository is not the
user's: a doc citing shared/... fails too.

usage: doc_paths.py SOURCE_DIR
"""
import os

from doc_files import doc_files
import re
import sys

TOP = ('src', 'docs', 'tests', 'tools', 'bench', 'data', 'scripts', 'cmake', 'include',
       'fuzz', '.ci', 'shared')
WORD = re.compile(r'(?<![\w./-])((?:%s)/[\w./+-]*[\w/])' % '|'.join(re.escape(t) for t in TOP))
LINK = re.compile(r'\]\(([^)\s#]+)(?:#[^)]*)?\)')
PLACEHOLDER = re.compile(r'[<>*{}]|\b[A-Z]{2,}\b|\.\.\.')


def check(src, path):
    bad = []
    base = os.path.dirname(path)
    text = open(path, encoding='utf-8').read()
    for no, line in enumerate(text.split('\n'), 1):
        cands = []
        for m in LINK.finditer(line):
            t = m.group(1)
            if re.match(r'^[a-z]+:', t) or t.startswith('/'):
                continue  # a URL or an absolute path on the user's machine
            cands.append((t, os.path.normpath(os.path.join(base, t))))
        for m in WORD.finditer(line):
            t = m.group(1)
            after = line[m.end():m.end() + 1]
            if after in '<*{' and after:
                continue  # the word goes on with a placeholder
            cands.append((t, os.path.join(src, t)))
        for shown, full in cands:
            if PLACEHOLDER.search(shown):
                continue
            if shown.startswith('shared/') or not os.path.exists(full.rstrip('/')):
                bad.append(f'{os.path.relpath(path, src)}:{no}: cites {shown}, which the '
                           'source tree does not have')
    return bad


def main():
    src = os.path.abspath(sys.argv[1])
    docs = doc_files(src)
    docs.insert(1, os.path.join(src, 'bench', 'README.md'))
    bad = [b for d in docs for b in check(src, d)]
    for b in bad:
        print(b)
    print(f'doc paths: {len(bad)} missing')
    sys.exit(1 if bad else 0)


main()
