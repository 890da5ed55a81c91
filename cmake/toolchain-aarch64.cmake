# CMake toolchain file: cross-compiles radixserve for arm64 (aarch64) Linux on an x86-64 Debian host
# (issue 43), with Debian's cross compiler (crossbuild-essential-arm64) and an arm64 sysroot of the
# build's Debian packages made by scripts/arm64-sysroot.sh.
#
#   apt-get install crossbuild-essential-arm64 qemu-user-static
#   bash scripts/arm64-sysroot.sh              # the sysroot, once
#   cmake -S . -B build-arm64 -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-aarch64.cmake
#
# The sysroot is -DRADIXSERVE_ARM64_SYSROOT=DIR, else $RADIXSERVE_ARM64_SYSROOT, else
# ~/.cache/radixserve/arm64-sysroot (the script's default). It holds the arm64 libraries, headers, CMake packages
# and pkg-config files; C library, libstdc++ and libgcc are the cross toolchain's own
# (/usr/aarch64-linux-gnu), which the sysroot leaves out.
#
# Programs the build runs (protoc, idlc, pkg-config) are the host's. arm64 programs (try_run, ctest)
# run under qemu-aarch64-static: CMAKE_CROSSCOMPILING_EMULATOR. A native build on an arm64
# machine does not use this file.

set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(RADIXSERVE_ARM64_TRIPLE aarch64-linux-gnu)
set(CMAKE_LIBRARY_ARCHITECTURE ${RADIXSERVE_ARM64_TRIPLE})

# ---- the sysroot ----------------------------------------------------------------------------------
# This file is read again for every try_compile, where the cache is not there: the environment
# carries the choice into those runs.
if(NOT RADIXSERVE_ARM64_SYSROOT)
  if(DEFINED ENV{RADIXSERVE_ARM64_SYSROOT} AND NOT "$ENV{RADIXSERVE_ARM64_SYSROOT}" STREQUAL "")
    set(RADIXSERVE_ARM64_SYSROOT "$ENV{RADIXSERVE_ARM64_SYSROOT}")
  else()
    set(RADIXSERVE_ARM64_SYSROOT "$ENV{HOME}/.cache/radixserve/arm64-sysroot")
  endif()
endif()
set(RADIXSERVE_ARM64_SYSROOT "${RADIXSERVE_ARM64_SYSROOT}" CACHE PATH
    "arm64 sysroot made by scripts/arm64-sysroot.sh")
set(ENV{RADIXSERVE_ARM64_SYSROOT} "${RADIXSERVE_ARM64_SYSROOT}")
get_filename_component(_rs_sysroot "${RADIXSERVE_ARM64_SYSROOT}" REALPATH)
if(NOT EXISTS "${_rs_sysroot}/usr/lib/${RADIXSERVE_ARM64_TRIPLE}")
  message(FATAL_ERROR "toolchain-aarch64: no arm64 sysroot at ${_rs_sysroot} (no usr/lib/${RADIXSERVE_ARM64_TRIPLE} in it): "
                      "make it with `bash scripts/arm64-sysroot.sh ${_rs_sysroot}`, or point "
                      "-DRADIXSERVE_ARM64_SYSROOT / $RADIXSERVE_ARM64_SYSROOT at one")
endif()
# Where the cross toolchain keeps the arm64 C library and libstdc++ (Debian's *-arm64-cross packages).
set(_rs_libc_root /usr/${RADIXSERVE_ARM64_TRIPLE})
if(NOT EXISTS "${_rs_libc_root}/lib/libc.so.6")
  message(FATAL_ERROR "toolchain-aarch64: no ${_rs_libc_root}/lib/libc.so.6: apt-get install crossbuild-essential-arm64")
endif()

# ---- compilers ----------------------------------------------------------------------------------
find_program(_rs_cc ${RADIXSERVE_ARM64_TRIPLE}-gcc)
find_program(_rs_cxx ${RADIXSERVE_ARM64_TRIPLE}-g++)
if(NOT _rs_cc OR NOT _rs_cxx)
  message(FATAL_ERROR "toolchain-aarch64: ${RADIXSERVE_ARM64_TRIPLE}-gcc/g++ not found: apt-get install crossbuild-essential-arm64")
endif()
set(CMAKE_C_COMPILER ${_rs_cc})
set(CMAKE_CXX_COMPILER ${_rs_cxx})
set(CMAKE_ASM_COMPILER ${_rs_cc})

# gcc gets --sysroot: it then looks for headers in SYSROOT/usr/include[/aarch64-linux-gnu] and for
# libraries in SYSROOT/{,usr/}lib/aarch64-linux-gnu, after its own C library and libstdc++.
set(CMAKE_SYSROOT "${_rs_sysroot}")
# find_package/find_library/find_path look only in the sysroot; find_program only on the host.
set(CMAKE_FIND_ROOT_PATH "${_rs_sysroot}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# The linker must find the libraries that the sysroot's libraries need in turn (libgfortran of
# OpenBLAS needs libm, glog needs gflags, ...), also those a program does not link itself.
set(_rs_rpath_link "")
foreach(dir "${_rs_libc_root}/lib" "${_rs_sysroot}/lib/${RADIXSERVE_ARM64_TRIPLE}"
            "${_rs_sysroot}/usr/lib/${RADIXSERVE_ARM64_TRIPLE}")
  string(APPEND _rs_rpath_link " -Wl,-rpath-link,${dir}")
endforeach()
set(CMAKE_EXE_LINKER_FLAGS_INIT "${_rs_rpath_link}")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "${_rs_rpath_link}")
set(CMAKE_MODULE_LINKER_FLAGS_INIT "${_rs_rpath_link}")

# ---- pkg-config: the host's pkg-config, reading only the sysroot's .pc files -------------------
set(ENV{PKG_CONFIG_PATH} "")
set(ENV{PKG_CONFIG_LIBDIR}
    "${_rs_sysroot}/usr/lib/${RADIXSERVE_ARM64_TRIPLE}/pkgconfig:${_rs_sysroot}/usr/lib/pkgconfig:${_rs_sysroot}/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_SYSROOT_DIR} "${_rs_sysroot}")

# ---- running arm64 programs: try_run, ctest ------------------------------------------------------
# qemu-aarch64-static with the cross toolchain's C library as its prefix (-L: the dynamic loader
# /lib/ld-linux-aarch64.so.1 and libc, libstdc++ come from there), and the sysroot's libraries on
# LD_LIBRARY_PATH. QEMU_LD_PREFIX lets arm64 programs that these start run too, where the host
# runs arm64 executables through binfmt_misc.
find_program(RADIXSERVE_QEMU_AARCH64 NAMES qemu-aarch64-static qemu-aarch64)
if(RADIXSERVE_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR "${RADIXSERVE_QEMU_AARCH64};-L;${_rs_libc_root}"
      "-E;LD_LIBRARY_PATH=${_rs_sysroot}/lib/${RADIXSERVE_ARM64_TRIPLE}:${_rs_sysroot}/usr/lib/${RADIXSERVE_ARM64_TRIPLE}"
      "-E;QEMU_LD_PREFIX=${_rs_libc_root}")
else()
  message(WARNING "toolchain-aarch64: qemu-aarch64-static not found (apt-get install qemu-user-static): "
                  "try_run and the tests cannot run arm64 programs")
endif()
