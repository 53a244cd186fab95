// fuzz_seed_corpus DIR: writes a small seed corpus for every fuzz target into DIR/<target>/, from
// real encodings: entries shaped as capture_outputs() records them, a manifest and dependency set
// recorded from a real file read and probe, envelopes, access records, and the meta page of a real
// LMDB store, ELF files (the start of this executable, and a minimal shared object). Checksummed
// formats are written both whole and without their checksum (the targets append a fresh one).
#include <elf.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "core/compile_entry.h"
#include "core/entry_compression.h"
#include "api/api_entry.h"
#include "core/handle_entry.h"
#include "core/compile_record.h"
#include "direct/manifest.h"
#include <zstd.h>

#include "store/archive/archive_writer.h"
#include "store/envelope.h"
#include "store/lmdb/page_layout.h"
#include "store/lmdb/records.h"
#include "store/lmdb/lmdb_store.h"
#include "store/remote/sealed_value.h"
#include "util/binary_io.h"
#include "tests/support/pe_image.h"

namespace fs = std::filesystem;
using namespace nvrtc_cache;

namespace {

struct Corpus {
  fs::path root;
  void add(const std::string& target, const std::string& name, const std::string& bytes) const {
    fs::create_directories(root / target);
    std::ofstream(root / target / name, std::ios::binary | std::ios::trunc) << bytes;
  }
  // A checksummed encoding: whole, and without its trailing checksum.
  void add_framed(const std::string& target, const std::string& name, const std::string& bytes) const {
    add(target, name, bytes);
    add(target, name + "-body", bytes.substr(0, bytes.size() - 8));
  }
};

std::vector<core::CompileEntry> entries() {
  core::CompileEntry ok;
  ok.compile_rc = NVRTC_SUCCESS;
  ok.log = {NVRTC_SUCCESS, true, 1, NVRTC_SUCCESS, std::string(1, '\0')};
  const std::string ptx = "//\n.version 9.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n\tret;\n}\n";
  ok.ptx = {NVRTC_SUCCESS, true, ptx.size() + 1, NVRTC_SUCCESS, ptx + '\0'};
  ok.cubin = {NVRTC_SUCCESS, true, 0, NVRTC_SUCCESS, ""};
  ok.ltoir = {NVRTC_SUCCESS, true, 0, NVRTC_SUCCESS, ""};
  ok.optixir = {NVRTC_SUCCESS, true, 0, NVRTC_SUCCESS, ""};
  ok.lowered_names = {{"scale<float, 2>", NVRTC_SUCCESS, true, false, "_Z5scaleIfLi2EEvPT_"},
                      {"never_added", NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID, false, false, ""}};
  ok.unknown_name = {"", NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID, false, false, ""};
  ok.pch_create_status = NVRTC_ERROR_NO_PCH_CREATE_ATTEMPTED;
  ok.pch_heap_required_rc = NVRTC_SUCCESS;
  ok.pch_heap_required_written = true;
  ok.compile_nanos = 25'000'000;

  core::CompileEntry failed = ok;
  failed.compile_rc = NVRTC_ERROR_COMPILATION;
  const std::string log = "error.cu(1): error: identifier \"undefined_function\" is undefined\n";
  failed.log = {NVRTC_SUCCESS, true, log.size() + 1, NVRTC_SUCCESS, log + '\0'};
  failed.ptx = {NVRTC_SUCCESS, true, 0, NVRTC_ERROR_INVALID_PROGRAM, ""};
  failed.lowered_names = {{"k", NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION, true, true, ""}};
  // NVRTC 13.5 with Tile IR, and 12.x with its NVVM getter (entry format 3).
  core::CompileEntry tile = ok;
  tile.tileir = {NVRTC_SUCCESS, true, 8, NVRTC_SUCCESS, std::string("\x7fTileIR\0", 8)};
  core::CompileEntry nvvm = ok;
  nvvm.nvvm = {NVRTC_SUCCESS, true, 0, NVRTC_SUCCESS, ""};
  nvvm.description = core::EntryDescription{"lto.cu", {"-arch=sm_80", "-dlto"}, {}, 120, std::nullopt};
  return {ok, failed, core::CompileEntry{}, tile, nvvm};
}

std::string temp_directory() {
  std::string pattern = (fs::temp_directory_path() / "nvrtc-cache-seeds-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) std::exit(1);
  return pattern;
}

direct::DependencySet recorded_set(const std::string& dir) {
  const std::string header = dir + "/dep.h";
  std::ofstream(header) << "#define DEP 1\n";
  const std::string missing = dir + "/missing.h";
  setenv("NVRTC_CACHE_SEED_VAR", "1", 1);
  const std::vector<direct::Observation> observed = {
      // views: the strings above outlive them
      {direct::ObservationKind::kStat, false, false, missing, {}},
      {direct::ObservationKind::kOpen, true, false, header, {}},
      {direct::ObservationKind::kRealpath, true, false, dir, dir},
      {direct::ObservationKind::kGetenv, true, false, "NVRTC_CACHE_SEED_VAR", "1"}};
  auto recorded = direct::record_dependencies(observed, dir, std::numeric_limits<std::int64_t>::max(), {});
  return recorded.set.value_or(direct::DependencySet{});
}

// The smallest ELF64 shared object the reader reads whole: header, PT_LOAD / PT_NOTE / PT_DYNAMIC,
// a GNU build-id note, DT_STRTAB / DT_STRSZ / DT_SONAME and the string "libnvrtc.so.13".
std::string minimal_shared_object() {
  constexpr std::size_t kPhoff = 64, kNote = kPhoff + 3 * 56, kDynamic = kNote + 24, kStrings = kDynamic + 4 * 16;
  std::string f(kStrings + 16, '\0');
  const auto put = [&f](std::size_t at, std::uint64_t v, std::size_t n) { util::store_le(f.data() + at, v, n); };
  std::memcpy(f.data(), ELFMAG, SELFMAG);
  f[EI_CLASS] = ELFCLASS64;
  f[EI_DATA] = ELFDATA2LSB;
  f[EI_VERSION] = EV_CURRENT;
  put(16, ET_DYN, 2);
  put(18, EM_X86_64, 2);
  put(32, kPhoff, 8);
  put(54, 56, 2);
  put(56, 3, 2);
  const std::uint64_t segments[3][3] = {{PT_LOAD, 0, f.size()}, {PT_NOTE, kNote, 24}, {PT_DYNAMIC, kDynamic, 64}};
  for (std::size_t i = 0; i < 3; ++i) {
    put(kPhoff + i * 56, segments[i][0], 4);
    put(kPhoff + i * 56 + 8, segments[i][1], 8);   // offset
    put(kPhoff + i * 56 + 16, segments[i][1], 8);  // vaddr
    put(kPhoff + i * 56 + 32, segments[i][2], 8);  // filesz
    put(kPhoff + i * 56 + 40, segments[i][2], 8);  // memsz
    put(kPhoff + i * 56 + 48, 4, 8);
  }
  put(kNote, 4, 4);
  put(kNote + 4, 8, 4);
  put(kNote + 8, NT_GNU_BUILD_ID, 4);
  std::memcpy(f.data() + kNote + 12, "GNU\0buildid!", 12);
  const std::uint64_t dynamic[4][2] = {{DT_STRTAB, kStrings}, {DT_STRSZ, 16}, {DT_SONAME, 1}, {DT_NULL, 0}};
  for (std::size_t i = 0; i < 4; ++i) {
    put(kDynamic + i * 16, dynamic[i][0], 8);
    put(kDynamic + i * 16 + 8, dynamic[i][1], 8);
  }
  std::memcpy(f.data() + kStrings + 1, "libnvrtc.so.13", 14);
  return f;
}

std::string le64s(std::initializer_list<std::uint64_t> values) {
  std::string out;
  for (const std::uint64_t v : values) {
    char bytes[8];
    util::store_le(bytes, v, 8);
    out.append(bytes, 8);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_seed_corpus DIR\n");
    return 2;
  }
  const Corpus corpus{argv[1]};
  const std::string dir = temp_directory();

  // An nvJitLink link (the NUL past an empty error log, no LTO-IR getter) and a libNVVM compile.
  core::HandleEntry link;
  link.library = core::JitLibrary::nvjitlink;
  link.outputs = {{0, true, 4, 0,
                   "\x7f"
                   "ELF",
                   true},
                  {3, false, 0, 3, "", true},
                  core::unavailable_output(),
                  {0, true, 0, 0, std::string(1, '\0'), true},
                  {0, true, 3, 0, std::string("ok\0", 3), true}};
  link.description = {{"-arch=sm_90", "-lto"}, {"a", "b"}, 100, std::nullopt};
  corpus.add_framed("handle_entry", "link", core::encode_handle_entry(link));
  core::HandleEntry nvvm;
  nvvm.library = core::JitLibrary::nvvm;
  nvvm.rc = 9;
  nvvm.outputs = {{0, true, 1, 0, std::string(1, '\0'), true}, {0, true, 6, 0, "error\0", true}};
  corpus.add_framed("handle_entry", "nvvm", core::encode_handle_entry(nvvm));
  corpus.add("api_entry", "empty", api::encode_api_entry("", ""));
  corpus.add("api_entry", "cubin",
             api::encode_api_entry(std::string(32, '\x5a'),
                                   "\x7f"
                                   "ELF cubin bytes"));

  int i = 0;
  for (const auto& e : entries()) {
    const std::string encoded = core::encode_entry(e);
    corpus.add_framed("entry", "entry-" + std::to_string(i), encoded);
    // Compressed (core/entry_compression.h) where that saves space: as stored, and as the fuzzer's
    // third reading takes it (the declared size, then the zstd frame).
    const std::string compressed = core::compress_entry(encoded, 1);
    if (core::is_compressed_entry(compressed)) {
      corpus.add_framed("entry", "compressed-" + std::to_string(i), compressed);
      corpus.add("entry", "zstd-" + std::to_string(i),
                 compressed.substr(8, 8) + compressed.substr(24, compressed.size() - 24 - 8));
    }
    const std::string key = "R" + std::string(32, static_cast<char>('a' + i));
    corpus.add("envelope", "entry-" + std::to_string(i),
               std::string(1, static_cast<char>(key.size())) + key + store::wrap_value(key, encoded));
    // Sealed for a shared tier, unsigned and signed (bit 7 of the first byte: a secret is configured).
    const store::remote::Secret secret = store::remote::secret_from_bytes("fuzzing secret");
    corpus.add("sealed_value", "unsigned-" + std::to_string(i),
               std::string(1, static_cast<char>(key.size())) + key + store::remote::seal_value(key, encoded, nullptr));
    corpus.add(
        "sealed_value", "signed-" + std::to_string(i++),
        std::string(1, static_cast<char>(0x80 | key.size())) + key + store::remote::seal_value(key, encoded, &secret));
  }

  // Archives of those entries, unsigned and signed: compressed as written (mode byte 0 / 2), and
  // decompressed (mode 1 / 3: the target compresses them again); pieces of 7 bytes for mode 28+.
  for (int signed_archive = 0; signed_archive < 2; ++signed_archive) {
    const store::remote::Secret secret = store::remote::secret_from_bytes("fuzzing secret");
    std::string archive;
    store::archive::ArchiveWriter writer([&](std::string_view b) { return archive.append(b), true; },
                                         signed_archive ? &secret : nullptr);
    int n = 0;
    for (const auto& e : entries()) {
      store::archive::ArchiveRecord r;
      r.key = "R" + std::string(32, static_cast<char>('a' + n++));
      r.payload = core::encode_entry(e);
      r.program_name = "kernel.cu";
      r.created = 1'700'000'000;
      r.last_used = 1'700'000'060;
      writer.add(r);
    }
    writer.finish();
    std::string plain(1u << 20, '\0');
    const std::size_t size = ZSTD_decompress(plain.data(), plain.size(), archive.data(), archive.size());
    plain.resize(ZSTD_isError(size) ? 0 : size);
    const char mode = static_cast<char>(signed_archive ? 2 : 0);
    corpus.add("archive", "compressed-" + std::to_string(signed_archive), std::string(1, mode) + archive);
    corpus.add("archive", "plain-" + std::to_string(signed_archive),
               std::string(1, static_cast<char>(mode | 1)) + plain);
    corpus.add("archive", "pieces-" + std::to_string(signed_archive),
               std::string(1, static_cast<char>(mode | 1 | (7 << 2))) + plain);
  }

  const direct::DependencySet set = recorded_set(dir);
  util::ByteWriter set_bytes;
  set.encode(set_bytes);
  corpus.add("dependency_set", "recorded", set_bytes.str());
  corpus.add("dependency_set", "empty", std::string(24, '\0'));
  direct::Manifest manifest;
  manifest.add({keying::CacheKey{1}, set});
  manifest.add({keying::CacheKey{2}, {}});
  const std::string manifest_bytes = direct::encode_manifest(manifest);
  corpus.add_framed("manifest", "recorded", manifest_bytes);
  corpus.add_framed("manifest", "empty", direct::encode_manifest({}));
  core::CompileRecord record;
  record.library_path = "/usr/local/cuda/lib64/libnvrtc.so.13";
  record.inputs.library = {13, 0, "build-id"};
  record.inputs.name = "k.cu";
  record.inputs.source = "#include \"a.h\"\n__global__ void k() {}\n";
  record.inputs.headers = {{"b.h", "#define B 1\n"}};
  record.inputs.options = {"-arch=sm_80", "-I/inc"};
  record.inputs.name_expressions = {"k"};
  record.inputs.working_directory = "/work";
  record.dependencies = set;
  const std::string record_bytes = core::encode_record(record);
  corpus.add("record", "two-records", record_bytes + record_bytes);
  corpus.add("record", "torn", record_bytes + record_bytes.substr(0, record_bytes.size() / 2));
  // A link (an input added by path, one with a NULL name) and an NVVM compile (a lazy module, a
  // verification), beside NVRTC's compile as a recording holds them.
  core::HandleCallRecord link_record;
  link_record.library = core::JitLibrary::nvjitlink;
  link_record.library_path = "/usr/local/cuda/lib64/libnvJitLink.so.13";
  link_record.working_directory = "/work";
  link_record.inputs.library = {13, 0, "build-id"};
  link_record.inputs.options = {"-arch=sm_90", "-lto"};
  link_record.inputs.inputs = {
      {3, false, "input0", "LTO-IR"}, {2, true, "callee.ptx", ".version 9.0\n"}, {4, false, std::nullopt, "fatbin"}};
  core::HandleCallRecord nvvm_record = link_record;
  nvvm_record.library = core::JitLibrary::nvvm;
  nvvm_record.library_path = "/usr/local/cuda/nvvm/lib64/libnvvm.so.4";
  nvvm_record.inputs.options = {"-arch=compute_90", "-gen-lto"};
  nvvm_record.inputs.inputs = {{core::kNvvmModule, false, "module0", "target triple = \"nvptx64-nvidia-cuda\"\n"},
                               {core::kNvvmLazyModule, false, "libscale", "define float @scale(float %v)"},
                               {core::kNvvmVerification, false, std::nullopt, std::string("-arch=compute_90\0", 17)}};
  const std::string link_bytes = core::encode_handle_record(link_record);
  const std::string nvvm_bytes = core::encode_handle_record(nvvm_record);
  corpus.add("record", "pipeline", record_bytes + link_bytes + nvvm_bytes);
  corpus.add("record", "torn-link", record_bytes + link_bytes.substr(0, link_bytes.size() / 2) + nvvm_bytes);
  const std::string manifest_key = "M" + std::string(32, 'm');
  corpus.add("envelope", "manifest",
             std::string(1, static_cast<char>(manifest_key.size())) + manifest_key +
                 store::wrap_value(manifest_key, manifest_bytes));

  char access[store::kAccessRecordSize];
  store::encode_access({4096, 1'700'000'000, 1'700'000'060}, access);
  corpus.add("access_record", "access", std::string(access, sizeof access));
  corpus.add("access_record", "counter", le64s({12345}));

  // A real store's first pages: both meta pages.
  {
    store::LmdbOptions options;
    options.directory = dir + "/store";
    options.map_size_bytes = 16 << 20;
    store::Status status;
    auto lmdb = store::LmdbStore::open(options, &status);
    if (!lmdb) {
      std::fprintf(stderr, "fuzz_seed_corpus: %s\n", status.message().c_str());
      return 1;
    }
    for (int k = 0; k < 20; ++k) (void)lmdb->put("key" + std::to_string(k), std::string(100u * k, 'v'));
  }
  std::ifstream data(dir + "/store/data.mdb", std::ios::binary);
  std::string pages(8192, '\0');
  data.read(pages.data(), static_cast<std::streamsize>(pages.size()));
  corpus.add("lmdb_layout", "meta0", pages.substr(0, 4096));
  corpus.add("lmdb_layout", "meta1", pages.substr(4096, 4096));
  corpus.add("lmdb_layout", "free_list", le64s({100, 3, 9, 7, 3}));
  std::string overflow(store::kLmdbPageHeaderSize, '\0');
  overflow[10] = 0x04;
  overflow[12] = 2;
  corpus.add("lmdb_layout", "overflow", overflow + le64s({5000, 4096}));
  // Redis replies the tier reads (first byte: the bulk cap's exponent, 16 = 64 KiB).
  corpus.add("resp_reply", "set-ok", std::string("\x10+OK\r\n"));
  corpus.add("resp_reply", "get-hit", std::string("\x10$5\r\nhello\r\n:1\r\n"));
  corpus.add("resp_reply", "get-nil", std::string("\x10$-1\r\n"));
  corpus.add("resp_reply", "errors",
             std::string("\x10-NOAUTH Authentication required.\r\n-OOM command not allowed\r\n"));
  corpus.add("resp_reply", "over-cap", std::string("\x04$4096\r\n") + std::string(4096, 'v') + "\r\n");
  corpus.add("resp_reply", "array", std::string("\x10*2\r\n$1\r\nx\r\n:7\r\n"));
  corpus.add("http_response", "get-hit", std::string("\x10\x07HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"));
  corpus.add("http_response", "miss", std::string("\x10\x40HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"));
  corpus.add("http_response", "head", std::string("\x90\x03HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n"));
  corpus.add("http_response", "chunked",
             std::string("\x10\x02HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"));
  corpus.add("http_response", "redirect",
             std::string("\x10\x09HTTP/1.1 301 Moved\r\nLocation: http://x/\r\nContent-Length: 0\r\n\r\n"));
  corpus.add("http_response", "to-close", std::string("\x10\x11HTTP/1.0 200 OK\r\n\r\nbody until close"));
  corpus.add("http_response", "over-cap",
             std::string("\x04\x20HTTP/1.1 200 OK\r\nContent-Length: 4096\r\n\r\n") + std::string(4096, 'v'));

  corpus.add("elf_identity", "minimal", minimal_shared_object());
  {
    std::ifstream self("/proc/self/exe", std::ios::binary);
    std::stringstream bytes;
    bytes << self.rdbuf();
    corpus.add("elf_identity", "this-executable", bytes.str().substr(0, 65536));
  }
  corpus.add("pe_identity", "minimal-dll", testing::minimal_pe_dll());
  corpus.add("pe_identity", "no-export-name", testing::minimal_pe_dll({.export_name = ""}));
  // Texts for the program-name scan ('\x01' between the source, a header and a -D macro): a header
  // macro that reaches __FILE__, libcu++'s source_location default argument and its call, literals
  // and comments hiding names, an unterminated directive.
  corpus.add("program_name_scan", "macro-reaching-file",
             std::string("#include \"h.h\"\n__global__ void k() { const char* f = WHERE; }\n\x01"
                         "#define WHERE HERE2\n#define HERE2 __FILE__\n\x01"
                         "UNUSED=1"));
  corpus.add("program_name_scan", "source-location",
             std::string("auto l = cuda::std::source_location::current();\n\x01"
                         "struct source_location { static constexpr source_location current(const char* f = "
                         "__builtin_FILE()) noexcept; };\n"));
  corpus.add("program_name_scan", "hidden-in-literals",
             std::string("/* __FILE__ */ const char* s = \"__BASE_FILE__\"; // assert(x)\n\x01"
                         "#define A R\"x(__FILE__)x\"\n\x01"
                         "HERE=__FILE__"));
  corpus.add("program_name_scan", "unterminated", std::string("#define X \\\n/* open comment\n\x01\"open literal"));
  fs::remove_all(dir);
  return 0;
}
