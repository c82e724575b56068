#!/usr/bin/env python3
"""Every prediction table in README.md and docs/*.md stays what strata computes.

A markdown table whose header has the cells `command` and `predicted busbw`
is a table of predictions: each row's command cell holds `strata coll ARGS`
(one size, `--sizes S:S`), its predicted cell the busbw of the chosen
algorithm in GB/s to one decimal, as `strata coll ARGS --json` gives it. When
the header also has `measured` and `miss`, the miss is predicted / measured -
1 in percent to one decimal; a measured range `a–b` counts from its nearer end
(0 inside it). With --update, stale figures are rewritten in place (review the
diff before committing).

usage: doc_tables.py STRATA SOURCE_DIR [--update]
"""
import json
import os

from doc_files import doc_files
import re
import subprocess
import sys

NUM = r'\d+(?:\.\d+)?'


def cells(line):
    return [c.strip() for c in line.strip().strip('|').split('|')]


def busbw(strata, args, cwd):
    env = dict(os.environ, STRATA_PROGRESS='0')
    run = subprocess.run([strata] + args + ['--json'], capture_output=True, text=True, env=env,
                         cwd=cwd, timeout=120)
    if run.returncode:
        raise RuntimeError(run.stderr.strip() or f'exit {run.returncode}')
    size = json.loads(run.stdout)['sizes'][0]
    for a in size['algos']:
        if a['algo'] == size['chosen']:
            return a['busbw_Bps'] / 1e9
    raise RuntimeError(f'no figures for the chosen {size["chosen"]}')


def miss(pred, measured):
    nums = [float(x) for x in re.findall(NUM, measured)]
    if not nums:
        return None
    lo, hi = min(nums), max(nums)
    ref = lo if pred < lo else hi if pred > hi else pred
    return 100 * (pred / ref - 1)


def fmt_miss(m):
    s = f'{m:+.1f} %'
    return s.replace('-', '\u2212') if m < 0 else s


def check_row(strata, path, row, col, update):
    """Stale cells of one row as (index, wanted) pairs."""
    m = re.match(r'^`strata (.*)`$', row[col['command']])
    if not m:
        return [(col['command'], '`strata coll ...`')]
    pred = busbw(strata, m.group(1).split(), os.path.dirname(path))
    want = {col['predicted busbw']: re.sub(NUM, f'{pred:.1f}', row[col['predicted busbw']], 1)}
    if 'measured' in col and 'miss' in col:
        mm = miss(round(pred, 1), row[col['measured']])
        if mm is not None:
            want[col['miss']] = re.sub(r'[+\-\u2212]?' + NUM + r' %', fmt_miss(mm),
                                       row[col['miss']], 1)
    return [(k, v) for k, v in want.items() if row[k] != v]


def check(strata, path, update):
    lines = open(path, encoding='utf-8').read().split('\n')
    bad = rows = 0
    col = None
    for i, line in enumerate(lines):
        if not line.startswith('|'):
            col = None
            continue
        row = cells(line)
        if col is None:
            names = [c.lower() for c in row]
            col = {n: k for k, n in enumerate(names)}
            if 'command' not in col or 'predicted busbw' not in col:
                col = {}
            continue
        if not col or set(line) <= set('|-: '):
            continue
        rows += 1
        try:
            stale = check_row(strata, path, row, col, update)
        except (RuntimeError, ValueError, KeyError, subprocess.TimeoutExpired) as e:
            print(f'{path}:{i + 1}: {e}')
            bad += 1
            continue
        for k, want in stale:
            if update:
                row[k] = want
            else:
                print(f'{path}:{i + 1}: column {k + 1} says {row[k]!r}, strata gives {want!r}')
                bad += 1
        if update and stale:
            lines[i] = '| ' + ' | '.join(row) + ' |'
    if update:
        open(path, 'w', encoding='utf-8').write('\n'.join(lines))
    return bad, rows


def main():
    strata, src = os.path.abspath(sys.argv[1]), sys.argv[2]
    update = '--update' in sys.argv[3:]
    docs = doc_files(src)
    bad = rows = 0
    for d in docs:
        b, r = check(strata, d, update)
        bad, rows = bad + b, rows + r
    print(f'doc tables: {rows} row(s) checked, {bad} stale cell(s)')
    sys.exit(1 if bad or not rows else 0)


main()
