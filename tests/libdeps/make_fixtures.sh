#!/bin/sh
# Builds the dependency-doctor fixtures into $1 (run by CTest as the setup
# fixture `libdeps.fixtures`; nothing here is committed as a binary).
#   elf/  gcc-built .so trees: RUNPATH/$ORIGIN chain, inherited DT_RPATH,
#         a missing soname, a wrong-class (32-bit) candidate, a GLIBC_2.99 need
#   pe/   mingw-built DLL trees shaped like a Windows torch 2.4.0 install, plus
#         a DLL whose import is missing from the installed copy (error 127)
# Exit 77 (skip) when a needed compiler is missing; any other failure is 1.
set -eu
out=$1
need() { command -v "$1" >/dev/null 2>&1 || { echo "missing tool: $1" >&2; exit 77; }; }
need gcc
need python3
rm -rf "$out"
mkdir -p "$out/src" "$out/elf/build"
s=$out/src
e=$out/elf

# ---------------------------------------------------------------- ELF ----
cat > "$s/leaf.c" <<'C'
int aitk_leaf(void) { return 1; }
C
cat > "$s/mid.c" <<'C'
int aitk_leaf(void);
int aitk_mid(void) { return aitk_leaf() + 1; }
C
cat > "$s/top.c" <<'C'
int aitk_mid(void);
int aitk_top(void) { return aitk_mid() + 1; }
C
so() { gcc -shared -fPIC -o "$@"; }

# RUNPATH chain: libtop -> (RUNPATH $ORIGIN/sub) libmid.so.1 -> (RUNPATH $ORIGIN/leafdir) libleaf.so.1
mkdir -p "$e/chain/sub/leafdir"
so "$e/chain/sub/leafdir/libleaf.so.1" "$s/leaf.c" -Wl,-soname,libleaf.so.1
so "$e/chain/sub/libmid.so.1" "$s/mid.c" -Wl,-soname,libmid.so.1 \
   "$e/chain/sub/leafdir/libleaf.so.1" -Wl,--enable-new-dtags,-rpath,'$ORIGIN/leafdir'
so "$e/chain/libtop.so" "$s/top.c" -Wl,-soname,libtop.so \
   "$e/chain/sub/libmid.so.1" -Wl,--enable-new-dtags,-rpath,'$ORIGIN/sub'

# DT_RPATH inherited: libold (RPATH $ORIGIN/rp) -> libr1.so (no paths) -> libr2.so,
# found only through libold's RPATH (ld.so searches the loaders' RPATHs too).
mkdir -p "$e/rpath/rp"
so "$e/rpath/rp/libr2.so" "$s/leaf.c" -Wl,-soname,libr2.so
so "$e/rpath/rp/libr1.so" "$s/mid.c" -Wl,-soname,libr1.so "$e/rpath/rp/libr2.so"
so "$e/rpath/libold.so" "$s/top.c" -Wl,-soname,libold.so "$e/rpath/rp/libr1.so" \
   -Wl,--disable-new-dtags,-rpath,'$ORIGIN/rp'

# Wrong class: RUNPATH lists d32 (a 32-bit libdual.so) before d64; alt/
# holds another 64-bit libdual.so (a duplicate when LD_LIBRARY_PATH names it).
mkdir -p "$e/wrongclass/d32" "$e/wrongclass/d64"
so "$e/wrongclass/d64/libdual.so" "$s/leaf.c" -Wl,-soname,libdual.so
gcc -m32 -shared -fPIC -nostdlib -o "$e/wrongclass/d32/libdual.so" "$s/leaf.c" -Wl,-soname,libdual.so
mkdir -p "$e/wrongclass/alt"
so "$e/wrongclass/alt/libdual.so" "$s/top.c" -Wl,-soname,libdual.so
so "$e/wrongclass/libuser.so" "$s/mid.c" -Wl,-soname,libuser.so "$e/wrongclass/d64/libdual.so" \
   -Wl,--enable-new-dtags,-rpath,'$ORIGIN/d32:$ORIGIN/d64'

# A Git LFS pointer ahead of the real library: RUNPATH lists lfs/ (the
# pointer, never fetched, under the soname) before real/. ld.so stops at the
# first file of the name that is no ELF ("invalid ELF header"): it does not
# go on to real/ as it does past a wrong-class file.
mkdir -p "$e/lfsdep/lfs" "$e/lfsdep/real"
so "$e/lfsdep/real/libptr.so.1" "$s/leaf.c" -Wl,-soname,libptr.so.1
printf 'version https://git-lfs.github.com/spec/v1\noid sha256:%064d\nsize 15648\n' 0 \
  > "$e/lfsdep/lfs/libptr.so.1"
so "$e/lfsdep/libuser.so" "$s/mid.c" -Wl,-soname,libuser.so "$e/lfsdep/real/libptr.so.1" \
   -Wl,--enable-new-dtags,-rpath,'$ORIGIN/lfs:$ORIGIN/real'

# What else ld.so refuses outright at the first candidate (each folder
# list names bad/ before real/): an ELF of the other byte order, a
# relocatable object (ET_REL), a PE file, programs, a nonzero ABI version,
# and a symbolic link loop, which ends the
# RUNPATH list (glibc open_path) so real/ is never reached.
for kind in endian rel loop pe exec pie abiver notdir fifo phent strtab; do
  mkdir -p "$e/refused/$kind/bad" "$e/refused/$kind/real"
  so "$e/refused/$kind/real/libref.so.1" "$s/leaf.c" -Wl,-soname,libref.so.1
  so "$e/refused/$kind/libuser.so" "$s/mid.c" -Wl,-soname,libuser.so \
     "$e/refused/$kind/real/libref.so.1" -Wl,--enable-new-dtags,-rpath,'$ORIGIN/bad:$ORIGIN/real'
done
python3 - "$e/refused/endian/real/libref.so.1" "$e/refused/endian/bad/libref.so.1" <<'PY'
import sys
data = bytearray(open(sys.argv[1], 'rb').read())
data[5] = 2  # EI_DATA: ELFDATA2MSB
open(sys.argv[2], 'wb').write(bytes(data))
PY
gcc -c -fPIC -o "$e/refused/rel/bad/libref.so.1" "$s/leaf.c"
# Programs under the soname: open_verify lets them through, mapping them as
# a dependency fails (a non-PIE executable, a PIE).
printf 'int main(void) { return 0; }\n' > "$s/prog.c"
gcc -no-pie -o "$e/refused/exec/bad/libref.so.1" "$s/prog.c"
gcc -pie -fPIE -o "$e/refused/pie/bad/libref.so.1" "$s/prog.c"
# A System V object with a nonzero EI_ABIVERSION.
python3 - "$e/refused/abiver/real/libref.so.1" "$e/refused/abiver/bad/libref.so.1" <<'PY'
import sys
data = bytearray(open(sys.argv[1], 'rb').read())
assert data[7] == 0  # ELFOSABI_SYSV
data[8] = 1
open(sys.argv[2], 'wb').write(bytes(data))
PY
# Damage ld.so refuses, or trips over, past open_verify's identity bytes:
# e_phentsize 1 (open_verify: "ELF file's phentsize not the expected
# size"), and DT_STRTAB moved out of every load segment (ld.so reads the
# names from memory it never mapped: garbage, or a crash).
python3 - "$e/refused/phent/real/libref.so.1" "$e/refused/phent/bad/libref.so.1" \
          "$e/refused/strtab/bad/libref.so.1" <<'PY'
