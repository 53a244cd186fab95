// unseal_value on hostile bytes (a shared tier's value): the first input byte picks whether a
// secret is configured (bit 7) and how many of the following bytes are the key (low 7 bits); the
// rest is the stored value. Whatever unseals must seal back to the same bytes, and any payload must
// round-trip through a fresh seal, signed or not.
#include "fuzz/fuzz_support.h"
#include "store/remote/sealed_value.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace nvrtc_cache::store::remote;
  if (size == 0) return 0;
  static const Secret kSecret = secret_from_bytes("fuzzing secret");
  const Secret* secret = (data[0] & 0x80) != 0 ? &kSecret : nullptr;
  const std::string_view rest = nvrtc_cache::fuzz::as_view(data + 1, size - 1);
  const std::string_view key = rest.substr(0, std::min<std::size_t>(data[0] & 0x7f, rest.size()));
  const std::string_view stored = rest.substr(key.size());
  const Unsealed unsealed = unseal_value(key, stored, secret);
  if (unsealed.code == UnsealCode::kOk) {
    NVRTC_CACHE_FUZZ_CHECK(unsealed.payload.data() >= stored.data() &&
                           unsealed.payload.data() + unsealed.payload.size() <= stored.data() + stored.size());
    const bool signed_value = stored.size() == sealed_size(key.size(), unsealed.payload.size(), true);
    if (secret != nullptr || !signed_value) {
      NVRTC_CACHE_FUZZ_CHECK(seal_value(key, unsealed.payload, secret) == stored);
    }
  }
  const std::string sealed = seal_value(key, stored, secret);
  const Unsealed again = unseal_value(key, sealed, secret);
  NVRTC_CACHE_FUZZ_CHECK(again.code == UnsealCode::kOk && again.payload == stored);
  if (secret == nullptr) {
    NVRTC_CACHE_FUZZ_CHECK(unseal_value(key, sealed, &kSecret).code == UnsealCode::kMacRejected);
  }
  NVRTC_CACHE_FUZZ_CHECK(unseal_value(std::string(key) + "x", sealed, secret).code == UnsealCode::kWrongKey);
  return 0;
}
