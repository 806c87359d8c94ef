#!/usr/bin/env python3
"""Writes tests/reliability/corpus: malformed copies of the synthetic report
that render, compare and trend must all refuse (or, for ok-*, all accept).

Run from the repository root; the files are committed, so this runs only when
the corpus changes. Each file breaks one thing: the JSON itself (truncated,
two values, a NUL, deep nesting), a list's type, a figure's type or sign, a
name given twice, the schema version, the summary."""
import json, copy, os
src = json.load(open('tests/reports/fixtures/synthetic-report.json'))
out = 'tests/reliability/corpus'
def w(name, data, raw=False):
    p = os.path.join(out, name + '.json')
    with open(p, 'wb') as f:
        f.write(data if raw else json.dumps(data, indent=1, allow_nan=True).encode())
def mut(name, fn):
    r = copy.deepcopy(src); fn(r); w(name, r)
text = open('tests/reports/fixtures/synthetic-report.json','rb').read()
w('truncated', text[:len(text)//2], True)
w('empty', b'', True)
w('null', b'null\n', True)
w('top-array', b'[]\n', True)
w('trailing-garbage', text.rstrip() + b'\n}garbage\n', True)
w('two-objects', text + text, True)
w('nul-byte-raw', text.replace(b'"flux1-dev"', b'"flux\x001-dev"', 1), True)
w('deep-nesting', b'{"workloads": ' + b'[' * 5000 + b']' * 5000 + b'}\n', True)
w('ok-invalid-utf8', text.replace(b'"flux1-dev"', b'"flux\xff\xfe-dev"', 1), True)
w('nan-literal', text.replace(b'"median": 2.3', b'"median": NaN', 1), True)
w('hex-number', text.replace(b'"median": 2.3', b'"median": 0x10', 1), True)
def wl(i=0): return lambda r: r['workloads'][i]
def set_median(v):
    def f(r): r['workloads'][0]['step_time_s']['median'] = v
    return f
mut('median-negative', set_median(-2.3))
mut('median-null', set_median(None))
mut('median-string', set_median("2.3"))
mut('median-zero', set_median(0))
mut('median-bool', set_median(True))
w('median-infinite', text.replace(b'"median": 2.3', b'"median": 1e999', 1), True)
w('median-huge', text.replace(b'"median": 2.3', b'"median": 1e308', 1), True)
mut('workloads-object', lambda r: r.__setitem__('workloads', {}))
mut('workloads-string', lambda r: r.__setitem__('workloads', "none"))
mut('workload-entry-string', lambda r: r['workloads'].__setitem__(0, "flux1-dev"))
mut('workload-name-missing', lambda r: r['workloads'][0].pop('name'))
mut('workload-name-number', lambda r: r['workloads'][0].__setitem__('name', 7))
mut('workload-duplicate-names', lambda r: r['workloads'].append(copy.deepcopy(r['workloads'][0])))
mut('step-time-array', lambda r: r['workloads'][0].__setitem__('step_time_s', [2.3]))
mut('micro-object', lambda r: r.__setitem__('micro', {}))
mut('micro-value-negative', lambda r: r['micro'][0].__setitem__('value', -11.8))
mut('micro-value-string', lambda r: r['micro'][0].__setitem__('value', "11.8"))
mut('micro-value-null', lambda r: r['micro'][0].__setitem__('value', None))
mut('micro-duplicate-names', lambda r: r['micro'].append(copy.deepcopy(r['micro'][0])))
w('micro-value-infinite', text.replace(b'"value": 11.8', b'"value": -1e999', 1), True)
mut('schema-missing', lambda r: r.pop('schema_version'))
mut('schema-future', lambda r: r.__setitem__('schema_version', "99.0"))
mut('schema-number', lambda r: r.__setitem__('schema_version', 1))
mut('checks-object', lambda r: r.__setitem__('checks', {}))
mut('check-entry-number', lambda r: r['checks'].__setitem__(0, 3))
mut('summary-missing', lambda r: r.pop('summary'))
mut('summary-string', lambda r: r.__setitem__('summary', "pass"))
mut('verdict-unknown', lambda r: r['summary'].__setitem__('verdict', "maybe"))
mut('created-at-number', lambda r: r.__setitem__('created_at', 17))
mut('name-nul-escape', lambda r: r['workloads'][0].__setitem__('name', "flux\u00001-dev"))