import struct, sys
data = bytearray(open(sys.argv[1], 'rb').read())
assert data[4] == 2 and data[5] == 1  # ELFCLASS64, little-endian
phent = bytearray(data)
struct.pack_into('<H', phent, 0x36, 1)
open(sys.argv[2], 'wb').write(bytes(phent))
phoff, = struct.unpack_from('<Q', data, 0x20)
phnum, = struct.unpack_from('<H', data, 0x38)
for i in range(phnum):
    p_type, = struct.unpack_from('<I', data, phoff + i * 56)
    if p_type == 2:  # PT_DYNAMIC
        off, = struct.unpack_from('<Q', data, phoff + i * 56 + 8)
        size, = struct.unpack_from('<Q', data, phoff + i * 56 + 32)
for k in range(off, off + size, 16):
    tag, = struct.unpack_from('<q', data, k)
    if tag == 5:  # DT_STRTAB
        struct.pack_into('<Q', data, k + 8, 0x7ffffff0)
open(sys.argv[3], 'wb').write(bytes(data))
PY
# A RUNPATH entry that is a file, not a folder: ld.so passes over it (the
# folder is not there) and finds real/.
# A FIFO under the soname: ld.so would wait on it for ever; the walk says so.
mkfifo "$e/refused/fifo/bad/libref.so.1"
rmdir "$e/refused/notdir/bad"
printf 'not a folder\n' > "$e/refused/notdir/bad"
# A Windows DLL's first bytes under the soname (an MZ header, then zeros).
python3 -c 'import sys; open(sys.argv[1], "wb").write(b"MZ" + bytes(126))' \
  "$e/refused/pe/bad/libref.so.1"
ln -s libref.so.1.x "$e/refused/loop/bad/libref.so.1"
ln -s libref.so.1 "$e/refused/loop/bad/libref.so.1.x"

# Missing soname: built against libgone.so.1, which is then removed.
mkdir -p "$e/missing"
so "$e/elf_gone.so" "$s/leaf.c" -Wl,-soname,libgone.so.1
so "$e/missing/libneedsgone.so" "$s/mid.c" -Wl,-soname,libneedsgone.so "$e/elf_gone.so"
# The same in a folder of lib*.so.N files, as the deps.cuda check scans them.
mkdir -p "$e/provider"
so "$e/provider/libneedsgone.so.1" "$s/mid.c" -Wl,-soname,libneedsgone.so.1 "$e/elf_gone.so"
# The NVIDIA driver's libcuda.so.1 as a folder's only missing link
# (driveronly/), and beside another missing library (drivermore/): the
# stand-in is deleted, so neither is found where no driver is installed.
mkdir -p "$e/driveronly" "$e/drivermore"
so "$e/build/libcuda.so.1" "$s/leaf.c" -Wl,-soname,libcuda.so.1
so "$e/driveronly/libusecuda.so.1" "$s/mid.c" -Wl,-soname,libusecuda.so.1 "$e/build/libcuda.so.1"
so "$e/drivermore/libusecuda.so.1" "$s/top.c" -Wl,-soname,libusecuda.so.1 "$e/build/libcuda.so.1" \
   "$e/provider/libneedsgone.so.1"
rm -f "$e/build/libcuda.so.1"
# Beside the driver-only library, a copy of it cut short (driverdamaged/):
# a damaged library is its own failure, whatever it links to.
mkdir -p "$e/driverdamaged"
cp "$e/driveronly/libusecuda.so.1" "$e/driverdamaged/libusecuda.so.1"
size=$(wc -c < "$e/driveronly/libusecuda.so.1")
head -c $((size - 100)) "$e/driveronly/libusecuda.so.1" > "$e/driverdamaged/libusecut.so.1"
rm -f "$e/elf_gone.so"

# A Linux torch install in a venv: libtorch_cpu.so -> libc10.so ($ORIGIN),
# libtorch_cuda.so -> libcudart.so.99 expected from pip's nvidia package
# folder (RPATH $ORIGIN/../../nvidia/cuda_runtime/lib), which is absent.
tl=$e/venv/lib/python3.11/site-packages/torch/lib
mkdir -p "$tl" "$e/venv/lib/python3.11/site-packages/nvidia/cuda_runtime/lib"
so "$tl/libc10.so" "$s/leaf.c" -Wl,-soname,libc10.so
so "$tl/libtorch_cpu.so" "$s/mid.c" -Wl,-soname,libtorch_cpu.so "$tl/libc10.so" \
   -Wl,--enable-new-dtags,-rpath,'$ORIGIN'
so "$e/build/libcudart.so.99" "$s/leaf.c" -Wl,-soname,libcudart.so.99
so "$tl/libtorch_cuda.so" "$s/mid.c" -Wl,-soname,libtorch_cuda.so "$e/build/libcudart.so.99" \
   -Wl,--enable-new-dtags,-rpath,'$ORIGIN:$ORIGIN/../../nvidia/cuda_runtime/lib'

# cuDNN 9's shape: libcudnn.so.9 names none of its sub-libraries as needs
# and opens them at run time (so does libcudnn_graph.so.9 its engine
# libraries), each with RUNPATH $ORIGIN as nvidia-cudnn-cu12's are. The
# openers hold the names they open as text, as 9.1.0.70's do (not
# libcudnn_ext nor libcudnn_engines_tensor_ir, which came later). full/ has
# all eight; gone/ lacks libcudnn_engines_precompiled.so.9; newer/ has a
# graph library that also names libcudnn_engines_tensor_ir.so, as
# 9.28.1.4's does, without that library beside it.
printf 'const char *const aitk_fixture_opens[] = {"libcudnn_graph.so.9", "libcudnn_ops.so.9",\n  "libcudnn_cnn.so.9", "libcudnn_adv.so.9"};\n' > "$s/shim.c"
printf 'const char *const aitk_fixture_opens[] = {"libcudnn_engines_precompiled.so",\n  "libcudnn_engines_runtime_compiled.so", "libcudnn_heuristic.so"};\n' > "$s/graphnames.c"
printf 'const char *const aitk_fixture_opens[] = {"libcudnn_engines_precompiled.so",\n  "libcudnn_engines_runtime_compiled.so", "libcudnn_heuristic.so",\n  "libcudnn_engines_tensor_ir.so"};\n' > "$s/graphnewer.c"
for v in full gone newer; do
  c=$e/opened/$v
  mkdir -p "$c"
  for sub in ops cnn adv engines_precompiled engines_runtime_compiled heuristic; do
    so "$c/libcudnn_$sub.so.9" "$s/leaf.c" -Wl,-soname,libcudnn_$sub.so.9 \
       -Wl,--enable-new-dtags,-rpath,'$ORIGIN'
  done
  so "$c/libcudnn_graph.so.9" "$s/graphnames.c" -Wl,-soname,libcudnn_graph.so.9 \
     -Wl,--enable-new-dtags,-rpath,'$ORIGIN'
  so "$c/libcudnn.so.9" "$s/shim.c" -Wl,-soname,libcudnn.so.9 -Wl,--enable-new-dtags,-rpath,'$ORIGIN'
