#!/usr/bin/env python3
"""Real-world corpus, Linux: torch from Debian 12's own package, not pip.

`apt install python3-torch` on Debian 12 gives torch 1.13.1 (CPU only) in
/usr/lib/python3/dist-packages, its libraries in libtorch1.13's
/usr/lib/x86_64-linux-gnu and, in torch/lib, links to them. Three of those
links (libcaffe2_detectron_ops.so, libcaffe2_module_test_dynamic.so,
libcaffe2_observers.so) point at files the package does not ship; an
earlier tool called them unreadable libraries and failed deps.torch,
while `import torch` works.

Where python3-torch is installed on this machine, that install is judged.
Elsewhere the packages `apt-get install --no-install-recommends
python3-torch` would add are fetched with `apt-get download` (the machine's
configured sources; no root needed) into the cache and unpacked with
dpkg-deb beside a copy of Debian's own python3.X, as torch215-debian-system
does for a pip install. The unpacked libraries are then found through
LD_LIBRARY_PATH, for the tool and the oracles alike, where an installed
package has them in the loader's cache: the links in torch/lib are the
package's own either way.

Oracles, none of them the tool's code: `import torch` in that interpreter
(torch.__version__, torch.version.cuda, torch.cuda.is_available());
/proc/self/maps after it; readelf's NEEDED of every library mapped then;
os.path.exists on each link of torch/lib.

Exit 77 (CTest: skipped) without Debian's python3.X or apt, or when the
packages cannot be fetched; the reason is printed.
"""
import argparse
import fcntl
import glob
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import realworld as rw  # noqa: E402  (the corpus's shared oracles and tool runner)

PACKAGE = "python3-torch"


def skip(why):
    print("SKIP: " + why)
    sys.exit(rw.SKIP)


def installed(package):
    r = subprocess.run(["dpkg-query", "-W", "-f=${Status}", package], capture_output=True,
                       text=True)
    return r.returncode == 0 and "install ok installed" in r.stdout


def packages_apt_would_add():
    """The packages `apt-get install` would add here, by apt's own resolver
    (a simulation, which needs no root)."""
    r = subprocess.run(["apt-get", "install", "-s", "-q", "--no-install-recommends", PACKAGE],
                       capture_output=True, text=True, env=dict(os.environ, LC_ALL="C"))
    if r.returncode != 0:
        skip("apt-get cannot plan the install of %s: %s" % (PACKAGE, r.stderr.strip()[-300:]))
    return sorted(line.split()[1] for line in r.stdout.splitlines() if line.startswith("Inst "))


def merge(unpacked, system):
    """Links in `unpacked` to each entry of the system's folder it lacks."""
    os.makedirs(unpacked, exist_ok=True)
    for entry in os.listdir(system) if os.path.isdir(system) else []:
        if not os.path.lexists(os.path.join(unpacked, entry)):
            os.symlink(os.path.join(system, entry), os.path.join(unpacked, entry))


