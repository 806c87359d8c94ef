#!/usr/bin/env python3
"""Real-world corpus, Linux (issue 20): aitk-validate against real PyPI wheels.

Each layout is a real virtual environment installed from PyPI at test time,
pinned by version and sha256 (requirements-*.txt, pip --require-hashes), in a
cache outside the build tree that is filled once and reused:
${XDG_CACHE_HOME:-$HOME/.cache}/aitk-validate/realworld/linux/<layout>.

The tool's verdicts are compared with oracles that share no code with it:
  * ELF verdicts: ldd's "not found" lines and the real dlopen (ctypes.CDLL)
    in a fresh process per library, one outside Python and, for a library
    that needs Python's symbols, one inside the interpreter; for a library
    that fails alone, whether a library of its folder that lists it as
    NEEDED (readelf) brings it into the process's maps when loaded;
  * versions: the library's own version function called in a fresh process
    (ctypes), and the wheel that lists the file in its RECORD
    (importlib.metadata);
  * the library torch really loads: /proc/self/maps of `import torch`;
  * Python verdicts: `python -c "import torch, torchvision"` and the CUDA
    versions torch and torchvision report.

Exit 77 (CTest: skipped) when PyPI cannot be reached to fill the cache, or
when this Python has no pinned wheels; the reason is printed.
"""
import argparse
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import urllib.request

SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))
failures = []
# Set for an AddressSanitizer build (--sanitized). Its runtime intercepts
# dlopen, so a library's own dlopen of its siblings is resolved as if
# libasan had called it, without the library's RUNPATH ($ORIGIN): cuDNN 9's
# libcudnn.so.9 then binds the system's libcudnn_graph.so.9 and
# cudnnGetVersion answers for that one (seen with LD_DEBUG=libs). Only
# that answer is the sanitizer's, and only it is not compared then.
SANITIZED = False


def check(ok, what):
    print(("ok    " if ok else "FAIL  ") + what, flush=True)
    if not ok:
        failures.append(what)


def finish(readings, oracle):
    """A corpus script's last lines and exit status: its disagreements with
    `oracle`, or that all `readings` agree."""
    if failures:
        print("\n%d disagreement(s) with %s" % (len(failures), oracle))
        return 1
    print("\nall %d readings agree with %s" % (readings, oracle))
    return 0


def cache_root():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "aitk-validate", "realworld", "linux")


def registry_reachable():
    index = os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple").rstrip("/")
    try:
        urllib.request.urlopen(index + "/pip/", timeout=20).read(1)
        return None
    except Exception as e:  # any failure means: no registry
        return "%s: %s" % (index, e)


