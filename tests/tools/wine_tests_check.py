#!/usr/bin/env python3
"""Checks that every test the Windows build runs under Wine is set up for it.

    wine_tests_check.py CTEST BUILD_DIR WINE SUITE_PREFIX FIXTURE START

Reads the suite as CTest sees it (`ctest --show-only=json-v1`) and fails,
naming each test, when a test run by the Wine loader WINE, directly or
through the script START (tests/tools/wine_test_start.sh),
  - has no WINEPREFIX in its environment: it would run in the user's own
    ~/.wine, outside the build tree and without the suite's server;
  - uses the suite's prefix SUITE_PREFIX without requiring the fixture
    FIXTURE that keeps that prefix's server alive (tests/tools/wine_server.sh);
    or
  - runs a test program (test_*.exe) with WINE itself, not through START,
    so a start that Wine lost would fail it.
Tests with a prefix of their own (a scratch prefix whose registry they
change) need no fixture: nothing else starts a server there.
"""
import json
import os
import subprocess
import sys


def properties(test):
    return {p["name"]: p["value"] for p in test.get("properties", [])}


def wine_program(command, wine, start):
    """The Windows program a command runs under WINE (itself or through START), or None."""
    if len(command) > 1 and command[0] == wine:
        return command[1]
    if len(command) > 3 and command[1] == start and command[2] == wine:
        return command[3]
    return None


def problems(suite, wine, suite_prefix, fixture, start):
    found = []
    for test in suite.get("tests", []):
        command = test.get("command") or []
        program = wine_program(command, wine, start)
        if program is None:
            continue
        props = properties(test)
        env = props.get("ENVIRONMENT", [])
        prefixes = [e.split("=", 1)[1] for e in env if e.startswith("WINEPREFIX=")]
        name = test["name"]
        if command[0] == wine and os.path.basename(program).startswith("test_"):
            found.append(f"{name}: runs its test program with Wine itself, not through {start}")
        if not prefixes:
            found.append(f"{name}: runs under Wine with no WINEPREFIX (it would use ~/.wine)")
        elif prefixes[-1] == suite_prefix and fixture not in props.get("FIXTURES_REQUIRED", []):
            found.append(f"{name}: uses the suite prefix but does not require the {fixture} fixture")
    return found


def main(argv):
    if len(argv) != 7:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    ctest, build_dir, wine, suite_prefix, fixture, start = argv[1:]
    listing = subprocess.run([ctest, "--show-only=json-v1"], cwd=build_dir,
                             capture_output=True, text=True, check=True)
    suite = json.loads(listing.stdout)
    wine_tests = [t for t in suite.get("tests", [])
                  if wine_program(t.get("command") or [], wine, start) is not None]
    found = problems(suite, wine, suite_prefix, fixture, start)
    for line in found:
        print(line)
    print(f"{len(wine_tests)} tests run under Wine; {len(found)} not set up for it")
    return 1 if found or not wine_tests else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
