# shellcheck shell=bash
# ccache for build trees of one checkout that compile the same objects (CI's build/ and the wheel's
# build-wheel/, scripts/package_test.sh). Source it from the checkout's root; it exports what CMake
# and ccache read:
#
#   CMAKE_C_COMPILER_LAUNCHER, CMAKE_CXX_COMPILER_LAUNCHER  ccache, for every tree configured afterwards
#   CCACHE_BASEDIR      the checkout: paths under it are hashed relative to the compile's directory
#   CCACHE_NOHASHDIR    the compile's directory is not hashed (it is only in the debug information,
#                       which the wheel strips)
#   CCACHE_IGNOREOPTIONS  -Werror, which changes no object, is not hashed (a compile with warnings
#                       stored without it would then pass a -Werror tree: CI compiles build/, with
#                       -Werror, first, and the wheel's tree only reads those objects)
#
# So an object compiled in build/ is a hit in a sibling tree at the same depth (build-wheel/) whose
# compile command is otherwise the same: same flags, defines, include directories and preprocessed
# source. Anything that differs is a miss and compiles. Does nothing without ccache on PATH.
if command -v ccache >/dev/null; then
  export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache
  export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1 CCACHE_IGNOREOPTIONS=-Werror
fi
