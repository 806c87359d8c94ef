#!/usr/bin/env python3
"""Real-world acceptance corpus for `deps` on Windows torch wheels.

The wheels are PyPI's own torch win_amd64 wheels, pinned by version and
sha256, fetched with pip into a cache outside the build tree (never into
the repository), ${XDG_CACHE_HOME:-~/.cache}/aitk-validate/realworld/
windows. Only torch/lib/*.dll is unpacked. Each DLL is judged
twice and the verdicts compared DLL by DLL:

  * the oracle: Wine's loader, in a child process, loading the DLL the way
    torch/__init__.py does (loadlib.c: AddDllDirectory(torch\\lib), then
    LoadLibraryExW with LOAD_LIBRARY_SEARCH_DEFAULT_DIRS |
    LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR); WINEDEBUG=err+module makes it name
    every import it could not find and who needed it;
  * the tool: `aitk-validate deps --json --windows-root PREFIX/drive_c`,
    where System32 is the Wine prefix's own (real PE DLLs of the Wine
    project, the same folder the oracle's loader searches).

Agreement: the loader loads the DLL exactly when the tool finds nothing
missing; when it refuses, the names the tool reports missing or unknown
are the loader's root causes (a library it names as not found that is
not itself a requester whose own import failed), and every link the tool
reports (requester, name) is one the loader reported. Exit 0 all agree,
1 a disagreement, 77 skipped (registry unreachable, Wine or mingw-w64
missing) with the reason on stderr.
"""
import argparse
import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import zipfile

# PyPI's files, sha256 as the registry publishes it (checked here too).
WHEELS = [
    ("2.4.0", "torch-2.4.0-cp311-cp311-win_amd64.whl",
     "97730014da4c57ffacb3c09298c6ce05400606e890bd7a05008d13dd086e46b1"),
    ("2.4.1", "torch-2.4.1-cp311-cp311-win_amd64.whl",
     "092e7c2280c860eff762ac08c4bdcd53d701677851670695e0c22d6d345b269c"),
    ("2.15.0", "torch-2.15.0-cp311-cp311-win_amd64.whl",
     "d2c5938f593a47cf6d151a16d130a3cc3f0c105df1b905a571efc00b01e38c1f"),
]
SKIP = 77
WINE_MISSING = re.compile(
    r'import_dll Library (\S+) \(which is needed by L"(?:[^"]*\\)?([^"\\]+)"\) not found')


def skip(why):
    print(f"realworld.windows: skipped: {why}", file=sys.stderr)
    sys.exit(SKIP)


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def registry_reachable():
    try:
        socket.create_connection(("pypi.org", 443), timeout=15).close()
        return True
    except OSError:
        return False


def pip_command():
    for cmd in ([sys.executable, "-m", "pip"], ["pip3"], ["pip"]):
        try:
            if subprocess.run(cmd + ["--version"], capture_output=True).returncode == 0:
                return cmd
        except OSError:
            pass
    skip("pip is not installed (Debian package python3-pip, ci/install-deps.sh)")


