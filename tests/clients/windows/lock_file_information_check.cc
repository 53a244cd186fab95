// LMDB's lock-file information on Windows (store/lmdb/lock_file_information_windows.cc) under Wine,
// for tests/integration/wine_test.cc: with the volume hint of the file's own volume, the answer LMDB
// names its mutexes from (volume serial, file index) and every other field equal
// GetFileInformationByHandle's; with another hint, only the serial differs; with no hint the call is
// GetFileInformationByHandle's. Prints one line per check.
#include <windows.h>

#include <cstdio>
#include <cstring>

#include "store/lmdb/lock_file_information_windows.h"
#include "store/lmdb/lock_file_volume.h"

#undef GetFileInformationByHandle  // the real function, to compare with

namespace {

bool same_except_serial(const BY_HANDLE_FILE_INFORMATION& a, const BY_HANDLE_FILE_INFORMATION& b) {
  BY_HANDLE_FILE_INFORMATION x = a, y = b;
  x.dwVolumeSerialNumber = y.dwVolumeSerialNumber = 0;
  return std::memcmp(&x, &y, sizeof x) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const HANDLE file = CreateFileA(argv[1], GENERIC_READ | GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE, nullptr,
                                  CREATE_ALWAYS, FILE_ATTRIBUTE_NORMAL, nullptr);
  if (file == INVALID_HANDLE_VALUE) return 3;
  DWORD written = 0;
  if (!WriteFile(file, "lock", 4, &written, nullptr)) return 4;
  BY_HANDLE_FILE_INFORMATION real{}, hinted{}, other{}, unhinted{};
  if (!GetFileInformationByHandle(file, &real)) return 5;
  {
    const nvrtc_cache::store::lmdb::LockFileVolumeHint hint(real.dwVolumeSerialNumber);
    std::printf("hinted=%d\n", nvrtc_cache_lock_file_information(file, &hinted) ? 1 : 0);
    {
      const nvrtc_cache::store::lmdb::LockFileVolumeHint inner(real.dwVolumeSerialNumber ^ 0x5a5a5a5aU);
      std::printf("other=%d\n", nvrtc_cache_lock_file_information(file, &other) ? 1 : 0);
    }
  }
  std::printf("unhinted=%d\n", nvrtc_cache_lock_file_information(file, &unhinted) ? 1 : 0);
  std::printf("hinted_equal=%d\n", std::memcmp(&hinted, &real, sizeof real) == 0 ? 1 : 0);
  std::printf("other_serial=%d other_rest_equal=%d\n",
              other.dwVolumeSerialNumber == (real.dwVolumeSerialNumber ^ 0x5a5a5a5aU) ? 1 : 0,
              same_except_serial(other, real) ? 1 : 0);
  std::printf("unhinted_equal=%d\n", std::memcmp(&unhinted, &real, sizeof real) == 0 ? 1 : 0);
  std::printf("size=%lu links=%lu\n", static_cast<unsigned long>(hinted.nFileSizeLow),
              static_cast<unsigned long>(hinted.nNumberOfLinks));
  CloseHandle(file);
  DeleteFileA(argv[1]);
  return 0;
}
