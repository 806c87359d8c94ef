# Packages, made by CPack from the install rules (the executable in
# validate/, the CUDA plugin in kernels/cuda/, the man page and documents
# here):
#   Linux:   a .deb for Debian 12:  cpack --config build/release/CPackConfig.cmake -G DEB
#   Windows: a zip of the .exe and README.txt:  cpack --config build/windows/CPackConfig.cmake
# or the presets: cmake --workflow --preset package-deb | package-windows.
# tests/package builds the .deb, installs it into a scratch root and runs it.

set(CPACK_PACKAGE_NAME aitk-validate)
set(CPACK_PACKAGE_VENDOR "the aitk-validate project")
set(CPACK_PACKAGE_CONTACT "the aitk-validate project")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "tells whether a machine can train FLUX, Chroma and OmniGen2 LoRAs with ai-toolkit")

if(WIN32)
  # The zip: aitk-validate-<version>-win64/{aitk-validate.exe,README.txt}.
  # The .exe links everything statically (see the top CMakeLists.txt), so
  # nothing else belongs in it.
  install(FILES ${PROJECT_SOURCE_DIR}/cmake/windows-zip-README.txt DESTINATION . RENAME README.txt)
  set(CPACK_GENERATOR ZIP)
  set(CPACK_SYSTEM_NAME win64)
  set(CPACK_INCLUDE_TOPLEVEL_DIRECTORY ON)
  include(CPack)
  return()
endif()

# ---- the man page, generated from the built program's --help ----
# Not when cross-compiling: the program cannot run on the build machine.
if(NOT CMAKE_CROSSCOMPILING)
  set(man_page ${PROJECT_BINARY_DIR}/aitk-validate.1)
  # gzip -n: no name or time stamp in the archive, so rebuilds are identical.
  add_custom_command(OUTPUT ${man_page}.gz
    COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:aitk-validate> -DOUT=${man_page}
            -DVERSION=${PROJECT_VERSION} -P ${PROJECT_SOURCE_DIR}/cmake/manpage.cmake
    COMMAND gzip -9 -n -f ${man_page}
    DEPENDS aitk-validate ${PROJECT_SOURCE_DIR}/cmake/manpage.cmake
    COMMENT "Generating the man page from aitk-validate --help"
    VERBATIM)
  add_custom_target(aitk_manpage ALL DEPENDS ${man_page}.gz)
  install(FILES ${man_page}.gz DESTINATION share/man/man1)
endif()
# The README's links point into docs/: both go together.
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION share/doc/aitk-validate)
file(GLOB doc_pages ${PROJECT_SOURCE_DIR}/docs/*.md)
install(FILES ${doc_pages} DESTINATION share/doc/aitk-validate/docs)

# ---- the .deb ----
set(CPACK_GENERATOR DEB)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT) # aitk-validate_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# The synopsis line is CPACK_PACKAGE_DESCRIPTION_SUMMARY; this is the
# extended description under it (no ";": CMake would read it as a list).
string(CONCAT CPACK_DEBIAN_PACKAGE_DESCRIPTION
  "It checks the driver, the CUDA libraries, the Python environment and torch install,\n"
  "measures the LoRA training step, predicts time and memory on GPUs you do not have,\n"
  "and writes JSON, HTML, Markdown and JUnit reports. The CUDA plugin, when built,\n"
  "is in /usr/lib/aitk-validate: it needs NVIDIA's CUDA runtime and cuBLAS.")
# Depends from the ELF files themselves (dpkg-shlibdeps against this
# machine's Debian packages: libc6, libyaml-0-2, libcjson1, libelf1,
# libgomp1, libbenchmark1debian, libstdc++6). CPack passes
# --ignore-missing-info, so the plugin's NVIDIA libraries (libcudart,
# libcublasLt: NVIDIA's packages or pip wheels, never Debian's) add nothing:
# the validator must install and report on machines without them.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# OpenBLAS is opened with dlopen at the first CPU GEMM (kernels/cpu/blas.c),
# so dpkg-shlibdeps cannot see it. Recommends, not Depends: --quick,
# predict, deps and compare never load it, and the validator reports a
# missing OpenBLAS as a finding. libopenblas0 is Debian's metapackage for
# whichever of the pthread/openmp/serial builds provides libopenblas.so.0.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "libopenblas0")
include(CPack)
