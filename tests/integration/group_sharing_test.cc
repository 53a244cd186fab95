// A cache shared on purpose by a group (NVRTC_CACHE_SHARED=1): two real users of one group, each with
// the usual umask 022, in a setgid team directory; each is served what the other stored, byte for byte
// NVRTC's. Needs root to create the users (CI runs as root); fails under CI when it cannot.
#include <grp.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "tests/support/harness.h"

namespace nvrtc_cache {
namespace {

using namespace testing;

constexpr const char* kGroup = "nvrtc-cache-team";
constexpr const char* kUsers[] = {"nvrtc-cache-ann", "nvrtc-cache-bob"};

// The uid of `user` (created in kGroup when missing), or -1.
int ensure_user(const char* user) {
  if (const passwd* pw = getpwnam(user)) return static_cast<int>(pw->pw_uid);
  const std::string command =
      std::string("useradd -M -N -g ") + kGroup + " -s /usr/sbin/nologin " + user + " >/dev/null 2>&1";
  if (std::system(command.c_str()) != 0) return -1;
  const passwd* pw = getpwnam(user);
  return pw ? static_cast<int>(pw->pw_uid) : -1;
}

struct Member {
  int uid = -1;
  int gid = -1;
  // Runs the probe's scenarios as this member, with the shim and the shared cache.
  ProcessResult probe_as(const std::vector<std::string>& scenarios, const std::string& cache) const {
    std::vector<std::string> argv = {"/usr/bin/setpriv", "--reuid=" + std::to_string(uid),
                                     "--regid=" + std::to_string(gid), "--init-groups", NVRTC_PROBE_PATH};
    argv.insert(argv.end(), scenarios.begin(), scenarios.end());
    EnvVars env = shim_env(cache);
    env["NVRTC_CACHE_SHARED"] = "1";
    env["PROBE_INCLUDE_DIR"] = kIncludeDir;
    env["HOME"] = "/nonexistent";
    return run_process(argv, env);
  }
};

// Two members and their team's directory, as an administrator sets one up; skips (fails under CI)
// without root and setpriv.
struct Team {
  Member ann, bob;
  int gid = -1;
  TempDir root;
  std::string cache;
};

bool make_team(Team* team) {
  if (std::system((std::string("groupadd -f ") + kGroup).c_str()) != 0) return false;
  const group* group = getgrnam(kGroup);
  if (group == nullptr) return false;
  team->gid = static_cast<int>(group->gr_gid);
  team->ann = {ensure_user(kUsers[0]), team->gid};
  team->bob = {ensure_user(kUsers[1]), team->gid};
  if (team->ann.uid < 0 || team->bob.uid < 0) return false;
  if (::chmod(team->root.path().c_str(), 0755) != 0) return false;
  const std::string team_dir = team->root.path() + "/team";
  if (::mkdir(team_dir.c_str(), 0770) != 0 || ::chown(team_dir.c_str(), 0, group->gr_gid) != 0 ||
      ::chmod(team_dir.c_str(), 02770) != 0) {
    return false;
  }
  team->cache = team_dir + "/cache";
  return true;
}

#define NVRTC_CACHE_REQUIRE_TEAM()                                                   \
  do {                                                                               \
    if (::geteuid() != 0 || ::access("/usr/bin/setpriv", X_OK) != 0) {               \
      if (pypi_required()) FAIL() << "needs root and setpriv to run two real users"; \
      GTEST_SKIP() << "needs root and setpriv to run two real users";                \
    }                                                                                \
  } while (false)

TEST(GroupSharing, TwoMembersOfTheGroupEachHitWhatTheOtherStored) {
  NVRTC_CACHE_REQUIRE_TEAM();
  Team team_setup;
  ASSERT_TRUE(make_team(&team_setup));
  const Member& ann = team_setup.ann;
  const Member& bob = team_setup.bob;
  const std::string& cache = team_setup.cache;
  const gid_t team_gid = static_cast<gid_t>(team_setup.gid);
  const ::mode_t old_umask = ::umask(022);  // every member's usual umask, inherited by the runs

  const std::vector<std::string> first = {"trivial", "template"}, second = {"cubin", "headers"};
  const ProcessResult direct_first = probe(first, {}), direct_second = probe(second, {});
  ASSERT_EQ(direct_first.exit_code, 0) << direct_first.err;

  const ProcessResult ann_stores = ann.probe_as(first, cache);
  EXPECT_EQ(ann_stores.exit_code, 0) << ann_stores.err;
  EXPECT_EQ(ann_stores.out, direct_first.out);
  const store::Counters after_ann = counters_of(cache);
  ASSERT_GT(get(after_ann, "stores"), 0) << ann_stores.err;

  const ProcessResult bob_hits = bob.probe_as(first, cache);
  EXPECT_EQ(bob_hits.exit_code, 0) << bob_hits.err;
  EXPECT_EQ(bob_hits.out, direct_first.out);
  EXPECT_EQ(bob_hits.err, "") << "the second member was refused something";
  const store::Counters after_bob = counters_of(cache);
  EXPECT_EQ(get(after_bob, "hits") - get(after_ann, "hits"), 2) << "bob was not served what ann stored";
  EXPECT_EQ(get(after_bob, "misses"), get(after_ann, "misses"));

  const ProcessResult bob_stores = bob.probe_as(second, cache);
  EXPECT_EQ(bob_stores.out, direct_second.out) << bob_stores.err;
  const store::Counters after_bob_stores = counters_of(cache);
  EXPECT_GT(get(after_bob_stores, "stores"), get(after_bob, "stores")) << bob_stores.err;
  const ProcessResult ann_hits = ann.probe_as(second, cache);
  EXPECT_EQ(ann_hits.out, direct_second.out) << ann_hits.err;
  EXPECT_EQ(ann_hits.err, "");
  const store::Counters end = counters_of(cache);
  EXPECT_EQ(get(end, "hits") - get(after_bob_stores, "hits"), 2) << "ann was not served what bob stored";
  ::umask(old_umask);

  // What the members created is the group's: setgid directories 02770, files 0660.
  for (const std::string& dir : {cache, cache + "/store", cache + "/claims"}) {
    struct stat st {};
    ASSERT_EQ(::stat(dir.c_str(), &st), 0) << dir;
    EXPECT_EQ(st.st_mode & 07777, 02770u) << dir;
    EXPECT_EQ(st.st_gid, team_gid) << dir;
  }
  for (const std::string& file : {cache + "/store/data.mdb", cache + "/store/lock.mdb"}) {
    struct stat st {};
    ASSERT_EQ(::stat(file.c_str(), &st), 0) << file;
    EXPECT_EQ(st.st_mode & 07777, 0660u) << file;
  }
}

// Any member can truncate the shared counters file (it is the group's, 0660): while a host of
// another member compiles in a loop, the host goes on, exact, and says once that counting stopped.
// Any member of the group can write the store's files (mode 0660): one truncating the counters file,
// LMDB's lock file or data.mdb under another member's running host must not kill that host.
struct TruncatedFile {
  const char* name;
  const char* logged;  // what the host's log then says
};
class AMemberTruncating : public ::testing::TestWithParam<TruncatedFile> {};

TEST_P(AMemberTruncating, KillsNoOtherMembersHost) {
  NVRTC_CACHE_REQUIRE_TEAM();
  Team team;
  ASSERT_TRUE(make_team(&team));
  std::vector<int> rounds;
  for (int n = 1; n <= 12; ++n) rounds.push_back(n);
  const ProcessResult reference = PacedProbe::reference(rounds);
  ASSERT_EQ(reference.exit_code, 0) << reference.err;
  EnvVars env = shim_env(team.cache);
  env["NVRTC_CACHE_SHARED"] = "1";
  PacedProbe host(rounds, env);
  for (int n = 1; n <= 3; ++n) host.round(n);
  const std::string file = team.cache + "/store/" + GetParam().name;
  struct stat st {};
  ASSERT_EQ(::stat(file.c_str(), &st), 0) << "the host has no " << GetParam().name;
  ASSERT_GT(st.st_size, 0);
  const ProcessResult truncated =
      run_process({"/usr/bin/setpriv", "--reuid=" + std::to_string(team.bob.uid), "--regid=" + std::to_string(team.gid),
                   "--init-groups", "/usr/bin/truncate", "-s", "0", file});
  ASSERT_EQ(truncated.exit_code, 0) << "the other member could not truncate it: " << truncated.err;
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  ASSERT_EQ(st.st_size, 0);
  const ProcessResult run = host.finish();
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(run.out == reference.out) << "differs from NVRTC\n" << run.err;
  EXPECT_NE(run.err.find(GetParam().logged), std::string::npos) << "no fault was provoked\n" << run.err;
}

INSTANTIATE_TEST_SUITE_P(GroupSharing, AMemberTruncating,
                         ::testing::Values(TruncatedFile{"counters", "the counters file could not be written"},
                                           TruncatedFile{"lock.mdb", "were truncated under this process"},
                                           TruncatedFile{"data.mdb", "were truncated under this process"}),
                         [](const ::testing::TestParamInfo<TruncatedFile>& file) {
                           const std::string name = file.param.name;
                           return name == "counters" ? std::string("TheCountersFile")
                                                     : name == "lock.mdb" ? std::string("LmdbsLockFile")
                                                                          : std::string("LmdbsDataFile");
                         });

}  // namespace
}  // namespace nvrtc_cache