done
so "$e/opened/newer/libcudnn_graph.so.9" "$s/graphnewer.c" -Wl,-soname,libcudnn_graph.so.9 \
   -Wl,--enable-new-dtags,-rpath,'$ORIGIN'
rm -f "$e/opened/gone/libcudnn_engines_precompiled.so.9"
# graphgone/: libcudnn_ops.so.9 binds a symbol at version libcudnn_graph.so.9,
# as the real one does, and libcudnn_graph.so.9 is gone: dlopen then takes
# whatever copy ld.so.cache has (the CUDA toolkit's cuDNN, without this
# symbol) or none, and libcudnn_ops.so.9 fails to load either way.
c=$e/opened/graphgone
mkdir -p "$c"
printf 'libcudnn_graph.so.9 { global: aitk_fixture_graph_fn; local: *; };\n' > "$s/graph.map"
printf 'int aitk_fixture_graph_fn(void) { return 9; }\n' > "$s/graph.c"
printf 'int aitk_fixture_graph_fn(void);\nint ops_fn(void) { return aitk_fixture_graph_fn(); }\n' \
  > "$s/ops.c"
so "$c/libcudnn_graph.so.9" "$s/graph.c" -Wl,-soname,libcudnn_graph.so.9 \
   -Wl,--version-script,"$s/graph.map" -Wl,--enable-new-dtags,-rpath,'$ORIGIN'
so "$c/libcudnn_ops.so.9" "$s/ops.c" -Wl,-soname,libcudnn_ops.so.9 "$c/libcudnn_graph.so.9" \
   -Wl,--enable-new-dtags,-rpath,'$ORIGIN'
for sub in cnn adv engines_precompiled engines_runtime_compiled heuristic; do
  so "$c/libcudnn_$sub.so.9" "$s/leaf.c" -Wl,-soname,libcudnn_$sub.so.9 \
     -Wl,--enable-new-dtags,-rpath,'$ORIGIN'
done
so "$c/libcudnn.so.9" "$s/shim.c" -Wl,-soname,libcudnn.so.9 -Wl,--enable-new-dtags,-rpath,'$ORIGIN'
# user/: a library linking that libcudnn.so.9, as torch/lib's do (the
# folder a deps check examines holds it alone).
mkdir -p "$e/opened/user"
so "$e/opened/user/libusecudnn.so" "$s/mid.c" -Wl,-soname,libusecudnn.so -Wl,--no-as-needed \
   "$c/libcudnn.so.9" -Wl,--enable-new-dtags,-rpath,'$ORIGIN/../graphgone'
rm -f "$c/libcudnn_graph.so.9"

# torch apart from pip's nvidia-* wheels (pip install --user or --target, a
# PYTHONPATH folder): torch/lib's RPATH $ORIGIN/../../nvidia/... leads
# nowhere, and torch/__init__.py loads the wheels' libraries by path from
# sys.path itself. target/ is that other folder: libcudart.so.98, and
# libcublas.so.98 which brings libcublasLt.so.98 through its own RUNPATH.
#   venv/      torch 2.5.1's shape: libtorch_global_deps.so fails on
#              libcudart, so every library of the list is preloaded
#   venv-cudnn/ the same with cuDNN in the list, which target/ lacks
#   venv-new/  torch 2.15's shape: libcudart is in the venv, the rest is
#              preloaded best effort after libtorch_global_deps.so loaded
a=$e/apart
mkdir -p "$a/target/nvidia/cuda_runtime/lib" "$a/target/nvidia/cublas/lib"
so "$a/target/nvidia/cuda_runtime/lib/libcudart.so.98" "$s/leaf.c" -Wl,-soname,libcudart.so.98
so "$a/target/nvidia/cublas/lib/libcublasLt.so.98" "$s/leaf.c" -Wl,-soname,libcublasLt.so.98
so "$a/target/nvidia/cublas/lib/libcublas.so.98" "$s/mid.c" -Wl,-soname,libcublas.so.98 \
   -Wl,--no-as-needed "$a/target/nvidia/cublas/lib/libcublasLt.so.98" \
   -Wl,--enable-new-dtags,-rpath,'$ORIGIN'
for v in venv venv-cudnn venv-new; do
  tl=$a/$v/lib/python3.11/site-packages/torch/lib
  mkdir -p "$tl"
  so "$tl/libtorch_global_deps.so" "$s/mid.c" -Wl,-soname,libtorch_global_deps.so \
     -Wl,--no-as-needed "$a/target/nvidia/cuda_runtime/lib/libcudart.so.98" \
     -Wl,--disable-new-dtags,-rpath,'$ORIGIN/../../nvidia/cuda_runtime/lib'
  so "$tl/libtorch_cuda.so" "$s/top.c" -Wl,-soname,libtorch_cuda.so -Wl,--no-as-needed \
     "$a/target/nvidia/cuda_runtime/lib/libcudart.so.98" \
     "$a/target/nvidia/cublas/lib/libcublas.so.98" "$a/target/nvidia/cublas/lib/libcublasLt.so.98" \
     -Wl,--disable-new-dtags,-rpath,'$ORIGIN/../../nvidia/cublas/lib:$ORIGIN/../../nvidia/cuda_runtime/lib'
done
# The lists as the two releases write them (torch/__init__.py,
# _load_global_deps and _preload_cuda_deps).
cat > "$a/venv/lib/python3.11/site-packages/torch/__init__.py" <<'PY'
def _load_global_deps():
    try:
        ctypes.CDLL(global_deps_lib_path, mode=ctypes.RTLD_GLOBAL)
    except OSError as err:
        cuda_libs: Dict[str, str] = {
            "cublas": "libcublas.so.*[0-9]",
            "cuda_runtime": "libcudart.so.*[0-9]",
        }
PY
sed 's|"cublas": "libcublas.so.\*\[0-9\]",|&\n            "cudnn": "libcudnn.so.*[0-9]",|' \
    "$a/venv/lib/python3.11/site-packages/torch/__init__.py" \
    > "$a/venv-cudnn/lib/python3.11/site-packages/torch/__init__.py"
cat > "$a/venv-new/lib/python3.11/site-packages/torch/__init__.py" <<'PY'
def _preload_cuda_deps(err=None, required=True):
    cuda_libs: list[tuple[str, str]] = [
        ("cublas", "libcublasLt.so.*[0-9]"),
        ("cublas", "libcublas.so.*[0-9]"),
        ("cuda_runtime", "libcudart.so.*[0-9]"),
        ("cudnn", "libcudnn.so.*[0-9]"),
    ]
    _preload_cuda_lib("nvtx", "libnvToolsExt.so.*[0-9]", required=False)

def _load_global_deps():
    try:
        ctypes.CDLL(global_deps_lib_path, mode=ctypes.RTLD_GLOBAL)
        _preload_cuda_deps(required=False)
    except OSError as err:
        _preload_cuda_deps(err)
