#!/usr/bin/env python3
"""Choose the kselftest cases the debug kernel runs (harness/lib/coverage.sh).

Reads the gcov counters of each case (DATA/PROGRAM/CASE/*.gcda, written by
harness/guest-coverage), keeps the lines that count (every line of the
files under a WHOLE prefix, the lines ADDED lists, "PATH LINE", of the
others), and covers every such line that some case runs with the fewest
debug-kernel seconds: first the cases that must always run there, then,
greedily, the case with the most new lines per second.  Writes the cases
left out, each with the chosen cases that cover its lines.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument('--build', required=True, help='O= directory with the .gcno files')
    p.add_argument('--tree', required=True, help='the source tree')
    p.add_argument('--data', required=True, help='DATA/PROGRAM/CASE/*.gcda')
    p.add_argument('--results', required=True, help='"PROGRAM CASE RESULT MS" per case')
    p.add_argument('--added', required=True, help='"PATH LINE" per added line')
    p.add_argument('--whole', nargs='*', default=[], help='path prefixes whose every line counts')
    p.add_argument('--times', nargs='*', default=[], help='"PROGRAM CASE MS" files of debug runs')
    p.add_argument('--always', default='', help='programs whose cases all run')
    p.add_argument('--header', default='', help='comment lines to start the output with')
    p.add_argument('--out', required=True)
    return p.parse_args()


def gcno_paths(build):
    """Basename of each .gcno under BUILD -> its path."""
    found = {}
    for root, _, files in os.walk(build):
        for f in files:
            if f.endswith('.gcno'):
                found[f[:-5]] = os.path.join(root, f)
    return found


def case_lines(case_dir, gcno, tree):
    """The (path, line) pairs gcov knows in one case's files, and those run."""
    known, run = set(), set()
    with tempfile.TemporaryDirectory() as tmp:
        gcdas = []
        for f in sorted(os.listdir(case_dir)):
            if not f.endswith('.gcda') or f[:-5] not in gcno:
                continue
            os.symlink(gcno[f[:-5]], os.path.join(tmp, f[:-5] + '.gcno'))
            os.symlink(os.path.abspath(os.path.join(case_dir, f)), os.path.join(tmp, f))
            gcdas.append(os.path.join(tmp, f))
        if not gcdas:
            return known, run
        out = subprocess.run(['gcov', '--json-format', '--stdout', '-o', tmp] + gcdas,
                             cwd=tmp, capture_output=True, text=True, check=True).stdout
    dec = json.JSONDecoder()
    i = 0
    while i < len(out):
        while i < len(out) and out[i].isspace():
            i += 1
        if i >= len(out):
            break
        doc, i = dec.raw_decode(out, i)
        for f in doc.get('files', []):
            path = os.path.relpath(os.path.normpath(f['file']), tree)
            for ln in f['lines']:
                known.add((path, ln['line_number']))
                if ln['count'] > 0:
                    run.add((path, ln['line_number']))
    return known, run


def main():
    a = parse_args()
    added = set()
    with open(a.added) as f:
        for line in f:
            path, n = line.split()
            added.add((path, int(n)))
    gcno = gcno_paths(a.build)
    tree = os.path.realpath(a.tree)

    whole = tuple(a.whole)

    def counts(line):
        return line in added or line[0].startswith(whole)

    status, gcov_ms = {}, {}
    with open(a.results) as f:
        for line in f:
            w = line.split()
            if len(w) == 4:
                status[(w[0], w[1])] = w[2]
                gcov_ms[(w[0], w[1])] = int(w[3])
    debug_ms = {}
    for t in a.times:
        with open(t) as f:
            for line in f:
                w = line.split()
                if len(w) == 3:
                    key = (w[0], w[1])
                    debug_ms[key] = max(debug_ms.get(key, 0), int(w[2]))

    cover, executable = {}, set()
    for case in sorted(status):
        d = os.path.join(a.data, case[0], case[1])
        known, run = case_lines(d, gcno, tree) if os.path.isdir(d) else (set(), set())
        executable |= {x for x in known if counts(x)}
        cover[case] = {x for x in run if counts(x)}
    everything = set().union(*cover.values()) if cover else set()

    # A case without a debug time (new, or left out of the runs read) is
    # guessed from its time here, times the median ratio of those with both
    ratios = sorted(debug_ms[c] / gcov_ms[c] for c in debug_ms if gcov_ms.get(c))
    ratio = ratios[len(ratios) // 2] if ratios else 5

    def cost(case):
        """Seconds the case takes the debug kernel."""
        return max(debug_ms.get(case, ratio * gcov_ms.get(case, 1000)), 1) / 1000

    always = set(a.always.split())
    # A case that skipped or failed here may run more in the debug kernel
    chosen = [c for c in sorted(cover) if c[0] in always or status[c] != 'pass']
    covered = set().union(*(cover[c] for c in chosen)) if chosen else set()
    rest = [c for c in sorted(cover) if c not in chosen]
    while True:
        best = max(rest, key=lambda c: (len(cover[c] - covered) / cost(c), c[0], c[1]),
                   default=None)
        if best is None or not cover[best] - covered:
            break
        chosen.append(best)
        rest.remove(best)
        covered |= cover[best]
    assert covered == everything

    lines = []
    for c in sorted(rest):
        need, by = set(cover[c]), []
        while need:
            b = max(chosen, key=lambda x: (len(cover[x] & need), -cost(x)))
            by.append(b)
            need -= cover[b]
        lines.append('%s %s\t%s\n' % (c[0], c[1], ' '.join('%s:%s' % b for b in by) or '-'))
    total = sum(cost(c) for c in cover)
    kept = sum(cost(c) for c in chosen)
    with open(a.out, 'w') as f:
        f.write(a.header)
        f.write('# %d of %d cases left out, %.0f of %.0f debug-kernel seconds; the %d\n'
                '# lines that count that the cases run (of %d executable) all run\n'
                '# in the %d cases kept\n'
                % (len(rest), len(cover), total - kept, total, len(everything),
                   len(executable), len(chosen)))
        f.writelines(lines)
    print('coverage: %d of %d executable lines that count run by the cases; %d of %d '
          'cases kept, %.0f of %.0f debug-kernel seconds'
          % (len(everything), len(executable), len(chosen), len(cover), kept, total))


if __name__ == '__main__':
    sys.exit(main())