def fetch(cache, version, name, want, package="torch"):
    """The wheel in the cache, downloaded with pip when absent; its hash checked."""
    path = os.path.join(cache, "dl", name)
    if os.path.exists(path) and sha256(path) == want:
        return path
    os.makedirs(os.path.dirname(path), exist_ok=True)
    cmd = pip_command() + ["download", "--no-deps", "--only-binary=:all:", "--platform",
                           "win_amd64", "--python-version", "3.11", "--dest",
                           os.path.dirname(path), f"{package}=={version}"]
    print("realworld.windows: " + " ".join(cmd), flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0 or not os.path.exists(path):
        if not registry_reachable():
            skip(f"the package registry (pypi.org) cannot be reached; {package} {version} "
                 f"is not in the cache {cache}")
        print(r.stdout[-2000:] + r.stderr[-2000:], file=sys.stderr)
        sys.exit(f"pip download of {package} {version} failed")
    got = sha256(path)
    if got != want:
        os.remove(path)
        sys.exit(f"{name}: sha256 {got}, expected {want}: removed from the cache")
    return path


def extract(cache, version, wheel, want):
    """torch/lib/*.dll of the wheel under CACHE/x/VERSION; returns torch/lib."""
    root = os.path.join(cache, "x", version)
    lib = os.path.join(root, "torch", "lib")
    stamp = os.path.join(root, ".sha256")
    if os.path.exists(stamp) and open(stamp).read().strip() == want:
        return lib
    shutil.rmtree(root, ignore_errors=True)
    with zipfile.ZipFile(wheel) as z:
        for m in z.namelist():
            if m.startswith("torch/lib/") and m.lower().endswith(".dll") and m.count("/") == 2:
                z.extract(m, root)
    with open(stamp, "w") as f:
        f.write(want + "\n")
    return lib


def tools(work, source_dir):
    wine = shutil.which("wine64") or shutil.which("wine")
    if not wine and os.access("/usr/lib/wine/wine64", os.X_OK):
        wine = "/usr/lib/wine/wine64"
    if not wine:
        skip("Wine is not installed (Debian package wine64, ci/install-deps.sh)")
    gcc = shutil.which("x86_64-w64-mingw32-gcc")
    if not gcc:
        skip("mingw-w64 is not installed (gcc-mingw-w64-x86-64, ci/install-deps.sh)")
    exe = os.path.join(work, "loadlib.exe")
    src = os.path.join(source_dir, "loadlib.c")
    if not os.path.exists(exe) or os.path.getmtime(exe) < os.path.getmtime(src):
        subprocess.run([gcc, "-municode", "-O1", "-o", exe, src], check=True)
    return wine, exe


def wine_env(prefix):
    env = dict(os.environ)
    env.update(WINEPREFIX=prefix, WINEDEBUG="-all,err+module", WINEDLLOVERRIDES="mscoree,mshtml=")
    return env


def winpath(p):
    return "Z:" + os.path.abspath(p).replace("/", "\\")


def oracle(wine, exe, prefix, dll, lib):
    """('loaded' | 'error N', {(requester, missing)}) from Wine's loader.
    A run that printed nothing is Wine failing to start the helper, not a
    verdict on the DLL (seen once in many CI runs, under load: exit 1 and no
    output): it is run once more, and if it fails again its last error line
    goes into the verdict."""
    for _ in range(2):
        r = subprocess.run([wine, exe, winpath(dll), winpath(lib)], capture_output=True,
                           text=True, env=wine_env(prefix), timeout=600)
        lines = [l.strip() for l in r.stdout.splitlines() if l.strip()]
        if lines:
            break
    if lines:
        verdict = lines[-1]
    else:
        errs = [l.strip() for l in r.stderr.splitlines() if l.strip()]
        verdict = f"no verdict (exit {r.returncode}" + (f": {errs[-1][:200]})" if errs else ")")
    pairs = {(req.lower(), lib_.lower()) for lib_, req in WINE_MISSING.findall(r.stderr)}
    return verdict, pairs


def root_causes(pairs):
    """The names the loader could not find that are not themselves requesters."""
    requesters = {req for req, _ in pairs}
    return {name for _, name in pairs if name not in requesters}


def tool(exe, winroot, dll):
    r = subprocess.run([exe, "deps", "--json", "--windows-root", winroot, dll],
                       capture_output=True, text=True, timeout=600)
    if r.returncode not in (0, 1):
        sys.exit(f"aitk-validate deps {dll}: exit {r.returncode}: {r.stderr.strip()}")
    root = json.loads(r.stdout)["roots"][0]
    problems = [p for p in root["problems"] if not p.get("delay_load")]
    return r.returncode, problems, root.get("unknown", [])


def link(p):
    chain = [c.lower() for c in p["chain"]]
    return (chain[-2], chain[-1]) if len(chain) > 1 else (chain[0], chain[0])


def compare(version, name, t, o):
    """A disagreement in words, or None."""
    rc, problems, unknown = t
    verdict, pairs = o
    named = {p["name"].lower() for p in problems} | {u["name"].lower() for u in unknown}
    if verdict == "loaded":
        if rc != 0 or unknown:
            return f"the loader loads it; the tool reports {sorted(named)}"
        return None
    causes = root_causes(pairs)
    if named != causes:
        return f"the loader lacks {sorted(causes)}; the tool reports {sorted(named)}"
    for p in problems + unknown:
        if link(p) not in pairs:
            return f"the tool reports {' -> '.join(p['chain'])}; the loader never tried that link"
    if rc == 0 and not unknown:
        return "the loader refuses it; the tool says nothing is missing"
    return None


def say(t, o):
    rc, problems, unknown = t
    if rc == 0 and not unknown:
        tv = "ok"
    else:
        tv = "; ".join([f"{p['kind']}: {' -> '.join(p['chain'])}" for p in problems] +
                       [f"unknown: {' -> '.join(u['chain'])}" for u in unknown])
    causes = root_causes(o[1])
    ov = o[0] + (f" (not found: {', '.join(sorted(causes))})" if causes else "")
    return tv, ov


def check_240(lib, results):
    """torch 2.4.0's known break, from the wheel itself and both judges."""
    bad = []
    if os.path.exists(os.path.join(lib, "libomp140.x86_64.dll")):
        bad.append("libomp140.x86_64.dll is in the 2.4.0 wheel")
    for root, chain in (("fbgemm.dll", ["fbgemm.dll", "libomp140.x86_64.dll"]),
                        ("torch_cpu.dll", ["torch_cpu.dll", "libomp140.x86_64.dll"]),
                        ("torch_cpu.dll", ["torch_cpu.dll", "fbgemm.dll",
                                           "libomp140.x86_64.dll"])):
        t, o = results[root]
        hit = [p for p in t[1] if [c.lower() for c in p["chain"]] == chain]
        if not hit:
            bad.append(f"{root}: the tool does not name {' -> '.join(chain)}")
        elif "2.4.1" not in ((hit[0].get("remedy") or {}).get("fix") or ""):
            bad.append(f"{root}: the fix for {' -> '.join(chain)} does not say to upgrade to 2.4.1")
        if (chain[-2], chain[-1]) not in o[1]:
            bad.append(f"{root}: Wine's loader does not report {chain[-2]} -> {chain[-1]}")
    return bad


def healthy_without_root(exe, lib):
    """Without --windows-root what System32 holds is unknown, not missing:
    the healthy 2.4.1 wheel (every DLL loads above) must still pass."""
    dlls = [os.path.join(lib, d) for d in sorted(os.listdir(lib))]
    r = subprocess.run([exe, "deps"] + dlls, capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        return [f"torch 2.4.1 without --windows-root: exit {r.returncode}, not 0:\n"
                + r.stdout[-3000:]]
    return []


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--cache", default=os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"),
        "aitk-validate", "realworld"))
    a = ap.parse_args()
    # Beside the Linux corpus's files in the same cache: ours under windows/.
    a.cache = os.path.join(a.cache, "windows")
    os.makedirs(a.work, exist_ok=True)
    wine, loadlib = tools(a.work, a.source_dir)
    prefix = os.path.join(a.work, "wineprefix")
    subprocess.run([wine, "wineboot", "-i"], env=wine_env(prefix), capture_output=True,
                   timeout=600)
    winroot = os.path.join(prefix, "drive_c")
    if not os.path.isdir(os.path.join(winroot, "windows", "system32")):
        sys.exit(f"the Wine prefix {prefix} has no windows/system32")
    failures, rows = run_wheels(a, wine, loadlib, prefix, winroot)
    print("| torch | DLL | aitk-validate deps | Wine's loader | agree |")
    print("|---|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(r) + " |")
    for f in failures:
        print(f"DISAGREE: {f}", file=sys.stderr)
    sys.exit(1 if failures else 0)


def run_wheels(a, wine, loadlib, prefix, winroot):
    """Every DLL of every wheel: the tool's answer and the loader's, side by side."""
    failures, rows = [], []
    for version, name, want in WHEELS:
        lib = extract(a.cache, version, fetch(a.cache, version, name, want), want)
        results = {}
        for dll in sorted(os.listdir(lib)):
            path = os.path.join(lib, dll)
            t, o = tool(a.tool, winroot, path), oracle(wine, loadlib, prefix, path, lib)
            results[dll] = (t, o)
            why = compare(version, dll, t, o)
            rows.append((version, dll) + say(t, o) + ("yes" if not why else "NO",))
            if why:
                failures.append(f"torch {version} {dll}: {why}")
        if version == "2.4.0":
            failures += [f"torch 2.4.0: {b}" for b in check_240(lib, results)]
        if version == "2.4.1":
            failures += healthy_without_root(a.tool, lib)
    return failures, rows


if __name__ == "__main__":
    main()