PY
mkdir -p "$a/venv-new/lib/python3.11/site-packages/nvidia/cuda_runtime/lib"
cp "$a/target/nvidia/cuda_runtime/lib/libcudart.so.98" \
   "$a/venv-new/lib/python3.11/site-packages/nvidia/cuda_runtime/lib/"

# A GNU ld script named like a library (as libc.so is), met by a glob.
mkdir -p "$e/ldscript"
printf '/* GNU ld script */\nGROUP ( libleaf.so.1 )\n' > "$e/ldscript/libscript.so"

# A DT_NEEDED name holding terminal control sequences (set title, clear
# screen): the text output must show them escaped.
mkdir -p "$e/escape"
so "$e/build/libesc.so" "$s/leaf.c" -Wl,-soname,"$(printf 'lib\033]0;PWN\007\033[2J.so')"
so "$e/escape/libuseesc.so" "$s/mid.c" -Wl,-soname,libuseesc.so "$e/build/libesc.so"
# A name with a newline that would forge a line of the verdict.
so "$e/build/libnl.so" "$s/leaf.c" -Xlinker -soname \
   -Xlinker "$(printf 'libnl\n  result: 0 problems, 0 warnings (1 links examined)\nx.so')"
so "$e/escape/libusenl.so" "$s/mid.c" -Wl,-soname,libusenl.so "$e/build/libnl.so"

# A missing symbol version of a non-glibc library: libneedsver.so was
# linked against libver.so defining VER_2; the installed copy has VER_1 only.
mkdir -p "$e/oldver"
printf 'VER_1 { global: aitk_v1; local: *; };\n' > "$s/ver1.map"
printf 'VER_1 { global: aitk_v1; local: *; };\nVER_2 { global: aitk_v2; } VER_1;\n' > "$s/ver2.map"
printf 'int aitk_v1(void) { return 1; }\nint aitk_v2(void) { return 2; }\n' > "$s/ver.c"
printf 'int aitk_v2(void);\nint aitk_needsver(void) { return aitk_v2(); }\n' > "$s/needsver.c"
so "$e/oldver/libver.so" "$s/ver.c" -Wl,-soname,libver.so -Wl,--version-script,"$s/ver2.map"
so "$e/oldver/libneedsver.so" "$s/needsver.c" -Wl,-soname,libneedsver.so "$e/oldver/libver.so" \
   -Wl,--enable-new-dtags,-rpath,'$ORIGIN'
so "$e/oldver/libver.so" "$s/ver.c" -Wl,-soname,libver.so -Wl,--version-script,"$s/ver1.map"

# Another release of a library under the same soname and version name:
# v1/libsv.so.1 defines aitk_sv_foo, aitk_sv_bar and aitk_sv_opt at
# AITK_SV_1; v2/ has only aitk_sv_foo there (cuDNN 9.1's sub-libraries
# against a newer cuDNN 9). libsvuse.so, linked against v1, binds all three
# (aitk_sv_opt weakly); libsvweak.so binds aitk_sv_foo and, weakly,
# aitk_sv_opt. Both search v2 before v1 (RUNPATH), as LD_LIBRARY_PATH puts
# /usr/local/cuda/lib64 before pip's cuDNN.
mkdir -p "$e/symver/v1" "$e/symver/v2"
printf 'AITK_SV_1 { global: aitk_sv_foo; aitk_sv_bar; aitk_sv_opt; local: *; };\n' > "$s/sv1.map"
printf 'AITK_SV_1 { global: aitk_sv_foo; local: *; };\n' > "$s/sv2.map"
printf 'int aitk_sv_foo(void) { return 1; }\nint aitk_sv_bar(void) { return 2; }\nint aitk_sv_opt(void) { return 3; }\n' \
  > "$s/sv1.c"
printf 'int aitk_sv_foo(void) { return 1; }\n' > "$s/sv2.c"
cat > "$s/svuse.c" <<'C'
int aitk_sv_foo(void);
int aitk_sv_bar(void);
__attribute__((weak)) int aitk_sv_opt(void);
int aitk_svuse(void) { return aitk_sv_foo() + aitk_sv_bar() + (aitk_sv_opt ? aitk_sv_opt() : 0); }
C
cat > "$s/svweak.c" <<'C'
int aitk_sv_foo(void);
__attribute__((weak)) int aitk_sv_opt(void);
int aitk_svweak(void) { return aitk_sv_foo() + (aitk_sv_opt ? aitk_sv_opt() : 0); }
C
so "$e/symver/v1/libsv.so.1" "$s/sv1.c" -Wl,-soname,libsv.so.1 -Wl,--version-script,"$s/sv1.map"
so "$e/symver/v2/libsv.so.1" "$s/sv2.c" -Wl,-soname,libsv.so.1 -Wl,--version-script,"$s/sv2.map"
for u in svuse svweak; do
  so "$e/symver/lib$u.so" "$s/$u.c" -Wl,-soname,lib$u.so "$e/symver/v1/libsv.so.1" \
     -Wl,--enable-new-dtags,-rpath,'$ORIGIN/v2:$ORIGIN/v1'
done

# A root with no SONAME that its dependency needs back by file name
# (nosoname/): X/libA.so needs libB.so (RUNPATH $ORIGIN/../Y), which needs
# libA.so and has no search path of its own. ld.so matches a needed name
# against the path the root was opened by and its SONAME, not its base
# name, so it searches for libA.so and does not find it. found/ is the same
# with libB.so's RUNPATH naming X: the search finds the root's own file,
# which ld.so reuses.
for v in nosoname found; do
  mkdir -p "$e/$v/X" "$e/$v/Y"
  rp=; [ $v = found ] && rp='-Wl,--enable-new-dtags,-rpath,$ORIGIN/../X'
  so "$e/$v/X/libA.so" "$s/leaf.c"
  so "$e/$v/Y/libB.so" "$s/mid.c" -Wl,-soname,libB.so -Wl,--no-as-needed -L"$e/$v/X" -lA $rp
  so "$e/$v/X/libA.so" "$s/leaf.c" -Wl,--no-as-needed "$e/$v/Y/libB.so" \
     -Wl,--enable-new-dtags,-rpath,'$ORIGIN/../Y'
done

# A symbolic link loop named like the needed library in the RUNPATH folder.
mkdir -p "$e/symloop/lib"
so "$e/build/libloop.so.1" "$s/leaf.c" -Wl,-soname,libloop.so.1
so "$e/symloop/libneedsloop.so" "$s/mid.c" -Wl,-soname,libneedsloop.so "$e/build/libloop.so.1" \
   -Wl,--enable-new-dtags,-rpath,'$ORIGIN/lib'
ln -s libloop.so.1 "$e/symloop/lib/libloop.so.1"

# A cycle: libcyca.so <-> libcycb.so (liba built twice to close the loop).
mkdir -p "$e/cycle"
so "$e/cycle/libcyca.so" "$s/leaf.c" -Wl,-soname,libcyca.so
so "$e/cycle/libcycb.so" "$s/mid.c" -Wl,-soname,libcycb.so "$e/cycle/libcyca.so" \
   -Wl,--enable-new-dtags,-rpath,'$ORIGIN'
