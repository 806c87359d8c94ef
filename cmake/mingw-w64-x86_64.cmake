# Cross-compiling for 64-bit Windows with Debian's mingw-w64 (the -posix
# variants: OpenMP's libgomp needs winpthreads). Libraries come from
# AITK_WIN_DEPS/prefix, built by ci/build-win-deps.sh; tests run under Wine
# (CMAKE_CROSSCOMPILING_EMULATOR), so `ctest` works unchanged.
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(CMAKE_C_COMPILER x86_64-w64-mingw32-gcc-posix)
set(CMAKE_CXX_COMPILER x86_64-w64-mingw32-g++-posix)
set(CMAKE_RC_COMPILER x86_64-w64-mingw32-windres)

if(NOT AITK_WIN_DEPS)
  set(AITK_WIN_DEPS "${CMAKE_CURRENT_LIST_DIR}/../build/win-deps")
endif()
get_filename_component(AITK_WIN_DEPS "${AITK_WIN_DEPS}" ABSOLUTE)
set(CMAKE_FIND_ROOT_PATH /usr/x86_64-w64-mingw32 "${AITK_WIN_DEPS}/prefix")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# pkg-config must see the cross-built .pc files only, never the host's.
set(ENV{PKG_CONFIG_LIBDIR} "${AITK_WIN_DEPS}/prefix/lib/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")

# Debian's wine64 package installs the loader here (the `wine` package adds
# /usr/bin/wine). Quiet Wine's own diagnostics; tests read stderr.
find_program(AITK_WINE NAMES wine64 wine PATHS /usr/lib/wine NO_CMAKE_FIND_ROOT_PATH)
if(AITK_WINE)
  set(CMAKE_CROSSCOMPILING_EMULATOR "${AITK_WINE}")
endif()
