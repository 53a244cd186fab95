# Install layout and packages. The CLI, the shim and the proxy are installed by the rules beside their
# targets (shim/CMakeLists.txt, tools/CMakeLists.txt):
#   bin/nvrtc-cache                        the CLI; finds the two below relative to itself (tools/run_command.cc)
#   lib/libnvrtc-cache.so                  the shim (preload mode)
#   lib/nvrtc-cache/proxy/libnvrtc.so.13   the proxy (nvrtc-cache run --proxy), and beside it its
#   lib/nvrtc-cache/proxy/libnvrtc.so.12, libnvJitLink.so.13, libnvvm.so.4   stand-ins for NVRTC 12,
#                                          nvJitLink and libNVVM
#   lib/libnvrtc-cache-api.so.1            the C API (api/CMakeLists.txt), which nvrtc_cache.ProgramCache loads
#   include/nvrtc_cache.h                  its header
# This file adds what the packages carry besides them, and the Debian package (cpack -G DEB).
# The Python wheel (pyproject.toml, scikit-build-core) carries the same tree as its data, which pip
# installs under the environment's prefix; scripts/package_test.sh tests both packages.

# LMDB is built in (CMakeLists.txt, from Debian's source package): its licence travels with the
# binaries. A build without its source loads the distribution's liblmdb.so.0 and the Debian package
# then depends on liblmdb0 (a wheel would need it on the host).
if(NVRTC_CACHE_LMDB_BUILT_IN)
  install(FILES ${NVRTC_CACHE_LMDB_SOURCE_DIR}/LICENSE DESTINATION lib/nvrtc-cache RENAME LMDB-LICENSE)
else()
  set(CPACK_DEBIAN_PACKAGE_DEPENDS liblmdb0)
  message(WARNING "packages built without LMDB's source need liblmdb0 on the host")
endif()

# Documentation (not in the wheel: its metadata carries the README).
if(NOT SKBUILD)
  install(FILES ${CMAKE_SOURCE_DIR}/README.md DESTINATION share/doc/nvrtc-cache)
  # The pages the README links (docs/...), beside it.
  install(DIRECTORY ${CMAKE_SOURCE_DIR}/docs/ DESTINATION share/doc/nvrtc-cache/docs
          FILES_MATCHING PATTERN "*.md" PATTERN "*.png")
  install(FILES ${CMAKE_SOURCE_DIR}/LICENSE DESTINATION share/doc/nvrtc-cache RENAME copyright)
  # The man page and bash completion are installed beside the CLI's rule (CMakeLists.txt).
endif()

# Debian package: cpack -G DEB in a configured build directory -> nvrtc-cache_<version>_<arch>.deb,
# installing under /usr. Depends: what dpkg-shlibdeps derives from the binaries (libc6, libstdc++6,
# libgcc-s1). LMDB, BLAKE2 and xxHash are linked statically. NVRTC itself comes from the CUDA toolkit (no Debian package).
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME nvrtc-cache)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "drop-in cache for NVIDIA's runtime compiler (NVRTC)")
set(CPACK_PACKAGE_DESCRIPTION "A shim preloaded into unmodified processes that serves repeated NVRTC compiles from an embedded LMDB store, byte-identical to NVRTC's own results. Needs the CUDA toolkit's NVRTC at run time.")
set(CPACK_PACKAGE_CONTACT "nvrtc-cache maintainers <nvrtc-cache@localhost>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
include(CPack)