so "$e/cycle/libcyca.so" "$s/leaf.c" -Wl,-soname,libcyca.so -Wl,--no-as-needed \
   "$e/cycle/libcycb.so" -Wl,--enable-new-dtags,-rpath,'$ORIGIN'

# Too-new glibc: link against a stand-in whose soname is libc.so.6 and which
# defines version GLIBC_2.99; at run time the real libc.so.6 lacks it.
mkdir -p "$e/glibc"
cat > "$s/fakec.map" <<'M'
GLIBC_2.99 { global: aitk_future; local: *; };
M
cat > "$s/fakec.c" <<'C'
int aitk_future(void) { return 0; }
C
cat > "$s/toonew.c" <<'C'
int aitk_future(void);
int aitk_toonew(void) { return aitk_future(); }
C
gcc -shared -fPIC -nostdlib -o "$e/build/libc.so.6" "$s/fakec.c" -Wl,-soname,libc.so.6 \
    -Wl,--version-script,"$s/fakec.map"
gcc -shared -fPIC -nostdlib -o "$e/glibc/libtoonew.so" "$s/toonew.c" -Wl,-soname,libtoonew.so \
    "$e/build/libc.so.6"

# --load and damaged files (test_load.c): constructors that abort, end the
# process with status 0, or hang; a data symbol the installed dependency
# lacks (the loader refuses, the static walk sees nothing); copies cut to
# half and to 100 bytes; a copy with its section headers zeroed; a library
# whose dependency is a cut copy.
l=$e/load
mkdir -p "$l/cutdep"
printf '#include <stdlib.h>\n__attribute__((constructor)) static void c(void) { abort(); }\n' \
    > "$s/ctor_abort.c"
printf '#include <unistd.h>\n__attribute__((constructor)) static void c(void) { _exit(0); }\n' \
    > "$s/ctor_exit.c"
printf '#include <unistd.h>\n__attribute__((constructor)) static void c(void) { sleep(300); }\n' \
    > "$s/ctor_hang.c"
so "$l/libctorabort.so" "$s/ctor_abort.c"
so "$l/libctorexit.so" "$s/ctor_exit.c"
so "$l/libctorhang.so" "$s/ctor_hang.c"
# Constructors that fork a helper which keeps running (holding the output
# pipes): one stays in the process group, one leaves it (setsid) and
# ignores SIGTERM. Both libraries load.
printf '#include <unistd.h>\n__attribute__((constructor)) static void c(void) { if (fork() == 0) for (;;) pause(); }\n' \
    > "$s/ctor_fork.c"
printf '#include <signal.h>\n#include <unistd.h>\n__attribute__((constructor)) static void c(void) { if (fork() == 0) { signal(SIGTERM, SIG_IGN); setsid(); for (;;) pause(); } }\n' \
    > "$s/ctor_daemon.c"
so "$l/libctorfork.so" "$s/ctor_fork.c"
so "$l/libctordaemon.so" "$s/ctor_daemon.c"
printf 'int aitk_data = 1;\n' > "$s/data_new.c"
printf 'int aitk_other = 1;\n' > "$s/data_old.c"
printf 'extern int aitk_data;\nint aitk_uses(void) { return aitk_data; }\n' > "$s/uses_data.c"
so "$l/libdata.so" "$s/data_new.c" -Wl,-soname,libdata.so
so "$l/libundef.so" "$s/uses_data.c" -Wl,-soname,libundef.so "$l/libdata.so" \
   -Wl,--enable-new-dtags,-rpath,'$ORIGIN'
so "$l/libdata.so" "$s/data_old.c" -Wl,-soname,libdata.so
whole=$e/missing/libneedsgone.so
size=$(wc -c < "$whole")
head -c $((size / 2)) "$whole" > "$l/libhalf.so"
head -c 100 "$whole" > "$l/libcut100.so"
# libcutdep.so: half of a library; libuser.so needs it (found through RUNPATH).
so "$l/cutdep/whole.so" "$s/leaf.c" -Wl,-soname,libcutdep.so
size=$(wc -c < "$l/cutdep/whole.so")
so "$l/cutdep/libuser.so" "$s/mid.c" -Wl,-soname,libuser.so "$l/cutdep/whole.so" \
   -Wl,--enable-new-dtags,-rpath,'$ORIGIN'
head -c $((size / 2)) "$l/cutdep/whole.so" > "$l/cutdep/libcutdep.so"
rm -f "$l/cutdep/whole.so"
# Section headers zeroed (e_shoff, e_shnum, e_shstrndx of an ELF64 header):
# ld.so never reads them, so the library still needs libgone.so.1.
python3 - "$whole" "$l/libnosections.so" <<'PY'
import struct, sys
data = bytearray(open(sys.argv[1], 'rb').read())
assert data[4] == 2 and data[5] == 1  # ELFCLASS64, little-endian
struct.pack_into('<Q', data, 0x28, 0)
struct.pack_into('<HH', data, 0x3c, 0, 0)
open(sys.argv[2], 'wb').write(bytes(data))
PY

# Loaded only inside its needer, as torch's libtorch_nvshmem.so is: libinner
# uses a variable of libprov without listing libprov, so alone the loader
# refuses it (a data symbol binds at load time even when lazy); libouter
# lists both, so inside libouter it loads. orphan/ holds libinner with no
# needer (broken), and halfway/ a needer that does not list libprov either
# (both broken).
cat > "$s/prov.c" <<'C'
int aitk_provided_data = 7;
C
cat > "$s/inner.c" <<'C'
extern int aitk_provided_data;
int aitk_inner(void) { return aitk_provided_data; }
C
cat > "$s/outer.c" <<'C'
int aitk_inner(void);
int aitk_outer(void) { return aitk_inner() + 1; }
C
mkdir -p "$e/inside" "$e/orphan" "$e/halfway"
so "$e/inside/libprov.so" "$s/prov.c" -Wl,-soname,libprov.so
so "$e/inside/libinner.so" "$s/inner.c" -Wl,-soname,libinner.so
so "$e/inside/libouter.so" "$s/outer.c" -Wl,-soname,libouter.so -Wl,--no-as-needed \
   "$e/inside/libprov.so" "$e/inside/libinner.so" -Wl,--enable-new-dtags,-rpath,'$ORIGIN'
cp "$e/inside/libinner.so" "$e/orphan/libinner.so"
cp "$e/inside/libinner.so" "$e/halfway/libinner.so"
so "$e/halfway/libouter.so" "$s/outer.c" -Wl,-soname,libouter.so -Wl,--no-as-needed \
   "$e/halfway/libinner.so" -Wl,--enable-new-dtags,-rpath,'$ORIGIN'

# ----------------------------------------------------------------- PE ----
if ! command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1; then
    echo "no x86_64-w64-mingw32-gcc: PE fixtures not built" >&2
    exit 0