def ensure_layout(name, requirements):
    """The venv of one layout, installed once per cache (a marker holds the
    sha256 of the requirements file it was installed from)."""
    root = cache_root()
    os.makedirs(root, exist_ok=True)
    venv = os.path.join(root, name)
    marker = os.path.join(venv, ".aitk-realworld-installed")
    want = hashlib.sha256(open(requirements, "rb").read()).hexdigest()
    with open(os.path.join(root, name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two tests (ctest -j) never install at once
        if os.path.exists(marker) and open(marker).read().strip() == want:
            return venv
        why = registry_reachable()
        if why:
            print("SKIP: the layout %s is not in the cache (%s) and the package registry "
                  "cannot be reached: %s" % (name, venv, why))
            sys.exit(SKIP)
        print("installing %s into %s (once per cache)" % (requirements, venv), flush=True)
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        r = subprocess.run([os.path.join(venv, "bin", "python"), "-m", "pip", "install",
                            "--no-cache-dir", "--disable-pip-version-check", "--require-hashes",
                            "--only-binary=:all:", "-r", requirements])
        if r.returncode != 0:
            why = registry_reachable()
            if why:
                print("SKIP: pip could not install %s: %s" % (name, why))
                sys.exit(SKIP)
            sys.exit("pip install -r %s failed with %d" % (requirements, r.returncode))
        with open(marker, "w") as f:
            f.write(want + "\n")
    return venv


def corpus_args():
    """--exe and --out of a corpus script, the output folder made; None when
    this Python cannot take the pinned wheels (the caller skips with SKIP)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--exe", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    if sys.version_info[:2] not in ((3, 11), (3, 12)):
        print("SKIP: the pinned wheels are for CPython 3.11 and 3.12; this is %s"
              % sys.version.split()[0])
        return None
    os.makedirs(a.out, exist_ok=True)
    return a


def run_tool(exe, venv, level, out, env=None):
    args = [exe, "--python", venv, "--json", out, "--quiet", "--no-color"]
    args += ["--quick"] if level == "quick" else ["--model", "flux1-dev", "--steps", "1"]
    r = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                       env=env)
    if r.returncode not in (0, 1):
        sys.exit("%s exited %d: %s" % (" ".join(args), r.returncode, r.stderr[-2000:]))
    with open(out) as f:
        return json.load(f)


def requirements_check(exe, venv, checkout, out, env=None):
    """python.requirements as the tool judges `checkout` (--aitk-dir) in
    the environment `venv`, at --quick, in the environment variables `env`
    (None: this process's): the check's record, {} if none."""
    args = [exe, "--python", venv, "--aitk-dir", checkout, "--quick", "--json", out, "--quiet",
            "--no-color"]
    r = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                       env=env)
    if r.returncode not in (0, 1):
        sys.exit("%s exited %d: %s" % (" ".join(args), r.returncode, r.stderr[-2000:]))
    with open(out) as f:
        return checks(json.load(f)).get("python.requirements", {})


def checks(report):
    return {c["id"]: c for c in report["checks"]}


def env_section(report, key):
    return report.get("environment", {}).get(key, {})


# ---- oracles ---------------------------------------------------------------

DLOPEN = r"""
import ctypes, json, sys
path, fn = sys.argv[1], sys.argv[2]
r = {}
try:
    lib = ctypes.CDLL(path)
    r['loaded'] = True
except OSError as e:
    r['loaded'] = False
    r['error'] = str(e)
if r['loaded'] and fn:
    f = getattr(lib, fn)
    if fn in ('cudnnGetVersion', 'cublasLtGetVersion'):
        f.restype = ctypes.c_size_t
        r['values'] = [f()]
    elif fn == 'cublasGetProperty':
        v = [ctypes.c_int(), ctypes.c_int(), ctypes.c_int()]
        for i in range(3):  # MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL
            f(i, ctypes.byref(v[i]))
        r['values'] = [x.value for x in v]
    else:
        x = ctypes.c_int()
        f(ctypes.byref(x))
        r['values'] = [x.value]
print(json.dumps(r))
"""


def oracle_dlopen(python, path, fn=""):
    """The real dlopen of `path` in a fresh Python process (ctypes.CDLL)."""
    r = subprocess.run([python, "-c", DLOPEN, path, fn], capture_output=True, text=True,
                       timeout=300)
    if r.returncode != 0:
        return {"loaded": False, "error": "process ended %d: %s" % (r.returncode, r.stderr[-300:])}
    return json.loads(r.stdout.strip().splitlines()[-1])


MAPPED_BY = r"""
import ctypes, json, os, sys
host, path = sys.argv[1], sys.argv[2]
r = {}
try:
    ctypes.CDLL(host, mode=ctypes.RTLD_GLOBAL)
    want = os.path.realpath(path)
    r['mapped'] = any(os.path.realpath(l.split()[-1]) == want
                      for l in open('/proc/self/maps') if '.so' in l)
except OSError as e:
    r['mapped'] = False
    r['error'] = str(e)
print(json.dumps(r))
"""


def oracle_needed(path):
    """The DT_NEEDED names of an ELF file, as binutils' readelf prints them."""
    r = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, timeout=120)
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", r.stdout)


def oracle_loaded_inside(python, path):
    """For a library that will not load alone: the first library of its own
    folder that lists it as NEEDED and, loaded in a fresh Python process,
    brings it into /proc/self/maps (the loader's answer to whether it loads
    where it is used); "" when there is none."""
    folder, name = os.path.split(path)
    for f in sorted(os.listdir(folder)):
        host = os.path.join(folder, f)
        if host == path or ".so" not in f or name not in oracle_needed(host):
            continue
        r = subprocess.run([python, "-c", MAPPED_BY, host, path], capture_output=True,
                           text=True, timeout=300)
        if r.returncode == 0 and json.loads(r.stdout.strip().splitlines()[-1])["mapped"]:
            return host
    return ""


def oracle_ldd_missing(path):
    r = subprocess.run(["ldd", path], capture_output=True, text=True, timeout=120)
    return [l.strip() for l in r.stdout.splitlines() if "not found" in l]


def oracle_version(kind, values):
    """Each library's documented encoding of its version function's answer."""
    if kind == "cudart":
        return "%d.%d" % (values[0] // 1000, values[0] % 1000 // 10)
    if kind == "cublas":
        return "%d.%d.%d" % tuple(values)
    s = values[0]
    if kind == "cudnn" and s < 90000:
        return "%d.%d.%d" % (s // 1000, s // 100 % 10, s % 100)
    return "%d.%d.%d" % (s // 10000, s // 100 % 100, s % 100)


VERSION_FN = {"cudart": "cudaRuntimeGetVersion", "cublas": "cublasGetProperty",
              "cublaslt": "cublasLtGetVersion", "cudnn": "cudnnGetVersion",
              "nccl": "ncclGetVersion"}

OWNER = r"""
import importlib.metadata as md, json, os, sys
want = {os.path.realpath(p): p for p in sys.argv[1:]}
out = {}
for d in md.distributions():
    for f in d.files or []:
        full = os.path.realpath(str(d.locate_file(f)))
        if full in want:
            out[want[full]] = [d.metadata['Name'], d.version]
print(json.dumps(out))
"""


def oracle_owners(venv_python, paths):
    """The wheel whose RECORD lists each file, by Python's own importlib.metadata."""
    r = subprocess.run([venv_python, "-c", OWNER] + paths, capture_output=True, text=True,
                       check=True, timeout=300)
    return json.loads(r.stdout)


def same_numbers(short, full):
    """'12.4.5' agrees with '12.4.5.8': the shorter one's numbers start the longer."""
    return bool(short) and (full == short or full.startswith(short + "."))


# ---- layouts ---------------------------------------------------------------

def compare_cuda_libs(venv, std, quick, python):
    """cuda.<lib>: the path, the version at both levels, the load verdict."""
    owners = oracle_owners(os.path.join(venv, "bin", "python"),
                           [env_section(std, "cuda_stack").get(k, {}).get("path", "")
                            for k in VERSION_FN if env_section(std, "cuda_stack").get(k, {}).get("path")])
    table = []
    for key, fn in VERSION_FN.items():
        s = env_section(std, "cuda_stack").get(key, {})
        q = env_section(quick, "cuda_stack").get(key, {})
        c = checks(std)["cuda." + key]
        if not s.get("path"):
            check(c["status"] != "fail", "cuda.%s: not found, and not a FAIL" % key)
            continue
        path = s["path"]
        o = oracle_dlopen(python, path, fn)
        missing = oracle_ldd_missing(path)
        oracle_ok = o["loaded"] and not missing
        ver = oracle_version(key, o["values"]) if o.get("values") else ""
        table.append(("cuda." + key, os.path.basename(path), c["status"],
                      s.get("version", ""), "loads" if oracle_ok else "broken", ver))
        check((c["status"] == "pass") == oracle_ok,
              "cuda.%s %s: tool %s, oracle dlopen %s, ldd missing %s"
              % (key, path, c["status"], o.get("error", "loaded"), missing or "none"))
        if SANITIZED and key == "cudnn":
            print("note  cuda.cudnn's loaded version not compared: AddressSanitizer's dlopen "
                  "interceptor drops libcudnn.so.9's RUNPATH for the sub-libraries it opens")
        else:
            check(same_numbers(ver, s.get("version", "")),
                  "cuda.%s: tool's version %s, the library's own function says %s"
                  % (key, s.get("version"), ver))
            check(q.get("path") == path and q.get("version") == s.get("version"),
                  "cuda.%s: --quick (%s %s) and the default level (%s %s) name one version"
                  % (key, q.get("path"), q.get("version"), path, s.get("version")))
        if path in owners:
            check(q.get("version") == owners[path][1],
                  "cuda.%s: --quick says %s, the wheel listing the file is %s %s"
                  % (key, q.get("version"), owners[path][0], owners[path][1]))
    return table


DRIVER_LIBRARIES = ("libcuda.so.1", "libcuda.so", "libnvidia-ml.so.1", "libnvidia-ml.so")


def oracle_driver_present():
    """Whether the loader's cache knows the NVIDIA driver's libcuda."""
    r = subprocess.run(["/sbin/ldconfig", "-p"], capture_output=True, text=True, timeout=120)
    return any(line.split()[0] == "libcuda.so.1" for line in r.stdout.splitlines() if line.split())


def compare_follows(report, section, missing_names, other_broken):
    """deps.<section> follows gpu.cuda_driver (reports/causes.h) exactly when
    every link ldd finds missing is one of the driver's own libraries, nothing
    else is broken, and the machine has no driver."""
    c = checks(report).get("deps." + section, {})
    driver_only = (bool(missing_names) and not other_broken and
                   all(n in DRIVER_LIBRARIES for n in missing_names) and
                   not oracle_driver_present())
    check((c.get("follows") == "gpu.cuda_driver") == driver_only,
          "deps.%s follows %r; oracle: ldd misses %s%s, driver %s"
          % (section, c.get("follows"), sorted(missing_names) or "nothing",
             ", other libraries broken" if other_broken else "",
             "present" if oracle_driver_present() else "absent"))


def compare_deps(report, python, section):
    """deps.<section>: each library's verdict against ldd and the real dlopen."""
    libs = env_section(report, "deps").get(section, {}).get("libraries") or []
    table = []
    missing_names, other_broken = set(), False
    for lib in libs:
        if "skipped" in lib or "error" in lib:
            continue
        path = lib["path"]
        missing = oracle_ldd_missing(path)
        missing_names.update(line.split()[0] for line in missing)
        o = oracle_dlopen(python, path)
        # A library that fails alone may still load where it is used: torch
        # 2.15's libtorch_nvshmem.so takes symbols from libtorch_cuda.so,
        # which links it, without listing it. The oracle finds such a host
        # itself (readelf, then the loader), not from the tool's report.
        inside = "" if o["loaded"] or missing else oracle_loaded_inside(python, path)
        told = lib.get("loaded_inside", "")
        tool_broken = lib.get("problems", 0) > 0 or (lib.get("load", "loaded") != "loaded"
                                                   and not lib.get("python_extension")
                                                   and not told)
        oracle_broken = bool(missing) or (not o["loaded"] and not inside)
        other_broken = other_broken or (not missing and oracle_broken)
        said = ("python extension" if lib.get("python_extension")
                else "loads inside " + os.path.basename(told) if told else "loads")
        table.append(("deps." + section, os.path.basename(path),
                      "broken" if tool_broken else said,
                      "broken" if oracle_broken else
                      "loads inside " + os.path.basename(inside) if inside else "loads"))
        check(tool_broken == oracle_broken,
              "deps.%s %s: tool %s, oracle ldd missing %s, dlopen in Python %s%s"
              % (section, os.path.basename(path), "broken" if tool_broken else "not broken",
                 missing or "none", o.get("error", "loaded"),
                 "; maps it when %s loads" % inside if inside else ""))
        if told and inside:
            check(os.path.realpath(told) == os.path.realpath(inside),
                  "deps.%s %s: tool says it loads inside %s, the loader maps it from %s"
                  % (section, os.path.basename(path), told, inside))
    if libs:
        compare_follows(report, section, missing_names, other_broken)
    return table


MAPS = r"""
import json, sys
r = {}
try:
    import torch, torchvision
    r['torch_cuda'] = torch.version.cuda
    # torchvision.version.cuda is what torchvision's C++ side reports
    # (_check_cuda_version: 12040 for 12.4), torch's a text ('12.4').
    tv = torchvision.version.cuda
    r['torchvision_cuda'] = '%d.%d' % (tv // 1000, tv % 1000 // 10) if isinstance(tv, int) else tv
    r['cuda_available'] = torch.cuda.is_available()
    r['cudnn'] = torch.backends.cudnn.version()
except BaseException as e:
    r['error'] = '%s: %s' % (type(e).__name__, e)
r['maps'] = sorted({l.split()[-1] for l in open('/proc/self/maps') if '.so' in l})
print(json.dumps(r))
"""


def layout_torch(exe, venv, out_dir, name):
    """A plain `pip install torch torchvision` (torch251: torch 2.5.1 and the
    nvidia-*-cu12 wheels; torch215: torch 2.15.0 and the cu13 wheels)."""
    python = os.path.join(venv, "bin", "python")
    std = run_tool(exe, venv, "standard", os.path.join(out_dir, name + "-standard.json"))
    quick = run_tool(exe, venv, "quick", os.path.join(out_dir, name + "-quick.json"))
    r = subprocess.run([python, "-c", MAPS], capture_output=True, text=True, timeout=600)
    o = json.loads(r.stdout.strip().splitlines()[-1])
    c = checks(std)
    # Python verdicts against `import torch, torchvision`.
    imports = "error" not in o
    check(imports, "oracle: import torch, torchvision in the venv: %s" % o.get("error", "ok"))
    check("error" not in std["environment"]["python"]["environments"][0].get("deep", {}),
          "python.import_torch reports no import error (oracle imports)")
    same_variant = imports and o["torchvision_cuda"] == o["torch_cuda"]
    # ai-toolkit imports torchaudio when any job starts (its
    # toolkit/config_modules.py); these layouts, like `pip install torch
    # torchvision`, have none: the interpreter's own import says so.
    audio = subprocess.run([python, "-c", "import torchaudio"], capture_output=True, text=True,
                           timeout=600)
    audio_missing = "No module named 'torchaudio'" in audio.stderr
    companions = c.get("python.torch_companions", {}).get("status", "absent")
    check((companions == "pass") == (same_variant and audio.returncode == 0),
          "python.torch_companions %s; oracle: torch CUDA %s, torchvision CUDA %s, "
          "import torchaudio: %s" % (companions, o.get("torch_cuda"), o.get("torchvision_cuda"),
                                     "ok" if audio.returncode == 0
                                     else (audio.stderr.strip().splitlines() or [""])[-1]))
    check(audio_missing == ("torchaudio not installed" in
                            c.get("python.torch_companions", {}).get("observed", "")),
          "python.torch_companions names torchaudio missing exactly when the import says so")
    want = "fail" if not o.get("cuda_available") else "pass"
    check(c["python.import_torch"]["status"] == want,
          "python.import_torch %s; oracle cuda.is_available() %s"
          % (c["python.import_torch"]["status"], o.get("cuda_available")))
    for cid, chk in c.items():
        if cid.startswith(("python.", "cuda.")) and cid != "python.import_torch" and not (
                cid == "python.torch_companions" and audio_missing):
            check(chk["status"] != "fail", "%s is no FAIL (%s)" % (cid, chk.get("observed", "")[:160]))
    check(c["deps.cuda"]["status"] != "fail",
          "deps.cuda is no FAIL (%s)" % c["deps.cuda"].get("observed", "")[:300])
    table = compare_cuda_libs(venv, std, quick, python)
    # The library torch really maps is the one the tool names.
    for key in ("cudart", "cublas", "cudnn", "nccl"):
        p = env_section(std, "cuda_stack").get(key, {}).get("path")
        mapped = [m for m in o["maps"] if os.path.basename(m) == os.path.basename(p or "")]
        if p and mapped:
            check(os.path.realpath(p) in [os.path.realpath(m) for m in mapped],
                  "cuda.%s: torch maps %s, the tool names %s" % (key, mapped, p))
    table += compare_deps(std, python, "cuda")
    torch_rows = compare_deps(std, python, "torch")
    table += torch_rows
    # The case that made the tool learn loads-inside, pinned so that losing
    # it on either side fails here rather than agreeing on "broken".
    if name == "torch215":
        row = [r for r in torch_rows if r[1] == "libtorch_nvshmem.so"]
        want = "loads inside libtorch_cuda.so"
        check(bool(row) and row[0][2] == want and row[0][3] == want,
              "deps.torch libtorch_nvshmem.so: tool and oracle both say '%s' (%s)" % (want, row))
    table += compare_plugin(std, python)
    return table


def compare_plugin(report, python):
    """gpu.plugin's CUDA runtime is the one the plugin itself links (ldd of
    the plugin, that file's cudaRuntimeGetVersion in a fresh process), not
    a copy another check loaded."""
    plug = env_section(report, "cuda_plugin")
    if not plug.get("loaded"):
        return []
    r = subprocess.run(["ldd", plug["path"]], capture_output=True, text=True, timeout=120)
    linked = [l.split("=>")[1].split()[0] for l in r.stdout.splitlines()
              if "libcudart.so" in l and "=>" in l and "not found" not in l]
    if not linked:
        return []
    o = oracle_dlopen(python, linked[0], "cudaRuntimeGetVersion")
    ver = oracle_version("cudart", o["values"]) if o.get("values") else ""
    rt = plug.get("runtime_version", 0)
    tool = "%d.%d" % (rt // 1000, rt % 1000 // 10)
    check(tool == ver, "gpu.plugin: CUDA runtime %s; the plugin links %s, which says %s"
          % (tool, linked[0], ver))
    return [("gpu.plugin", os.path.basename(linked[0]), "runtime", tool, "linked", ver)]


def layout_mixed(exe, venv, out_dir):
    """nvidia-*-cu12 and the cu13 wheels side by side, no torch."""
    python = os.path.join(venv, "bin", "python")
    std = run_tool(exe, venv, "standard", os.path.join(out_dir, "mixed-standard.json"))
    quick = run_tool(exe, venv, "quick", os.path.join(out_dir, "mixed-quick.json"))
    table = compare_cuda_libs(venv, std, quick, python)
    # Every copy the tool lists, both majors: --quick's version against the
    # wheel that owns the file and the library's own function.
    cands = []
    for key in ("cudart", "cublas", "cublaslt"):
        for cand in env_section(quick, "cuda_stack").get(key, {}).get("candidates", []):
            if "site-packages" in cand["path"]:
                cands.append((key, cand))
    owners = oracle_owners(python, [cand["path"] for _, cand in cands])
    majors = set()
    for key, cand in cands:
        o = oracle_dlopen(python, cand["path"], VERSION_FN[key])
        ver = oracle_version(key, o["values"]) if o.get("values") else ""
        majors.add(ver.split(".")[0])
        owner = owners.get(cand["path"], ["?", "?"])
        table.append(("candidate " + key, cand["path"].split("site-packages/")[-1], "quick",
                      cand.get("version", ""), owner[0] + " " + owner[1], ver))
        check(cand.get("version") == owner[1] and same_numbers(ver, cand.get("version", "")),
              "%s: --quick %s; owner wheel %s %s; the library says %s"
              % (cand["path"], cand.get("version"), owner[0], owner[1], ver))
    c = checks(quick).get("cuda.nvidia_wheels")
    check(c is not None and (c["status"] == "warn") == (len(majors) > 1),
          "cuda.nvidia_wheels %s; oracle: the libraries' own versions have majors %s"
          % (c and c["status"], sorted(majors)))
    return table


def ensure_derived(name, torch_venv, build, requirements=None, recipe=""):
    """A layout made from a torch layout by `build(dest, torch_site)`, which
    hard-links that layout's site-packages (files removed or added in the
    copy only: pip and unlink replace names, they do not write into the
    shared files), so it costs no second 5 GB. Made once per cache, and
    again when the torch layout or the requirements file the build
    installs from, or the recipe (a word that changes with `build`), is not
    the one it was made from."""
    root = cache_root()
    dest = os.path.join(root, name)
    marker = os.path.join(dest, ".aitk-realworld-installed")
    want = open(os.path.join(torch_venv, ".aitk-realworld-installed")).read()
    if requirements:
        want += hashlib.sha256(open(requirements, "rb").read()).hexdigest() + "\n"
    want += recipe
    with open(os.path.join(root, name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.exists(marker) and open(marker).read() == want:
            return dest
        shutil.rmtree(dest, ignore_errors=True)
        ver = "python%d.%d" % sys.version_info[:2]
        build(dest, os.path.join(torch_venv, "lib", ver, "site-packages"))
        with open(marker, "w") as f:
            f.write(want)
    return dest


def ensure_overlay(name, torch_venv, change, requirements=None, recipe=""):
    """A venv of its own whose site-packages is a hard-linked copy of a torch
    layout's, changed by `change(venv, site)`; made again when the recipe
    (a word that changes with `change`) is not the one it was made with."""
    def build(venv, torch_site):
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True)
        site = os.path.join(venv, "lib", "python%d.%d" % sys.version_info[:2], "site-packages")
        shutil.rmtree(site)
        subprocess.run(["cp", "-al", torch_site, site], check=True)
        change(venv, site)
    return ensure_derived(name, torch_venv, build, requirements, recipe)


def debian_python():
    """Debian's or Ubuntu's own python3.X of this interpreter's version, or
    None: its site.py reads <prefix>/local/lib/python3.X/dist-packages, not
    site-packages (the python3.11 package's /usr/lib/python3.11/site.py)."""
    ver = "python%d.%d" % sys.version_info[:2]
    exe, stdlib = os.path.join("/usr/bin", ver), os.path.join("/usr/lib", ver)
    site_py = os.path.join(stdlib, "site.py")
    if os.path.exists(exe) and os.path.exists(site_py) and "dist-packages" in open(site_py).read():
        return exe, stdlib
    return None


def ensure_debian_system(name, torch_venv):
    """torch where `pip install --break-system-packages torch` puts it on
    Debian and Ubuntu, and where container images that install torch into
    the system's Python (NVIDIA's NGC PyTorch images) have it:
    <prefix>/local/lib/python3.X/dist-packages of the
    system's own Python, no venv. The prefix is a folder of the cache, with
    a copy of /usr/bin/python3.X (Python finds its prefix from where it
    runs) and the system's standard library, Debian's site.py with it."""
    found = debian_python()
    if not found:
        print("SKIP: no Debian or Ubuntu python%d.%d in /usr/bin" % sys.version_info[:2])
        sys.exit(SKIP)
    exe, stdlib = found
    ver = os.path.basename(stdlib)

    def build(dest, torch_site):
        usr = os.path.join(dest, "usr")
        os.makedirs(os.path.join(usr, "bin"))
        os.makedirs(os.path.join(usr, "lib"))
        os.makedirs(os.path.join(usr, "local", "lib", ver))
        shutil.copy2(exe, os.path.join(usr, "bin", ver))
        for alias in ("python3", "python"):
            os.symlink(ver, os.path.join(usr, "bin", alias))
        os.symlink(stdlib, os.path.join(usr, "lib", ver))
        subprocess.run(["cp", "-al", torch_site,
                        os.path.join(usr, "local", "lib", ver, "dist-packages")], check=True)
        # A second torch in a user site (~/.local), as `pip install --user`
        # leaves it: a home folder of its own for the run that looks at it.
        user_site = os.path.join(dest, "home", ".local", "lib", ver, "site-packages")
        os.makedirs(user_site)
        for entry in os.listdir(torch_site):
            if entry == "torch" or (entry.startswith("torch-") and entry.endswith(".dist-info")):
                subprocess.run(["cp", "-al", os.path.join(torch_site, entry), user_site],
                               check=True)
    return os.path.join(ensure_derived(name, torch_venv, build, recipe="user site\n"), "usr")


SITES = r"""
import json, os, sys
import torch
print(json.dumps({"torch": torch.__version__,
                  "sites": [p for p in sys.path if os.path.isdir(p)
                            and os.path.basename(p) in ('site-packages', 'dist-packages')]}))
"""


def layout_debian_system(exe, prefix, out_dir, name):
    """The torch layout's verdicts, and the site folders the tool reads are
    the interpreter's own, in its order (the oracle: sys.path)."""
    table = layout_torch(exe, prefix, out_dir, name)
    std = run_tool(exe, prefix, "quick", os.path.join(out_dir, name + "-sites.json"))
    r = subprocess.run([os.path.join(prefix, "bin", "python"), "-c", SITES],
                       capture_output=True, text=True, timeout=600)
    o = json.loads(r.stdout.strip().splitlines()[-1])
    envs = std["environment"]["python"]["environments"]
    env = [e for e in envs if os.path.realpath(e["prefix"]) == os.path.realpath(prefix)]
    tool = [s["path"] for s in env[0]["site_packages"]] if env else []
    check(tool == o["sites"], "site folders: tool %s; oracle sys.path %s" % (tool, o["sites"]))
    torch = env[0].get("torch", {}).get("version") if env else None
    check(torch == o["torch"], "the tool reads torch %s (oracle torch.__version__ %s)"
          % (torch, o["torch"]))
    return table + [("python.torch", "torch (dist-packages)", torch or "not found", "",
                     "torch.__version__", o["torch"])] + user_site_first(exe, prefix, out_dir, name)


TORCH_ORIGIN = r"""
import importlib.util, json
print(json.dumps({"origin": importlib.util.find_spec("torch").origin}))
"""


def user_site_first(exe, prefix, out_dir, name):
    """With a second torch in ~/.local, the one the tool says Python
    imports is the one Python finds (the oracle: importlib's spec)."""
    env = dict(os.environ, HOME=os.path.join(os.path.dirname(prefix), "home"))
    for var in ("PYTHONUSERBASE", "PYTHONNOUSERSITE", "PYTHONPATH"):
        env.pop(var, None)
    std = run_tool(exe, prefix, "quick", os.path.join(out_dir, name + "-user-site.json"), env)
    r = subprocess.run([os.path.join(prefix, "bin", "python"), "-c", TORCH_ORIGIN],
                       capture_output=True, text=True, timeout=600, env=env)
    site = os.path.dirname(os.path.dirname(json.loads(r.stdout.strip().splitlines()[-1])["origin"]))
    msg = checks(std)["python.shadowing"].get("message", "")
    said = re.search(r"Python imports \S+ from (\S+) and", msg)
    check(bool(said) and os.path.realpath(said.group(1)) == os.path.realpath(site),
          "python.shadowing: '%s'; oracle: Python imports torch from %s" % (msg[:200], site))
    return [("python.shadowing", "torch in ~/.local and dist-packages",
             said.group(1) if said else "no shadowing said", "", "importlib", site)]


def ensure_apart(name, torch_venv):
    """torch in a venv of its own and pip's nvidia-* wheels in a folder
    beside it, reached through PYTHONPATH, as `pip install --target DIR`
    leaves them (pip install --user, and distributions whose platlib and
    purelib differ, part them the same way): torch/lib's RPATH
    ($ORIGIN/../../nvidia/...) leads nowhere and torch/__init__.py loads
    the wheels' libraries by path from sys.path itself."""
    def build(dest, torch_site):
        venv = os.path.join(dest, "venv")
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True)
        site = os.path.join(venv, "lib", "python%d.%d" % sys.version_info[:2], "site-packages")
        target = os.path.join(dest, "target")
        os.makedirs(target)
        for entry in os.listdir(torch_site):
            wheel = entry == "nvidia" or entry.startswith("nvidia_")
            subprocess.run(["cp", "-al", os.path.join(torch_site, entry),
                            target if wheel else site], check=True)
    return ensure_derived(name, torch_venv, build, recipe="apart\n")


def layout_apart(exe, dest, out_dir, name):
    """deps.torch with the wheels' folder on PYTHONPATH and without it,
    against `import torch` in the same environment variables. A run that
    fails only for want of the NVIDIA driver (follows gpu.cuda_driver) is
    the tool's pass on a machine without one: import torch does not load
    libcuda.so.1."""
    venv, target = os.path.join(dest, "venv"), os.path.join(dest, "target")
    table = []
    for on_path in (True, False):
        env = {k: v for k, v in os.environ.items()
               if k not in ("PYTHONPATH", "VIRTUAL_ENV", "CONDA_PREFIX", "PYTHONNOUSERSITE")}
        if on_path:
            env["PYTHONPATH"] = target
        level = "standard" if on_path else "quick"
        rep = run_tool(exe, venv, level, os.path.join(out_dir, "%s-%s.json" % (name, on_path)),
                       env)
        c = checks(rep)["deps.torch"]
        tool_ok = c["status"] == "pass" or (c["status"] == "fail" and
                                            c.get("follows") == "gpu.cuda_driver")
        r = subprocess.run([os.path.join(venv, "bin", "python"), "-c", "import torch"],
                           capture_output=True, text=True, timeout=600, env=env)
        last = (r.stderr.strip().splitlines() or [""])[-1]
        check(tool_ok == (r.returncode == 0),
              "deps.torch at --%s, wheels %s: %s (%s); oracle import torch: %s"
              % (level, "on PYTHONPATH" if on_path else "off sys.path", c["status"],
                 c.get("observed", "")[:300], "ok" if r.returncode == 0 else last[:300]))
        table.append(("deps.torch", "wheels " + ("on PYTHONPATH" if on_path else "absent"),
                      c["status"], "", "import torch", "ok" if r.returncode == 0 else last[:60]))
    return table


def remove_cudnn(venv, site):
    """As after a failed or partial upgrade: nvidia-cudnn-cu12's file gone."""
    os.unlink(os.path.join(site, "nvidia", "cudnn", "lib", "libcudnn.so.9"))


def remove_c10_cuda(venv, site):
    """As after an interrupted reinstall: one of torch's own libraries gone
    (one no system CUDA provides in its place)."""
    os.unlink(os.path.join(site, "torch", "lib", "libc10_cuda.so"))


DIFFUSERS_REQ = os.path.join(HERE, "requirements-diffusers.txt")
CUDNN_NEWEST_REQ = os.path.join(HERE, "requirements-cudnn-newest.txt")
CUDNN_OLDER_REQ = os.path.join(HERE, "requirements-cudnn-older.txt")
NVIDIA_NEWEST_REQ = os.path.join(HERE, "requirements-nvidia-newest.txt")


def add_diffusers(venv, site):
    pip_install_no_deps(venv, DIFFUSERS_REQ)


def upgrade_cudnn(venv, site):
    """As after `pip install -U nvidia-cudnn-cu13`: a cuDNN newer than the
    one torch pins (pip replaces the wheel's files; the shared copies stay)."""
    pip_install_no_deps(venv, CUDNN_NEWEST_REQ)


def downgrade_cudnn(venv, site):
    """As after `pip install nvidia-cudnn-cu13==<older>`: a cuDNN older than
    the one torch was built against."""
    pip_install_no_deps(venv, CUDNN_OLDER_REQ)


def upgrade_nvidia(venv, site):
    """As after `pip install -U nvidia-cublas nvidia-nccl-cu13`: a cuBLAS and
    an NCCL newer than the ones torch pins."""
    pip_install_no_deps(venv, NVIDIA_NEWEST_REQ)


def check_pinned(venv, req):
    """The overlay holds each wheel its requirements pin, and no other
    version of it: the layout is only worth judging with those in place."""
    site = os.path.join(venv, "lib", "python%d.%d" % sys.version_info[:2], "site-packages")
    for name, want in re.findall(r"^([A-Za-z0-9_]+)==([0-9.]+)", open(req).read(), re.M):
        found = sorted(d for d in os.listdir(site) if d.startswith(name + "-"))
        check(found == ["%s-%s.dist-info" % (name, want)],
              "the overlay's %s wheel is the pinned %s (found %s)" % (name, want, found))


def pip_install_no_deps(venv, req, sdists=()):
    """pip install --no-deps --require-hashes -r req into venv, wheels only
    but for the projects in `sdists` (published as source only)."""
    why = registry_reachable()
    if why:
        shutil.rmtree(venv, ignore_errors=True)
        print("SKIP: the package registry cannot be reached: %s" % why)
        sys.exit(SKIP)
    # pip is in the copied site-packages: it installs into this venv.
    r = subprocess.run([os.path.join(venv, "bin", "python"), "-m", "pip", "install",
                        "--no-cache-dir", "--disable-pip-version-check", "--no-deps",
                        "--require-hashes", "--only-binary=:all:"]
                       + ["--no-binary=" + name for name in sdists] + ["-r", req])
    if r.returncode != 0:
        shutil.rmtree(venv, ignore_errors=True)
        sys.exit("pip install -r %s failed with %d" % (req, r.returncode))


IMPORTS = r"""
import json, sys
r = {}
import torch
for spec in sys.argv[1:]:
    m, _, names = spec.partition(':')
    try:
        exec('from %s import %s' % (m, names) if names else 'import %s' % m, {})
        r[m] = 'ok'
    except BaseException as e:
        r[m] = ' '.join(('%s: %s' % (type(e).__name__, e)).split())
print(json.dumps(r))
"""
# What ai-toolkit's start-up takes from diffusers and transformers
# (toolkit/stable_diffusion_model.py at ostris/ai-toolkit 27a03a9, FLUX.1's
# classes and those every job loads), imported as its own statement does.
START_UP_CLASSES = {
    "diffusers": "AutoencoderKL, AutoencoderTiny, FlowMatchEulerDiscreteScheduler, FluxPipeline, "
                 "FluxTransformer2DModel",
    "transformers": "CLIPTextModel, CLIPTokenizer, T5EncoderModel, T5TokenizerFast",
}


def layout_diffusers(exe, venv, out_dir):
    """python.requirements against importing each package after torch, as
    ai-toolkit does, in the environment's own interpreter."""
    python = os.path.join(venv, "bin", "python")
    std = run_tool(exe, venv, "standard", os.path.join(out_dir, "diffusers-standard.json"))
    mods = ["diffusers", "transformers", "peft", "accelerate"]
    specs = [m + (":" + START_UP_CLASSES[m] if m in START_UP_CLASSES else "") for m in mods]
    r = subprocess.run([python, "-c", IMPORTS] + specs, capture_output=True, text=True,
                       timeout=900)
    o = json.loads(r.stdout.strip().splitlines()[-1])
    c = checks(std)["python.requirements"]
    broken = [m for m in mods if o[m] != "ok"]
    check((c["status"] == "fail") == bool(broken),
          "python.requirements %s; oracle imports: %s" % (c["status"], o))
    table = []
    for m in mods:
        said = "import %s: " % m
        tool = c.get("observed", "")
        in_tool = said in tool
        check(in_tool == (o[m] != "ok") and (o[m] == "ok" or o[m][:60] in tool),
              "python.requirements on %s: tool %s; oracle %s"
              % (m, "names its import error" if in_tool else "no import error", o[m][:200]))
        table.append(("python.requirements", m, "broken" if in_tool else "imports", "",
                      "broken" if o[m] != "ok" else "imports", o[m][:70]))
    return table


CUDNN_VERSION = r"""
import json, torch
try:
    print(json.dumps({"version": torch.backends.cudnn.version()}))
except Exception as e:
    print(json.dumps({"error": "%s: %s" % (type(e).__name__, e)}))
"""


def layout_cudnn_older(exe, venv, out_dir):
    """python.import_torch names the refusal when torch refuses the cuDNN it
    loads, and only then: the oracle is torch's own version call."""
    python = os.path.join(venv, "bin", "python")
    std = run_tool(exe, venv, "standard", os.path.join(out_dir, "cudnn-older-standard.json"))
    r = subprocess.run([python, "-c", CUDNN_VERSION], capture_output=True, text=True, timeout=600)
    o = json.loads(r.stdout.strip().splitlines()[-1])
    c = checks(std)["python.import_torch"]
    said = "refuses its cuDNN" in c.get("message", "")
    first = o.get("error", "").splitlines()[0] if o.get("error") else ""
    check(said == bool(first) and (not first or first in c.get("message", "")),
          "python.import_torch says '%s'; oracle torch.backends.cudnn.version(): %s"
          % (c.get("message", "")[:200], first or o.get("version")))
    check(bool(first), "the oracle refuses the older cuDNN (%s)" % (first or o.get("version")))
    return [("python.import_torch", "libcudnn.so.9 (older than torch's)",
             "refused" if said else "accepted", "", "torch", first[:70] or o.get("version"))]


def layout_nocudnn(exe, venv, out_dir):
    """cuda.cudnn judges the cuDNN torch will load: with its wheel's file
    gone, whatever cuDNN is found elsewhere is no pass when torch maps a
    file other than its wheel's."""
    python = os.path.join(venv, "bin", "python")
    std = run_tool(exe, venv, "standard", os.path.join(out_dir, "nocudnn-standard.json"))
    r = subprocess.run([python, "-c", MAPS], capture_output=True, text=True, timeout=600)
    o = json.loads(r.stdout.strip().splitlines()[-1])
    wheel_file = os.path.join(venv, "lib", "python%d.%d" % sys.version_info[:2], "site-packages",
                              "nvidia", "cudnn", "lib", "libcudnn.so.9")
    mapped = [m for m in o["maps"] if os.path.basename(m) == "libcudnn.so.9"]
    own = os.path.realpath(wheel_file) in [os.path.realpath(m) for m in mapped]
    c = checks(std)["cuda.cudnn"]
    check((c["status"] == "fail") == (not own),
          "cuda.cudnn %s (%s); oracle: import torch maps %s (torch's cuDNN %s), error %s"
          % (c["status"], c.get("observed", "")[:200], mapped or "no libcudnn.so.9",
             o.get("cudnn"), o.get("error", "none")))
    table = [("cuda.cudnn", "libcudnn.so.9 (wheel file gone)", c["status"], "",
              "torch maps " + (", ".join(mapped) or "none"), o.get("cudnn", o.get("error", "")))]
    # torch's libraries without their cuDNN: more is missing than the driver.
    return table + compare_deps(std, python, "torch")


def layout_c10_cuda_gone(exe, venv, out_dir):
    """torch's own link broken beside the driver's absence: import torch
    fails for the link deps.torch names, which follows nothing
    (reports/causes.h)."""
    python = os.path.join(venv, "bin", "python")
    std = run_tool(exe, venv, "standard", os.path.join(out_dir, "c10-cuda-gone-standard.json"))
    r = subprocess.run([python, "-c", MAPS], capture_output=True, text=True, timeout=600)
    o = json.loads(r.stdout.strip().splitlines()[-1])
    c = checks(std)["python.import_torch"]
    deps = checks(std)["deps.torch"]
    # The oracles: the import's own error, and ldd naming the same library
    # missing for one of torch's.
    lib = os.path.join(venv, "lib", "python%d.%d" % sys.version_info[:2], "site-packages", "torch",
                       "lib", "libtorch_cuda.so")
    ldd_names = [line.split()[0] for line in oracle_ldd_missing(lib)]
    check("libc10_cuda.so" in o.get("error", "") and "libc10_cuda.so" in ldd_names and
          c["status"] == "fail" and c.get("follows") == "deps.torch" and
          deps["status"] == "fail" and "libc10_cuda.so" in deps.get("observed", ""),
          "python.import_torch %s, follows %r; deps.torch %s naming libc10_cuda.so: %s; oracle "
          "import torch: %s; ldd libtorch_cuda.so misses %s"
          % (c["status"], c.get("follows"), deps["status"],
             "libc10_cuda.so" in deps.get("observed", ""), o.get("error", "imports"), ldd_names))
    return [("python.import_torch", "libc10_cuda.so gone", c["status"], "",
             o.get("error", "imports")[:60])] + compare_deps(std, python, "torch")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exe", required=True)
    ap.add_argument("--layout", required=True,
                    choices=["torch251", "torch215", "mixed", "torch251-nocudnn",
                             "torch251-diffusers", "torch215-cudnn-newest",
                             "torch215-cudnn-older", "torch215-nvidia-newest",
                             "torch215-debian-system", "torch215-c10-cuda-gone",
                             "torch251-apart", "torch215-apart"])
    ap.add_argument("--out", required=True)
    ap.add_argument("--sanitized", action="store_true")
    a = ap.parse_args()
    global SANITIZED
    SANITIZED = a.sanitized
    if sys.version_info[:2] not in ((3, 11), (3, 12)):
        print("SKIP: the pinned wheels are for CPython 3.11 and 3.12; this is %s"
              % sys.version.split()[0])
        return SKIP
    os.makedirs(a.out, exist_ok=True)
    base = a.layout.split("-")[0] if a.layout.startswith("torch") else a.layout
    venv = ensure_layout(base, os.path.join(HERE, "requirements-%s.txt" % base))
    if a.layout == "torch251-nocudnn":
        table = layout_nocudnn(a.exe, ensure_overlay(a.layout, venv, remove_cudnn), a.out)
    elif a.layout == "torch251-diffusers":
        overlay = ensure_overlay(a.layout, venv, add_diffusers, DIFFUSERS_REQ)
        table = layout_diffusers(a.exe, overlay, a.out)
    elif a.layout == "torch215-cudnn-newest":
        overlay = ensure_overlay(a.layout, venv, upgrade_cudnn, CUDNN_NEWEST_REQ)
        check_pinned(overlay, CUDNN_NEWEST_REQ)
        table = layout_torch(a.exe, overlay, a.out, a.layout)
    elif a.layout == "torch215-nvidia-newest":
        overlay = ensure_overlay(a.layout, venv, upgrade_nvidia, NVIDIA_NEWEST_REQ)
        check_pinned(overlay, NVIDIA_NEWEST_REQ)
        table = layout_torch(a.exe, overlay, a.out, a.layout)
    elif a.layout == "torch215-debian-system":
        prefix = ensure_debian_system(a.layout, venv)
        table = layout_debian_system(a.exe, prefix, a.out, a.layout)
    elif a.layout == "torch215-cudnn-older":
        overlay = ensure_overlay(a.layout, venv, downgrade_cudnn, CUDNN_OLDER_REQ)
        check_pinned(overlay, CUDNN_OLDER_REQ)
        table = layout_cudnn_older(a.exe, overlay, a.out)
    elif a.layout == "torch215-c10-cuda-gone":
        overlay = ensure_overlay(a.layout, venv, remove_c10_cuda)
        table = layout_c10_cuda_gone(a.exe, overlay, a.out)
    elif a.layout.endswith("-apart"):
        table = layout_apart(a.exe, ensure_apart(a.layout, venv), a.out, a.layout)
    elif a.layout == "mixed":
        table = layout_mixed(a.exe, venv, a.out)
    else:
        table = layout_torch(a.exe, venv, a.out, a.layout)
    print("\n%-18s %-34s %-16s %-14s %s" % ("check", "library", "tool", "tool version",
                                           "oracle"))
    for row in table:
        print("%-18s %-34s %-16s %-14s %s" % (row[0], row[1][-34:], row[2],
                                              row[3] if len(row) > 4 else "",
                                              " ".join(str(x) for x in row[4:]) if len(row) > 4
                                              else row[3]))
    if failures:
        print("\n%d disagreement(s) with the oracles" % len(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
