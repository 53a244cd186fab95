# Cross build for aarch64 Linux with Debian's g++-aarch64-linux-gnu and arm64 multiarch -dev packages
# (liblmdb-dev:arm64, libxxhash-dev:arm64, libb2-dev:arm64, libssl-dev:arm64, libhttp-parser-dev:arm64, libgtest-dev:arm64); scripts/aarch64.sh
# drives it. The target's NVRTC: -DNVRTC_CACHE_TARGET_NVRTC_DIR=<directory with libnvrtc.so.13>.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_ASM_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
# Multiarch: arm64 libraries live in /usr/lib/aarch64-linux-gnu beside the host's, headers in /usr/include.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
# Tests run under qemu-user (gtest_discover_tests runs the binaries at build time).
set(CMAKE_CROSSCOMPILING_EMULATOR /usr/bin/qemu-aarch64-static;-L;/usr/aarch64-linux-gnu)