fi
p=$out/pe
b=$p/build
lib=$p/env/Lib/site-packages/torch/lib
sys=$p/winroot/Windows/System32
mkdir -p "$b" "$lib" "$sys" "$p/env/Library/bin"
cc64=x86_64-w64-mingw32-gcc
dll() { name=$1; shift; $cc64 -shared -o "$b/$name" "$@"; }
stub() { # stub NAME SYMBOL: a DLL exporting one function
    printf 'int %s(void) { return 7; }\n' "$2" > "$s/$2.c"
    dll "$1" "$s/$2.c"
}
stub libomp140.x86_64.dll omp_get_max_threads_stub
stub vcruntime140.dll vcrt_stub
stub msvcp140.dll msvcp_stub
stub zlibwapi.dll zlib_stub
stub api-ms-win-crt-runtime-l1-1-0.dll crt_stub
cat > "$s/iomp.rc.in" <<'R'
1 VERSIONINFO
FILEVERSION @V@
PRODUCTVERSION @V@
BEGIN
END
R
iomp() { # iomp OUTDIR VERSION(a,b,c,d)
    sed "s/@V@/$2/" "$s/iomp.rc.in" > "$s/iomp.rc"
    x86_64-w64-mingw32-windres "$s/iomp.rc" -O coff -o "$s/iomp.res"
    printf 'int omp_stub(void) { return 5; }\n' > "$s/iomp.c"
    $cc64 -shared -o "$1/libiomp5md.dll" "$s/iomp.c" "$s/iomp.res"
}
iomp "$b" 5,0,2023,1
iomp "$lib" 5,0,2023,1
iomp "$p/env/Library/bin" 5,0,2019,1

# c10.dll -> vcruntime140.dll, msvcp140.dll
printf 'int vcrt_stub(void); int msvcp_stub(void);\nint c10_fn(void) { return vcrt_stub() + msvcp_stub(); }\n' > "$s/c10.c"
$cc64 -shared -o "$lib/c10.dll" "$s/c10.c" "$b/vcruntime140.dll" "$b/msvcp140.dll"
# fbgemm.dll -> libomp140.x86_64.dll (absent from the tree), vcruntime140.dll, an API set
printf 'int omp_get_max_threads_stub(void); int vcrt_stub(void); int crt_stub(void);\nint fbgemm_fn(void) { return omp_get_max_threads_stub() + vcrt_stub() + crt_stub(); }\n' > "$s/fbgemm.c"
$cc64 -shared -o "$lib/fbgemm.dll" "$s/fbgemm.c" "$b/libomp140.x86_64.dll" "$b/vcruntime140.dll" \
    "$b/api-ms-win-crt-runtime-l1-1-0.dll"
# torch_cpu.dll -> c10, fbgemm, libiomp5md, and cudnn64_9.dll as a delay-load import
printf 'LIBRARY cudnn64_9.dll\nEXPORTS\n  cudnnGetVersion\n' > "$s/cudnn.def"
x86_64-w64-mingw32-dlltool --input-def "$s/cudnn.def" --output-delaylib "$b/libcudnn_delay.a" \
    --dllname cudnn64_9.dll
printf 'int c10_fn(void); int fbgemm_fn(void); int omp_stub(void); unsigned long long cudnnGetVersion(void);\nint torch_cpu_fn(int x) { return c10_fn() + fbgemm_fn() + omp_stub() + (x ? (int)cudnnGetVersion() : 0); }\n' > "$s/torch_cpu.c"
$cc64 -shared -o "$lib/torch_cpu.dll" "$s/torch_cpu.c" "$lib/c10.dll" "$lib/fbgemm.dll" \
    "$b/libiomp5md.dll" "$b/libcudnn_delay.a"
# GNU ld builds the delay-load descriptor but leaves data directory 13 (Delay
# Import) empty; MSVC's linker fills it. Fill it as MSVC would, from the
# descriptor's symbol address, so the DLL looks like the real thing.
desc=$(x86_64-w64-mingw32-nm "$lib/torch_cpu.dll" | awk '/__DELAY_IMPORT_DESCRIPTOR_/ {print $1; exit}')
base=$(x86_64-w64-mingw32-objdump -p "$lib/torch_cpu.dll" | awk '$1 == "ImageBase" {print $2; exit}')
python3 - "$lib/torch_cpu.dll" "$desc" "$base" <<'PY'
import struct, sys
path, desc, base = sys.argv[1], int(sys.argv[2], 16), int(sys.argv[3], 16)
data = bytearray(open(path, 'rb').read())
pe = struct.unpack_from('<I', data, 0x3c)[0]
opt = pe + 24
assert struct.unpack_from('<H', data, opt)[0] == 0x20b
struct.pack_into('<II', data, opt + 112 + 13 * 8, desc - base, 32)
open(path, 'wb').write(bytes(data))
PY
# torch_cuda.dll -> zlibwapi.dll, and the copy in torch\lib is a 32-bit DLL
printf 'int zlib_stub(void); int c10_fn(void);\nint torch_cuda_fn(void) { return zlib_stub() + c10_fn(); }\n' > "$s/torch_cuda.c"
$cc64 -shared -o "$lib/torch_cuda.dll" "$s/torch_cuda.c" "$b/zlibwapi.dll" "$lib/c10.dll"
if command -v i686-w64-mingw32-gcc >/dev/null 2>&1; then
    i686-w64-mingw32-gcc -shared -o "$lib/zlibwapi.dll" "$s/zlib_stub.c"
else
    echo "no i686-w64-mingw32-gcc: the 32-bit DLL fixture is missing" >&2
    : > "$p/no-i686"
