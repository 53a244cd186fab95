# nvrtc_cache_lmdb_from_source(<directory>): the nvrtc_cache_lmdb library built from LMDB's source in
# <directory> (mdb.c, midl.c, lmdb.h: Debian's source package under .deps/lmdb), for the Linux build
# (CMakeLists.txt) and the Windows cross build (windows/CMakeLists.txt) alike. Third-party code: its
# warnings are not ours.
function(nvrtc_cache_lmdb_from_source directory)
  add_library(nvrtc_cache_lmdb STATIC ${directory}/mdb.c ${directory}/midl.c)
  target_include_directories(nvrtc_cache_lmdb PUBLIC ${directory})
  target_compile_options(nvrtc_cache_lmdb PRIVATE -w -O2)
endfunction()
