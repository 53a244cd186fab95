#include "store/remote/secret.h"

#include <blake2.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "platform/errno_guard.h"
#include "platform/own_file.h"

namespace nvrtc_cache::store::remote {

Secret secret_from_bytes(std::string_view bytes) {
  Secret secret;
  if (bytes.size() <= secret.key.size()) {
    std::memcpy(secret.key.data(), bytes.data(), bytes.size());
    secret.size = bytes.size();
  } else {
    blake2b(secret.key.data(), bytes.data(), nullptr, secret.key.size(), bytes.size(), 0);
    secret.size = secret.key.size();
  }
  return secret;
}

// A secret worth its name: at least kMinimumSecretBytes, with some variety (not "aaaa...").
bool looks_random(std::string_view bytes) {
  if (bytes.size() < kMinimumSecretBytes) return false;
  bool seen[256] = {};
  std::size_t distinct = 0;
  for (unsigned char c : bytes) {
    if (!seen[c]) ++distinct;
    seen[c] = true;
  }
  return distinct >= kMinimumSecretBytes / 2;
}

std::optional<Secret> read_secret_file(const std::string& path, std::string* problem, std::string* warning) {
  const platform::ErrnoGuard errno_guard;
  auto fail = [&](const std::string& why) -> std::optional<Secret> {
    if (problem) *problem = "NVRTC_CACHE_REMOTE_SECRET_FILE " + path + ": " + why + "; shared tiers are not used";
    return std::nullopt;
  };
  // Non-blocking: a FIFO named here never stalls the host; it is refused as not a regular file.
  std::string why;
  unsigned mode = 0;
  std::optional<std::string> read = platform::read_regular_file(path, 1 << 20, &why, &mode);
  if (!read) return fail(why.empty() ? std::string("does not exist") : why);
  std::string bytes = std::move(*read);
  if (bytes.ends_with("\r\n"))
    bytes.resize(bytes.size() - 2);
  else if (bytes.ends_with('\n'))
    bytes.pop_back();
  if (bytes.empty()) return fail("empty");
  if (!looks_random(bytes)) {
    std::fill(bytes.begin(), bytes.end(), '\0');
    return fail("holds fewer than " + std::to_string(kMinimumSecretBytes) +
                " bytes or too few distinct ones to be a random secret (a short secret's MAC key can be found by "
                "trying; make one with `head -c 32 /dev/urandom | base64 > FILE`)");
  }
  if (warning && (mode & 0044) != 0  /* group- or other-readable */) {
    *warning = "NVRTC_CACHE_REMOTE_SECRET_FILE " + path +
               " is readable by group or others; anyone who can read it can sign values every node trusts";
  }
  Secret secret = secret_from_bytes(bytes);
  std::fill(bytes.begin(), bytes.end(), '\0');
  return secret;
}

}  // namespace nvrtc_cache::store::remote