fi
# caffe2_nvrtc.dll -> nvrtc64_120_0.dll, linked against a newer copy that
# exports nvrtc_new; the installed copy only has nvrtc_old (error 127).
printf 'int nvrtc_old(void) { return 1; }\nint nvrtc_new(void) { return 2; }\n' > "$s/nvrtc_new.c"
printf 'int nvrtc_old(void) { return 1; }\n' > "$s/nvrtc_old.c"
$cc64 -shared -o "$b/nvrtc64_120_0.dll" "$s/nvrtc_new.c"
$cc64 -shared -o "$lib/nvrtc64_120_0.dll" "$s/nvrtc_old.c"
printf 'int nvrtc_old(void); int nvrtc_new(void);\nint caffe2_fn(void) { return nvrtc_old() + nvrtc_new(); }\n' > "$s/caffe2.c"
$cc64 -shared -o "$lib/caffe2_nvrtc.dll" "$s/caffe2.c" "$b/nvrtc64_120_0.dll"
# Imports by ordinal: ordimp.dll imports ordinal 5 of ordb.dll (import
# library from a .def), the installed ordb.dll exports only ordinal 1.
mkdir -p "$p/ord" "$p/fwd"
printf 'LIBRARY ordb.dll\nEXPORTS\n  ordfn @5 NONAME\n' > "$s/ord.def"
x86_64-w64-mingw32-dlltool --input-def "$s/ord.def" --output-lib "$b/libordb.a" --dllname ordb.dll
printf 'int ordfn(void);\nint ordimp_fn(void) { return ordfn(); }\n' > "$s/ordimp.c"
$cc64 -shared -o "$p/ord/ordimp.dll" "$s/ordimp.c" "$b/libordb.a"
printf 'int ordfn(void) { return 1; }\n' > "$s/ordb.c"
$cc64 -shared -o "$p/ord/ordb.dll" "$s/ordb.c"
# A forwarded export whose target DLL is absent: fwdb.dll exports
# fwdfn = cmiss.realfn; fwda.dll imports fwdfn.
printf 'LIBRARY fwdb.dll\nEXPORTS\n  fwdfn = cmiss.realfn\n' > "$s/fwd.def"
printf 'int fwd_dummy(void) { return 0; }\n' > "$s/fwdb.c"
$cc64 -shared -o "$p/fwd/fwdb.dll" "$s/fwdb.c" "$s/fwd.def" -Wl,--out-implib,"$b/libfwdb.a"
printf 'int fwdfn(void);\nint fwda_fn(void) { return fwdfn(); }\n' > "$s/fwda.c"
$cc64 -shared -o "$p/fwd/fwda.dll" "$s/fwda.c" "$b/libfwdb.a"
# A forwarded export whose target DLL is there but lacks the function:
# fwdc.dll forwards fwdok to cmold.realok and fwdgone to cmold.realgone;
# cmold.dll exports realok only; fwdd.dll imports both (error 127).
mkdir -p "$p/fwd2"
printf 'int realok(void) { return 1; }\n' > "$s/cmold.c"
$cc64 -shared -o "$p/fwd2/cmold.dll" "$s/cmold.c"
printf 'LIBRARY fwdc.dll\nEXPORTS\n  fwdok = cmold.realok\n  fwdgone = cmold.realgone\n' > "$s/fwd2.def"
$cc64 -shared -o "$p/fwd2/fwdc.dll" "$s/fwdb.c" "$s/fwd2.def" -Wl,--out-implib,"$b/libfwdc.a"
printf 'int fwdok(void); int fwdgone(void);\nint fwdd_fn(void) { return fwdok() + fwdgone(); }\n' > "$s/fwdd.c"
$cc64 -shared -o "$p/fwd2/fwdd.dll" "$s/fwdd.c" "$b/libfwdc.a" -Wl,--out-implib,"$b/libfwdd.a"
# fwdc.dll met twice: first by fwdaa.dll, which imports only fwdok, then by
# fwdd.dll: fwdtop.dll imports from both, fwdaa first (and first by name).
printf 'int fwdok(void);\nint fwdaa_fn(void) { return fwdok(); }\n' > "$s/fwdaa.c"
$cc64 -shared -o "$p/fwd2/fwdaa.dll" "$s/fwdaa.c" "$b/libfwdc.a" -Wl,--out-implib,"$b/libfwdaa.a"
printf 'int fwdaa_fn(void); int fwdd_fn(void);\nint top_fn(void) { return fwdaa_fn() + fwdd_fn(); }\n' > "$s/fwdtop.c"
$cc64 -shared -o "$p/fwd2/fwdtop.dll" "$s/fwdtop.c" "$b/libfwdaa.a" "$b/libfwdd.a"
# Two DLLs forwarding to each other, each importing the other's forward:
# fwdx.dll forwards xf to fwdy.yreal and imports yh; fwdy.dll forwards yh to
# fwdx.xreal and imports xf; fwdr.dll imports xf. (fwdx is built twice: first
# without its import, for the import library fwdy links against.)
mkdir -p "$p/fwdcycle"
printf 'LIBRARY fwdx.dll\nEXPORTS\n  xf = fwdy.yreal\n  xreal\n' > "$s/fwdx.def"
printf 'LIBRARY fwdy.dll\nEXPORTS\n  yh = fwdx.xreal\n  yreal\n' > "$s/fwdy.def"
printf 'int xreal(void) { return 1; }\n' > "$s/fwdx0.c"
printf 'int yh(void);\nint xreal(void) { return 1; }\nint x_use(void) { return yh(); }\n' > "$s/fwdx.c"
printf 'int xf(void);\nint yreal(void) { return 2; }\nint y_use(void) { return xf(); }\n' > "$s/fwdy.c"
printf 'int xf(void);\nint r_use(void) { return xf(); }\n' > "$s/fwdr.c"
$cc64 -shared -o "$b/fwdx0.dll" "$s/fwdx0.c" "$s/fwdx.def" -Wl,--out-implib,"$b/libfwdx.a"
$cc64 -shared -o "$p/fwdcycle/fwdy.dll" "$s/fwdy.c" "$s/fwdy.def" "$b/libfwdx.a" \
      -Wl,--out-implib,"$b/libfwdy.a"
$cc64 -shared -o "$p/fwdcycle/fwdx.dll" "$s/fwdx.c" "$s/fwdx.def" "$b/libfwdy.a"
$cc64 -shared -o "$p/fwdcycle/fwdr.dll" "$s/fwdr.c" "$b/libfwdx.a"
# A Git LFS pointer where a dependency DLL should be (torch\lib copied from
# a git checkout without `git lfs pull`): lfsuse.dll imports from lfsdll.dll,
# whose file is then replaced by the pointer.
mkdir -p "$p/lfsdep"
printf 'int lfs_fn(void) { return 4; }\n' > "$s/lfsdll.c"
$cc64 -shared -o "$p/lfsdep/lfsdll.dll" "$s/lfsdll.c" -Wl,--out-implib,"$b/liblfsdll.a"
printf 'int lfs_fn(void);\nint lfsuse_fn(void) { return lfs_fn(); }\n' > "$s/lfsuse.c"
$cc64 -shared -o "$p/lfsdep/lfsuse.dll" "$s/lfsuse.c" "$b/liblfsdll.a"
printf 'version https://git-lfs.github.com/spec/v1\noid sha256:%064d\nsize 98304\n' 0 \
  > "$p/lfsdep/lfsdll.dll"
# A chain of forwards, followed as the loader follows it: fwduse.dll imports
# cf, ok and gone from fwdhead.dll, which forwards them to fwdmid.dll, which
# forwards cf to cmiss2.dll (absent: error 126) and ok, gone to fwdend.dll
# (which exports realok only: error 127 for gone).
mkdir -p "$p/fwdchain"
printf 'int realok(void) { return 3; }\n' > "$s/fwdend.c"
$cc64 -shared -o "$p/fwdchain/fwdend.dll" "$s/fwdend.c"
printf 'LIBRARY fwdmid.dll\nEXPORTS\n  cf = cmiss2.realcf\n  ok2 = fwdend.realok\n  gone2 = fwdend.realgone\n' \
  > "$s/fwdmid.def"
$cc64 -shared -o "$p/fwdchain/fwdmid.dll" "$s/fwdb.c" "$s/fwdmid.def"
printf 'LIBRARY fwdhead.dll\nEXPORTS\n  cf = fwdmid.cf\n  ok = fwdmid.ok2\n  gone = fwdmid.gone2\n' \
  > "$s/fwdhead.def"
$cc64 -shared -o "$p/fwdchain/fwdhead.dll" "$s/fwdb.c" "$s/fwdhead.def" \
      -Wl,--out-implib,"$b/libfwdhead.a"
printf 'int cf(void); int ok(void); int gone(void);\nint use_fn(void) { return cf() + ok() + gone(); }\n' \
  > "$s/fwduse.c"
