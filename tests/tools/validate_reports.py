#!/usr/bin/env python3
"""Validates aitk-validate reports against reports/schema/report.schema.json.

Usage: validate_reports.py SCHEMA PATH...   (a PATH may be a folder: every
*.json below it is checked). Exits 1 naming each invalid file and the first
problem; 2 when there is nothing to check (a test must not pass vacuously);
77 when the jsonschema module is missing (CTest reports a skip, not a pass).
"""
import json
import pathlib
import sys

try:
    import jsonschema
except ImportError:
    print("jsonschema is not installed (ci/install-deps.sh installs python3-jsonschema)")
    sys.exit(77)


def main(argv):
    if len(argv) < 3:
        print(__doc__)
        return 2
    schema = json.loads(pathlib.Path(argv[1]).read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    files = []
    for arg in argv[2:]:
        p = pathlib.Path(arg)
        files.extend(sorted(p.rglob("*.json")) if p.is_dir() else [p])
    if not files:
        print("no report files found in", argv[2:])
        return 2
    bad = 0
    for f in files:
        try:
            doc = json.loads(f.read_text())
        except (OSError, ValueError) as e:
            print(f"{f}: not readable JSON: {e}")
            bad += 1
            continue
        errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
        if errors:
            bad += 1
            e = errors[0]
            where = "/".join(str(x) for x in e.path) or "(top)"
            print(f"{f}: {where}: {e.message} ({len(errors)} problem(s))")
    print(f"{len(files) - bad} of {len(files)} report(s) valid")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
