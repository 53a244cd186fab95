# Install layout and packages. The CLI, the shim and the proxy are installed by the rules beside their
# targets (CMakeLists.txt):
#   bin/nvrtc-cache                        the CLI; finds the two below relative to itself (tools/run_command.cc)
#   lib/libnvrtc-cache.so                  the shim (preload mode)
#   lib/nvrtc-cache/proxy/libnvrtc.so.13   the proxy (nvrtc-cache run --proxy)
# This file adds what the packages carry besides them, and the Debian package (cpack -G DEB).
# The Python wheel (pyproject.toml, scikit-build-core) installs the same tree under the nvrtc_cache
# package and sets NVRTC_CACHE_BUNDLE_LMDB; scripts/package_test.sh tests both packages.

# The wheel carries LMDB: lib/nvrtc-cache/liblmdb.so.0 (its licence beside it), which
# store/lmdb/library.cc loads first in such a build. The Debian package depends on liblmdb0 instead.
if(NVRTC_CACHE_BUNDLE_LMDB)
  file(REAL_PATH "${LMDB_LIBRARY_DIR}/liblmdb.so.0" NVRTC_CACHE_LMDB_FILE)
  install(FILES "${NVRTC_CACHE_LMDB_FILE}" DESTINATION lib/nvrtc-cache RENAME liblmdb.so.0)
  if(EXISTS /usr/share/doc/liblmdb0/copyright)
    install(FILES /usr/share/doc/liblmdb0/copyright DESTINATION lib/nvrtc-cache RENAME liblmdb.copyright)
  endif()
endif()

# Documentation (not in the wheel: its metadata carries the README).
if(NOT SKBUILD)
  install(FILES ${CMAKE_SOURCE_DIR}/README.md DESTINATION share/doc/nvrtc-cache)
  # Man page (share/man/man1/nvrtc-cache.1) and bash completion
  # (share/bash-completion/completions/nvrtc-cache) go here.
endif()

# Debian package: cpack -G DEB in a configured build directory -> nvrtc-cache_<version>_<arch>.deb,
# installing under /usr. Depends: what dpkg-shlibdeps derives from the binaries (libc6, libstdc++6,
# libgcc-s1), plus liblmdb0, which the store dlopens (invisible to dpkg-shlibdeps). BLAKE2 and
# xxHash are linked statically. NVRTC itself comes from the CUDA toolkit (no Debian package).
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
set(CPACK_DEBIAN_PACKAGE_DEPENDS liblmdb0)
include(CPack)