$cc64 -shared -o "$p/fwdchain/fwduse.dll" "$s/fwduse.c" "$b/libfwdhead.a"
# The same chain where the middle DLL is also a plain import: fwdr2.dll
# imports f from fwda2.dll, which forwards it to fwdb2.f and imports bx from
# fwdb2.dll; fwdb2 forwards f to fwdc2.f; fwdc2.dll lacks f (error 127).
# fwdb2 met first as fwda2's import must still pass the chain on.
printf 'int other(void) { return 5; }\n' > "$s/fwdc2.c"
$cc64 -shared -o "$p/fwdchain/fwdc2.dll" "$s/fwdc2.c"
printf 'LIBRARY fwdb2.dll\nEXPORTS\n  bx\n  f = fwdc2.f\n' > "$s/fwdb2.def"
printf 'int bx(void) { return 6; }\n' > "$s/fwdb2.c"
$cc64 -shared -o "$p/fwdchain/fwdb2.dll" "$s/fwdb2.c" "$s/fwdb2.def" -Wl,--out-implib,"$b/libfwdb2.a"
printf 'LIBRARY fwda2.dll\nEXPORTS\n  f = fwdb2.f\n  a_use\n' > "$s/fwda2.def"
printf 'int bx(void);\nint a_use(void) { return bx(); }\n' > "$s/fwda2.c"
$cc64 -shared -o "$p/fwdchain/fwda2.dll" "$s/fwda2.c" "$s/fwda2.def" "$b/libfwdb2.a" \
      -Wl,--out-implib,"$b/libfwda2.a"
printf 'int f(void);\nint r2_use(void) { return f(); }\n' > "$s/fwdr2.c"
$cc64 -shared -o "$p/fwdchain/fwdr2.dll" "$s/fwdr2.c" "$b/libfwda2.a"
# Names as long as MSVC's mangled C++ names in torch's DLLs (torch_cpu.dll
# exports names of up to 3,199 bytes; torch_python.dll imports them): longname.dll
# exports one of 3,300 bytes and longuse.dll imports it by that name.
mkdir -p "$p/longname"
long=$(printf 'L%03300d' 0 | tr 0 x)
printf 'int %s(void) { return 3; }\n' "$long" > "$s/longname.c"
printf 'LIBRARY longname.dll\nEXPORTS\n  %s\n' "$long" > "$s/longname.def"
$cc64 -shared -o "$p/longname/longname.dll" "$s/longname.c" "$s/longname.def" \
      -Wl,--out-implib,"$b/liblongname.a"
printf 'int %s(void);\nint long_use(void) { return %s(); }\n' "$long" "$long" > "$s/longuse.c"
$cc64 -shared -o "$p/longname/longuse.dll" "$s/longuse.c" "$b/liblongname.a"
# python3XY.dll is the interpreter's, loaded by python.exe from its folder:
# venv/ has pyvenv.cfg home = base311/ (which holds python311.dll), venv312/
# points at a base holding only python312.dll (torch built for another
# Python), loose/ is a torch_python.dll outside any environment.
for v in 311 312; do
    mkdir -p "$p/base$v"
    printf 'int Py_IsInitialized(void) { return 1; }\n' > "$s/py$v.c"
    $cc64 -shared -o "$p/base$v/python$v.dll" "$s/py$v.c" -Wl,--out-implib,"$b/libpython$v.a"
done
printf 'int Py_IsInitialized(void);\nint tp_use(void) { return Py_IsInitialized(); }\n' > "$s/tp.c"
$cc64 -shared -o "$b/torch_python.dll" "$s/tp.c" "$b/libpython311.a"
for e in venv venv312; do
    mkdir -p "$p/$e/Lib/site-packages/torch/lib"
    cp "$b/torch_python.dll" "$p/$e/Lib/site-packages/torch/lib/"
done
printf 'home = %s\ninclude-system-site-packages = false\n' "$p/base311" > "$p/venv/pyvenv.cfg"
printf 'home = %s\n' "$p/base312" > "$p/venv312/pyvenv.cfg"
mkdir -p "$p/loose"
cp "$b/torch_python.dll" "$p/loose/"
# torch 2.4.0's torch_cpu.dll and fbgemm.dll import VCOMP140.DLL (MSVC's
# OpenMP, from the VC++ redistributable): usevcomp.dll imports it, written
# as MSVC writes it, and no System32 here has it.
mkdir -p "$p/vcomp"
printf 'LIBRARY VCOMP140.DLL\nEXPORTS\n  omp_get_max_threads\n' > "$s/vcomp.def"
x86_64-w64-mingw32-dlltool --input-def "$s/vcomp.def" --output-lib "$b/libvcomp.a" \
    --dllname VCOMP140.DLL
printf 'int omp_get_max_threads(void);\nint vc_use(void) { return omp_get_max_threads(); }\n' \
  > "$s/usevcomp.c"
$cc64 -shared -o "$p/vcomp/usevcomp.dll" "$s/usevcomp.c" "$b/libvcomp.a"
# The installed VC++ redistributable lives in System32 (kernel32.dll does
# not: the built-in list must cover it).
cp "$b/vcruntime140.dll" "$b/msvcp140.dll" "$sys/"
# cuDNN 9's DLLs: cudnn64_9.dll imports none of its sub-DLLs and opens them
# by name at run time (so does cudnn_graph64_9.dll its engine DLLs), as
# nvidia-cudnn-cu12 9.1.0.70's win_amd64 DLLs do. full/ has all eight, its
# shim spelled cuDNN64_9.DLL (Windows compares names ignoring case); gone/
# lacks cudnn_ops64_9.dll.
# The shim and graph DLLs hold the names they open as UTF-16 text, as the
# real ones do.
printf 'int cudnn_stub(void) { return 9; }\n' > "$s/cudnnstub.c"
printf '__declspec(dllexport) const unsigned short *const aitk_fixture_opens[] = {u"cudnn_graph64_9.dll",\n  u"cudnn_ops64_9.dll", u"cudnn_cnn64_9.dll", u"cudnn_adv64_9.dll"};\n' > "$s/winshim.c"
printf '__declspec(dllexport) const unsigned short *const aitk_fixture_opens[] = {u"cudnn_engines_precompiled64_9.dll",\n  u"cudnn_engines_runtime_compiled64_9.dll", u"cudnn_heuristic64_9.dll"};\n' > "$s/wingraph.c"
for v in full gone; do
    mkdir -p "$p/opened/$v"
    for sub in ops cnn adv engines_precompiled engines_runtime_compiled heuristic; do
        $cc64 -shared -o "$p/opened/$v/cudnn_${sub}64_9.dll" "$s/cudnnstub.c"
    done
    $cc64 -std=c11 -shared -o "$p/opened/$v/cudnn_graph64_9.dll" "$s/wingraph.c"
done
$cc64 -std=c11 -shared -o "$p/opened/full/cuDNN64_9.DLL" "$s/winshim.c"
$cc64 -std=c11 -shared -o "$p/opened/gone/cudnn64_9.dll" "$s/winshim.c"
rm -f "$p/opened/gone/cudnn_ops64_9.dll"
echo "fixtures built in $out"
