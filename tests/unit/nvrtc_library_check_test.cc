// Which NVRTC `nvrtc-cache replay` may load (tools/doctor/nvrtc_library_check.h), judged without loading
// it: the toolkit's NVRTC by its path or a symlink; another build-id, a library that is not an NVRTC,
// a FIFO, a relative path refused; a stand-in library (tests/clients/hostile_library.cc) accepted as the
// caller's own file and refused once anyone else can change it: writable by others, by a group that
// is not the caller's alone, through an access control list, in a directory others can write, or
// owned by another user (the last ones as root only).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "util/elf_identity.h"
#include "tools/doctor/nvrtc_library_check.h"
#include "util/binary_io.h"

namespace nvrtc_cache {
namespace {

namespace fs = std::filesystem;
using tools::check_nvrtc_file;

constexpr uid_t kNobody = 65534;

class Directory {
 public:
  Directory() {
    std::string pattern = (std::getenv("TMPDIR") ? std::string(std::getenv("TMPDIR")) : "/tmp") + "/nvrtc-check-XXXXXX";
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~Directory() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

keying::LibraryIdentity identity_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  std::string why;
  const std::optional<util::ElfIdentity> id = util::read_elf_identity(bytes.str(), why);
  EXPECT_TRUE(id) << path << ": " << why;
  return {13, 0, id ? id->build_id : std::string()};
}

std::string resolved(const std::string& path) {
  char buffer[PATH_MAX];
  return ::realpath(path.c_str(), buffer) != nullptr ? buffer : "";
}

TEST(NvrtcLibraryCheck, TheToolkitNvrtcAndASymlinkToItAreAccepted) {
  const keying::LibraryIdentity id = identity_of(NVRTC_CACHE_REAL_NVRTC_PATH);
  tools::NvrtcFileCheck check = check_nvrtc_file(NVRTC_CACHE_REAL_NVRTC_PATH, id);
  EXPECT_EQ(check.refused, "");
  EXPECT_EQ(check.resolved, resolved(NVRTC_CACHE_REAL_NVRTC_PATH));
  Directory dir;
  const std::string link = dir.path() + "/libnvrtc.so.13";
  ASSERT_EQ(::symlink(NVRTC_CACHE_REAL_NVRTC_PATH, link.c_str()), 0);
  check = check_nvrtc_file(link, id);
  EXPECT_EQ(check.refused, "");
  EXPECT_EQ(check.resolved, resolved(NVRTC_CACHE_REAL_NVRTC_PATH));
}

TEST(NvrtcLibraryCheck, AnotherBuildIdIsRefusedNamingBoth) {
  keying::LibraryIdentity id = identity_of(NVRTC_CACHE_REAL_NVRTC_PATH);
  id.build_id[0] = static_cast<char>(id.build_id[0] ^ 1);
  const tools::NvrtcFileCheck check = check_nvrtc_file(NVRTC_CACHE_REAL_NVRTC_PATH, id);
  EXPECT_TRUE(check.resolved.empty());
  EXPECT_NE(check.refused.find("build-id"), std::string::npos) << check.refused;
  EXPECT_NE(check.refused.find("refusing"), std::string::npos) << check.refused;
  id.build_id.clear();
  EXPECT_NE(check_nvrtc_file(NVRTC_CACHE_REAL_NVRTC_PATH, id).refused.find("no build-id"), std::string::npos);
}

TEST(NvrtcLibraryCheck, WhatIsNotAnNvrtcLibraryIsRefused) {
  const keying::LibraryIdentity id = identity_of(NVRTC_CACHE_REAL_NVRTC_PATH);
  Directory dir;
  const std::string fifo = dir.path() + "/fifo.so";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string text = dir.path() + "/text.so";
  std::ofstream(text) << "not a library\n";
  struct Case {
    std::string path;
    std::string says;
  };
  const Case cases[] = {
      {"libnvrtc.so.13", "not an absolute path"},
      {dir.path() + "/missing.so", "cannot resolve"},
      {fifo, "not a regular file"},  // and the open does not wait for a writer
      {text, "not a shared library"},
      {std::string(CUDA_NVRTC_LIBRARY_DIR) + "/libnvrtc-builtins.so", "not an NVRTC library"},
  };
  for (const Case& c : cases) {
    const tools::NvrtcFileCheck check = check_nvrtc_file(c.path, id);
    EXPECT_NE(check.refused.find(c.says), std::string::npos) << c.path << ": " << check.refused;
    EXPECT_NE(check.refused.find("refusing"), std::string::npos) << check.refused;
  }
}

// The stand-in library, copied into a directory of its own, under the build-id it carries.
struct Planted {
  Directory root;
  std::string dir = root.path() + "/lib";
  std::string library = dir + "/libnvrtc.so.13";
  keying::LibraryIdentity id;
  Planted() {
    fs::create_directory(dir);
    ::chmod(dir.c_str(), 0755);
    fs::copy_file(HOSTILE_NVRTC_PATH, library);
    ::chmod(library.c_str(), 0755);
    id = identity_of(library);
  }
  std::string refused() const { return check_nvrtc_file(library, id).refused; }
};

TEST(NvrtcLibraryCheck, ALibraryAnyoneElseCanChangeIsRefused) {
  Planted p;
  EXPECT_EQ(p.refused(), "") << "the caller's own file, writable by no one else";

  ::chmod(p.library.c_str(), 0757);
  EXPECT_NE(p.refused().find(p.library + " is writable by every user"), std::string::npos) << p.refused();
  ::chmod(p.library.c_str(), 0755);

  ::chmod(p.dir.c_str(), 0777);
  EXPECT_NE(p.refused().find(p.dir + " is writable by every user"), std::string::npos) << p.refused();
  ::chmod(p.dir.c_str(), 01777);  // sticky: no one else can replace the caller's entry in it
  EXPECT_EQ(p.refused(), "");
  ::chmod(p.dir.c_str(), 0755);

  ::chmod(p.root.path().c_str(), 0777);  // any directory above counts, not only the one holding it
  EXPECT_NE(p.refused().find(p.root.path() + " is writable by every user"), std::string::npos) << p.refused();
  ::chmod(p.root.path().c_str(), 0700);
  EXPECT_EQ(p.refused(), "");
}

TEST(NvrtcLibraryCheck, AnotherUsersLibraryOrGroupIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give files to another user";
  Planted p;
  ASSERT_EQ(::chown(p.library.c_str(), kNobody, static_cast<gid_t>(-1)), 0);
  EXPECT_NE(p.refused().find("is owned by"), std::string::npos) << p.refused();
  EXPECT_NE(p.refused().find("neither you nor root"), std::string::npos) << p.refused();
  ASSERT_EQ(::chown(p.library.c_str(), 0, static_cast<gid_t>(-1)), 0);

  ASSERT_EQ(::chown(p.dir.c_str(), kNobody, static_cast<gid_t>(-1)), 0);
  EXPECT_NE(p.refused().find(p.dir + " is owned by"), std::string::npos) << p.refused();
  ASSERT_EQ(::chown(p.dir.c_str(), 0, static_cast<gid_t>(-1)), 0);

  // Group-writable: fine for the caller's own group (root's lists no one), not for another.
  const group* root_group = getgrgid(0);
  if (root_group != nullptr && root_group->gr_mem[0] == nullptr) {
    ::chmod(p.library.c_str(), 0775);
    EXPECT_EQ(p.refused(), "");
  }
  ASSERT_EQ(::chown(p.library.c_str(), 0, kNobody), 0);
  ::chmod(p.library.c_str(), 0775);
  EXPECT_NE(p.refused().find("is writable by group"), std::string::npos) << p.refused();
  ::chmod(p.library.c_str(), 0755);
  EXPECT_EQ(p.refused(), "");
}

TEST(NvrtcLibraryCheck, AnAccessControlListLettingAnotherUserWriteIsRefused) {
  Planted p;
  // An access ACL granting user 65534 rw-: user::rwx user:65534:rw- group::r-x mask::rwx other::r-x.
  struct Entry {
    std::uint16_t tag, perm;
    std::uint32_t id;
  };
  const Entry entries[] = {
      {0x01, 7, 0xffffffff}, {0x02, 6, kNobody}, {0x04, 5, 0xffffffff}, {0x10, 7, 0xffffffff}, {0x20, 5, 0xffffffff}};
  std::string acl(4, '\0');
  util::store_le(acl.data(), 2, 4);  // POSIX_ACL_XATTR_VERSION
  for (const Entry& e : entries) {
    char bytes[8];
    util::store_le(bytes, e.tag, 2);
    util::store_le(bytes + 2, e.perm, 2);
    util::store_le(bytes + 4, e.id, 4);
    acl.append(bytes, 8);
  }
  if (::setxattr(p.library.c_str(), "system.posix_acl_access", acl.data(), acl.size(), 0) != 0) {
    GTEST_SKIP() << "cannot set an ACL here: " << std::strerror(errno);
  }
  EXPECT_NE(p.refused().find("access control list"), std::string::npos) << p.refused();
}

}  // namespace
}  // namespace nvrtc_cache