def ensure_unpacked(python_exe, stdlib):
    """A prefix with Debian's python3.X and the packages unpacked in it,
    made once per cache (a marker holds the package list it was made from)."""
    wanted = packages_apt_would_add()
    root = os.path.join(rw.cache_root(), "debian-python3-torch")
    marker = os.path.join(root, ".aitk-realworld-installed")
    want = "\n".join(wanted) + "\nmerged: stdlib, dist-packages\n"
    os.makedirs(rw.cache_root(), exist_ok=True)
    with open(root + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.exists(marker) and open(marker).read() == want:
            return os.path.join(root, "usr")
        shutil.rmtree(root, ignore_errors=True)
        debs = os.path.join(root, "debs")
        os.makedirs(debs)
        r = subprocess.run(["apt-get", "download", "-q"] + wanted, cwd=debs,
                           capture_output=True, text=True)
        if r.returncode != 0:
            skip("apt-get download failed (%s)" % r.stderr.strip()[-300:])
        for deb in sorted(glob.glob(os.path.join(debs, "*.deb"))):
            subprocess.run(["dpkg-deb", "-x", deb, root], check=True)
        shutil.rmtree(debs)
        ver = os.path.basename(stdlib)
        usr = os.path.join(root, "usr")
        os.makedirs(os.path.join(usr, "bin"), exist_ok=True)
        shutil.copy2(python_exe, os.path.join(usr, "bin", ver))
        for alias in ("python3", "python"):
            os.symlink(ver, os.path.join(usr, "bin", alias))
        # What dpkg would have merged: the standard library (python3-numpy
        # also unpacks into /usr/lib/python3.X) and the Python packages
        # this machine already has (typing_extensions, which torch imports).
        merge(os.path.join(usr, "lib", ver), stdlib)
        merge(os.path.join(usr, "lib", "python3", "dist-packages"), "/usr/lib/python3/dist-packages")
        with open(marker, "w") as f:
            f.write(want)
    return os.path.join(root, "usr")


IMPORT_TORCH = r"""
import json, torch
print(json.dumps({"version": torch.__version__, "cuda": torch.version.cuda,
                  "available": torch.cuda.is_available(), "file": torch.__file__,
                  "maps": sorted({l.split()[-1] for l in open('/proc/self/maps')
                                  if '.so' in l.split()[-1]})}))
"""


def oracle_import(python, env):
    r = subprocess.run([python, "-c", IMPORT_TORCH], capture_output=True, text=True,
                       timeout=600, env=env)
    rw.check(r.returncode == 0, "oracle: import torch in %s (%s)"
             % (python, r.stderr.strip()[-300:] or "ok"))
    if r.returncode != 0:
        return None
    return json.loads(r.stdout.strip().splitlines()[-1])


def link_chain(path):
    """The file names a chain of links passes through, to the one missing."""
    names = set()
    for _ in range(40):
        if not os.path.islink(path):
            break
        path = os.path.join(os.path.dirname(path), os.readlink(path))
        names.add(os.path.basename(path))
    return names


def judge(exe, prefix, env, out_dir):
    python = os.path.join(prefix, "bin", "python3")
    o = oracle_import(python, env)
    if o is None:
        return
    lib_dir = os.path.join(os.path.dirname(o["file"]), "lib")
    links = sorted(n for n in os.listdir(lib_dir) if os.path.islink(os.path.join(lib_dir, n)))
    dangling = sorted(n for n in links if not os.path.exists(os.path.join(lib_dir, n)))
    rw.check(bool(dangling), "the package still leaves dangling links in torch/lib (%s): the "
             "case this layout is for" % (", ".join(dangling) or "none"))
    # Harmless by the loader's own account: none is mapped by import torch,
    # and no library it maps lists one (or the file it names) as NEEDED.
    mapped_names = {os.path.basename(p) for p in o["maps"]}
    needed = set()
    for path in o["maps"]:
        needed.update(rw.oracle_needed(path))
    for n in dangling:
        hops = link_chain(os.path.join(lib_dir, n))
        rw.check(not ({n} | hops) & (mapped_names | needed),
                 "oracle: %s (-> %s) is neither mapped by import torch nor NEEDED by a "
                 "library it maps" % (n, " -> ".join(sorted(hops))))

    report = rw.run_tool(exe, prefix, "standard", os.path.join(out_dir, "debian-torch.json"),
                         env)
    c = rw.checks(report)
    deps = c.get("deps.torch", {})
    rw.check(deps.get("status") == "pass",
             "deps.torch %s (%s); oracle: import torch works and maps no dangling link"
             % (deps.get("status"), deps.get("observed", "")[:200]))
    libs = rw.env_section(report, "deps").get("torch", {}).get("libraries", [])
    said = sorted(os.path.basename(lib["path"]) for lib in libs if "dangling_link" in lib)
    rw.check(said == dangling, "dangling links: tool %s; oracle os.path.exists %s"
             % (said, dangling))
    rw.check(all(n in deps.get("message", "") for n in dangling),
             "deps.torch's message names every dangling link")

    envs = report["environment"]["python"]["environments"]
    version = envs[0].get("torch", {}).get("version") if envs else None
    rw.check(version == o["version"], "torch version: tool %s; oracle torch.__version__ %s"
             % (version, o["version"]))
    t = c.get("python.torch", {})
    cpu_only = o["cuda"] is None
    rw.check((t.get("status") == "fail") == cpu_only and
             (not cpu_only or "CUDA none" in t.get("observed", "")),
             "python.torch %s (%s); oracle torch.version.cuda %s"
             % (t.get("status"), t.get("observed"), o["cuda"]))
    i = c.get("python.import_torch", {})
    rw.check((i.get("status") == "fail") == (not o["available"]),
             "python.import_torch %s (%s); oracle torch.cuda.is_available() %s"
             % (i.get("status"), i.get("observed"), o["available"]))
    # A torch with no CUDA build is one cause: python.torch's, which import
    # torch's failure follows, so the report names python.torch to fix first.
    if cpu_only and i.get("status") == "fail":
        heads = [h.get("id") for h in report.get("summary", {}).get("fix_first", [])]
        rw.check(i.get("follows") == "python.torch" and "python.import_torch" not in heads,
                 "python.import_torch follows %r, fix first %s; oracle torch.version.cuda None: "
                 "the one cause is python.torch's" % (i.get("follows"), heads))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exe", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    found = rw.debian_python()
    if not found or not shutil.which("apt-get") or not shutil.which("dpkg-deb"):
        skip("no Debian python3.X in /usr/bin, or no apt-get and dpkg-deb")
    env = dict(os.environ)
    for var in ("VIRTUAL_ENV", "CONDA_PREFIX", "PYTHONPATH", "PYTHONHOME"):
        env.pop(var, None)
    if installed(PACKAGE):
        print("judging the installed %s (/usr)" % PACKAGE)
        prefix = "/usr"
    else:
        prefix = ensure_unpacked(*found)
        arch = subprocess.run(["dpkg-architecture", "-qDEB_HOST_MULTIARCH"], capture_output=True,
                              text=True).stdout.strip() or "x86_64-linux-gnu"
        # The unpacked twins of the folders Debian's loader searches
        # (/etc/ld.so.conf.d/<arch>.conf, then /lib and /usr/lib).
        root = os.path.dirname(prefix)
        env["LD_LIBRARY_PATH"] = ":".join(os.path.join(root, d, arch) for d in ("lib", "usr/lib")) \
            + ":" + ":".join(os.path.join(root, d) for d in ("lib", "usr/lib"))
        print("judging %s unpacked in %s (libraries through LD_LIBRARY_PATH)" % (PACKAGE, prefix))
    judge(a.exe, prefix, env, a.out)
    if rw.failures:
        print("\n%d disagreement(s) with the oracles" % len(rw.failures))
        return 1
    print("\nall verdicts agree with the oracles")
    return 0


if __name__ == "__main__":
    sys.exit(main())
