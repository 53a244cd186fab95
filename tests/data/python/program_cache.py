"""nvrtc_cache.ProgramCache against cuda.core's ProgramCacheResource contract and Program.compile,
one scenario per run (tests/integration/program_cache_test.cc runs them, each in fresh processes):

  program_cache.py contract DIR                 the ABC's contract, point by point
  program_cache.py compile DIR OUT [SETTINGS]   Program.compile("cubin", cache=) of the test kernels;
                                                 writes each cubin to OUT.<n>, prints "hits N misses M"
  program_cache.py plain OUT                    the same compiles without a cache (the reference)
  program_cache.py writers DIR                  16 processes writing and reading one key and many keys
  program_cache.py eviction DIR                 max_size_bytes: LRU eviction, as cuda.core's backends
  program_cache.py threads DIR                  8 threads on one cache, then close() while in use
  program_cache.py settings DIR                 bad settings refused at open; unreachable tiers fail open

Exits 0 and prints "ok" (or the counts) on success; an AssertionError otherwise.
"""
import hashlib
import multiprocessing
import os
import pathlib
import sys
import tempfile
import threading

import nvrtc_cache

SOURCES = [
    'extern "C" __global__ void scale(float* x, float a) { x[threadIdx.x] *= a; }',
    "template <typename T> __device__ T sq(T v) { return v * v; }\n"
    'extern "C" __global__ void poly(double* x) { x[threadIdx.x] = sq(x[threadIdx.x]) + 1.0; }',
    'extern "C" __global__ void axpy(float a, const float* x, float* y) { y[threadIdx.x] += a * x[threadIdx.x]; }',
]


def compile_all(cache, out):
    from cuda.core import Program, ProgramOptions

    for n, source in enumerate(SOURCES):
        program = Program(source, "c++", options=ProgramOptions(arch="sm_80", std="c++17"))
        kwargs = {"cache": cache} if cache is not None else {}
        code = program.compile("cubin", **kwargs)
        program.close()
        data = bytes(code.code)
        assert data[:4] == b"\x7fELF", data[:16]
        with open(f"{out}.{n}", "wb") as f:
            f.write(data)


def contract(directory):
    from cuda.core import ObjectCode
    from cuda.core.utils import ProgramCacheResource

    cache = nvrtc_cache.ProgramCache(directory)
    assert isinstance(cache, ProgramCacheResource)
    assert not hasattr(cache, "__contains__") or "__contains__" not in type(cache).__dict__
    # __getitem__: bytes on a hit, KeyError (carrying the key) on a miss.
    try:
        cache[b"absent"]
        raise AssertionError("a miss must raise KeyError")
    except KeyError as e:
        assert e.args == (b"absent",), e.args
    # __setitem__: bytes, bytearray, memoryview; str keys are their UTF-8 bytes.
    cache[b"b"] = b"\x00bytes\xff"
    cache[b"ba"] = bytearray(b"bytearray")
    cache[b"mv"] = memoryview(b"xxmemoryviewxx")[2:-2]
    assert cache[b"b"] == b"\x00bytes\xff" and type(cache[b"b"]) is bytes
    assert cache[b"ba"] == b"bytearray" and type(cache[b"ba"]) is bytes
    assert cache[b"mv"] == b"memoryview"
    cache["clé"] = b"str key"
    assert cache["clé".encode("utf-8")] == b"str key"
    assert cache["clé"] == b"str key"
    cache[bytearray(b"bk")] = b"bytearray key"
    assert cache[b"bk"] == b"bytearray key"
    # Keys of any length, matched exactly; empty keys and values.
    long_key = b"k" * (1 << 20)
    cache[long_key] = b"long"
    cache[long_key + b"!"] = b"longer"
    assert cache[long_key] == b"long" and cache[long_key + b"!"] == b"longer"
    cache[b""] = b""
    assert cache[b""] == b""
    big = os.urandom(8 << 20)
    cache[b"big"] = big
    assert cache[b"big"] == big
    # Replacing.
    cache[b"b"] = b"second"
    assert cache[b"b"] == b"second"
    # Bad types: TypeError, nothing stored.
    for bad_key in (1, None, 1.5, ("t",)):
        try:
            cache[bad_key] = b"v"
            raise AssertionError(f"key {bad_key!r} must be refused")
        except TypeError:
            pass
    for bad_value in ("str value", 1, None, [1]):
        try:
            cache[b"badv"] = bad_value
            raise AssertionError(f"value {bad_value!r} must be refused")
        except TypeError:
            pass
    assert cache.get(b"badv") is None
    # ObjectCode: bytes-backed and path-backed (read at write time).
    cache[b"oc"] = ObjectCode.from_cubin(b"\x7fELF-cubin-bytes")
    assert cache[b"oc"] == b"\x7fELF-cubin-bytes"
    with tempfile.TemporaryDirectory() as scratch:
        path = os.path.join(scratch, "k.cubin")
        with open(path, "wb") as f:
            f.write(b"\x7fELF-from-file")
        code = ObjectCode.from_cubin(path)
        cache[b"path"] = code
        with open(path, "wb") as f:
            f.write(b"changed after the write")
        assert cache[b"path"] == b"\x7fELF-from-file"
        os.unlink(path)
        try:
            cache[b"gone"] = code
            raise AssertionError("a path-backed ObjectCode whose file is gone must raise")
        except FileNotFoundError as e:
            assert path in str(e)
    # get: value or default.
    assert cache.get(b"b") == b"second"
    assert cache.get(b"nope") is None and cache.get(b"nope", b"dflt") == b"dflt"
    # __len__, __delitem__ (KeyError when absent), update (mapping and pairs).
    n = len(cache)
    assert n == 11, n
    del cache[b"b"]
    assert len(cache) == n - 1 and cache.get(b"b") is None
    try:
        del cache[b"b"]
        raise AssertionError("deleting an absent key must raise KeyError")
    except KeyError:
        pass
    cache.update({b"u1": b"1", "u2": bytearray(b"2")})
    cache.update([(b"u3", memoryview(b"3")), ("u4", b"4")])
    assert [cache[k] for k in (b"u1", b"u2", b"u3", b"u4")] == [b"1", b"2", b"3", b"4"]
    # A second handle on the same directory sees the same entries.
    other = nvrtc_cache.ProgramCache(directory)
    assert other[b"u1"] == b"1" and len(other) == len(cache)
    other.close()
    # clear.
    cache.clear()
    assert len(cache) == 0 and cache.get(b"u1") is None
    # close, context manager, closed use.
    cache.close()
    cache.close()
    try:
        cache.get(b"x")
        raise AssertionError("a closed cache must refuse calls")
    except ValueError:
        pass
    with nvrtc_cache.ProgramCache(directory) as ctx:
        ctx[b"in"] = b"ctx"
    with nvrtc_cache.ProgramCache(directory) as ctx:
        assert ctx[b"in"] == b"ctx"
    # max_size_bytes: positive or None, as cuda.core's backends.
    for bad in (0, -1):
        try:
            nvrtc_cache.ProgramCache(directory, max_size_bytes=bad)
            raise AssertionError("max_size_bytes <= 0 must raise ValueError")
        except ValueError:
            pass
    # A setting the configuration does not know is an error, naming it.
    try:
        nvrtc_cache.ProgramCache(directory, settings={"remoet": "x"})
        raise AssertionError("an unknown setting must be refused")
    except nvrtc_cache.CacheError as e:
        assert "remoet" in str(e), str(e)
    print("ok")


def eviction(directory):
    cache = nvrtc_cache.ProgramCache(directory, max_size_bytes=10_000)
    assert cache.max_size_bytes == 10_000
    value = b"v" * 2000
    for i in range(4):
        cache[f"k{i}"] = value
    assert len(cache) == 4
    cache[b"k0"]  # k0 is now more recent than k1
    cache[b"k4"] = value  # over the cap: the least recently used (k1) goes
    assert cache.size_bytes() <= 10_000, cache.size_bytes()
    assert cache.get(b"k1") is None, "the least recently used entry must be evicted"
    assert cache.get(b"k0") == value, "a recently read entry must survive"
    assert cache.get(b"k4") == value
    # A value larger than the cap does not survive its own write (as cuda.core's backends).
    cache[b"huge"] = b"h" * 20_000
    assert cache.get(b"huge") is None
    assert cache.size_bytes() <= 10_000
    # Another process's writes count against the cap too.
    child = multiprocessing.get_context("spawn").Process(target=_fill, args=(directory, 10))
    child.start()
    child.join()
    assert child.exitcode == 0
    cache[b"last"] = value
    assert cache.size_bytes() <= 10_000, cache.size_bytes()
    assert cache.stats()["evictions"] > 0
    cache.close()
    print("ok")


def _fill(directory, n):
    with nvrtc_cache.ProgramCache(directory) as cache:
        for i in range(n):
            cache[f"other{i}"] = b"o" * 2000


def _writer(directory, index, rounds, barrier):
    barrier.wait()
    with nvrtc_cache.ProgramCache(directory) as cache:
        for r in range(rounds):
            # One key everyone writes: whatever a reader sees is one writer's whole value.
            cache[b"shared"] = _value(index, r)
            seen = cache.get(b"shared")
            assert seen is not None and _valid(seen), seen[:40]
            # Many keys: each process its own, read back exactly.
            key = f"p{index}-{r}".encode()
            cache[key] = _value(index, r)
            assert cache[key] == _value(index, r)


def _value(index, r):
    body = hashlib.sha256(f"{index}/{r}".encode()).digest() * (64 + index)
    return f"{index}/{r}:".encode() + body


def _valid(data):
    head, _, body = data.partition(b":")
    index, r = (int(x) for x in head.split(b"/"))
    return data == _value(index, r)


def writers(directory):
    processes, rounds = 16, 40
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(processes)
    children = [context.Process(target=_writer, args=(directory, i, rounds, barrier)) for i in range(processes)]
    for c in children:
        c.start()
    for c in children:
        c.join()
    assert all(c.exitcode == 0 for c in children), [c.exitcode for c in children]
    with nvrtc_cache.ProgramCache(directory) as cache:
        assert len(cache) == processes * rounds + 1, len(cache)
        for i in range(processes):
            for r in range(rounds):
                assert cache[f"p{i}-{r}".encode()] == _value(i, r)
        assert _valid(cache[b"shared"])
    print("ok")


def threads(directory):
    cache = nvrtc_cache.ProgramCache(directory)
    errors = []

    def work(t):
        try:
            for i in range(200):
                key = f"t{t}-{i % 20}"
                cache[key] = key.encode() * 10
                assert cache[key] == key.encode() * 10
                len(cache)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    workers = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert not errors, errors
    assert len(cache) == 160
    cache.close()
    print("ok")


def _refused(make, kind, named=""):
    """make() must raise `kind` (naming `named`), with no trace of what the shim would do instead."""
    try:
        make()
    except kind as e:
        assert named in str(e), (named, str(e))
        for tail in ("; ignored", "; using", "; skipped", "shared tiers are not used"):
            assert tail not in str(e), str(e)
        return e
    raise AssertionError(f"expected {kind.__name__} naming {named!r}")


def bad_settings(directory):
    secret_dir = tempfile.mkdtemp()
    secret = os.path.join(secret_dir, "secret")
    with open(secret, "wb") as f:
        f.write(os.urandom(32).hex().encode())
    os.chmod(secret, 0o600)
    tier = tempfile.mkdtemp()
    # Refused by the C API at open: InvalidArgumentError, both a ValueError and a CacheError, naming
    # the setting and its line; nothing is opened.
    for given, named in [
        ({"remoet": "redis://h:1"}, "unknown setting 'remoet'; did you mean 'remote'?"),
        ({"max_size": "lots"}, "settings:1: max_size='lots' is not a size"),
        ({"shared": "maybe"}, "shared='maybe' is not 0/1"),
        ({"remote": "redis-host:6379"}, "remote='redis-host:6379' is not a list of URLs"),
        ({"remote": "ftp://host/x"}, "remote (settings:1): the shared tier URL ftp://host/x has an unknown scheme"),
        ({"remote": "redis://"}, "has no host"),
        ({"cache_dir": "relative/dir"}, "cache_dir='relative/dir' is not an absolute path"),
        ({"remote_secret_file": "relative"}, "is not an absolute path"),
        ({"log": "debug"}, "'log' is a setting of the shim, which the C API does not use"),
        ({"disable": True}, "'disable' is a setting of the shim"),
        ({"remote": f"file://{tier}", "remote_secret_file": "/nonexistent/secret"},
         "remote_secret_file (settings:2) /nonexistent/secret: does not exist"),
        ("remote redis://h:1\n", "settings:1: 'remote redis://h:1' is not `key = value`"),
        ("# a comment\nremote =\n", "settings:2: 'remote' has no value"),
    ]:
        e = _refused(lambda: nvrtc_cache.ProgramCache(directory, settings=given), nvrtc_cache.InvalidArgumentError,
                     named)
        assert isinstance(e, ValueError) and isinstance(e, nvrtc_cache.CacheError), type(e).__mro__
        assert e.status == "NVRTC_CACHE_INVALID_ARGUMENT", e.status
    # Refused in Python before the C API sees them: a value that would add a line, a NUL, a key
    # that is not a name, a type that is not a setting's.
    for given, kind in [
        ({"remote": f"file://{tier}\ncache_dir = /tmp"}, ValueError),
        ({"remote": "redis://h:1\0x"}, ValueError),
        ("remote = redis://h:1\0x", ValueError),
        ({"remote = x": "y"}, ValueError),
        ({"remote": ""}, ValueError),
        ({"remote": None}, TypeError),
        ({"max_size": [1]}, TypeError),
        ({1: "x"}, TypeError),
        (b"remote = redis://h:1", TypeError),
        ([("remote", "redis://h:1")], TypeError),
    ]:
        _refused(lambda: nvrtc_cache.ProgramCache(directory, settings=given), kind)
    _refused(lambda: nvrtc_cache.ProgramCache(directory + "\0x"), ValueError, "NUL")
    _refused(lambda: nvrtc_cache.ProgramCache(""), ValueError, "empty")
    for bad in (1.5, "10", True):
        _refused(lambda: nvrtc_cache.ProgramCache(directory, max_size_bytes=bad), TypeError)
    _refused(lambda: nvrtc_cache.ProgramCache(directory, max_size_bytes=1 << 64), ValueError)
    # A bad setting of the environment (the configuration the shim would use) refuses too, naming
    # its variable; without the configuration it is not read. The shim's own settings there are the
    # shim's (not refused).
    os.environ["NVRTC_CACHE_REMOTE"] = "ftp://host/x"
    _refused(lambda: nvrtc_cache.ProgramCache(directory), nvrtc_cache.InvalidArgumentError, "NVRTC_CACHE_REMOTE")
    nvrtc_cache.ProgramCache(directory, use_configuration=False).close()
    del os.environ["NVRTC_CACHE_REMOTE"]
    os.environ["NVRTC_CACHE_LOG"] = "debug"
    nvrtc_cache.ProgramCache(directory).close()
    del os.environ["NVRTC_CACHE_LOG"]
    # Values as Python gives them: bools, numbers, paths.
    with nvrtc_cache.ProgramCache(directory, settings={"shared": False, "max_size": 2, "remote": f"file://{tier}",
                                                       "remote_secret_file": pathlib.Path(secret)}) as cache:
        assert cache.stats()["shared_tiers"] == 1
        cache[b"k"] = b"v"
        assert cache.flush(5.0)
    with nvrtc_cache.ProgramCache(os.path.join(directory, "node-b"),
                                  settings=f"remote = file://{tier}\nremote_secret_file = {secret}\n") as cache:
        assert cache[b"k"] == b"v"  # through the file tier, its MAC checked
    # A secret file others may read is used (the shim warns about it): not refused.
    os.chmod(secret, 0o644)
    with nvrtc_cache.ProgramCache(directory, settings={"remote": f"file://{tier}", "remote_secret_file": secret}):
        pass
    # Fail-open: a shared tier that cannot be reached is no error; the cache works on its local store.
    for unreachable in ("redis://127.0.0.1:1", "redis+unix:///nonexistent/redis.sock"):
        with nvrtc_cache.ProgramCache(os.path.join(directory, "alone"), settings={"remote": unreachable}) as cache:
            assert cache.stats()["shared_tiers"] == 1
            cache[b"local"] = b"still stored"
            assert cache[b"local"] == b"still stored" and cache.get(b"absent") is None
    print("ok")


def main():
    scenario, args = sys.argv[1], sys.argv[2:]
    if scenario == "contract":
        contract(args[0])
    elif scenario == "compile":
        settings = args[2] if len(args) > 2 else None
        with nvrtc_cache.ProgramCache(args[0], settings=settings) as cache:
            compile_all(cache, args[1])
            stats = cache.stats()
            cache.flush(5.0)
        print(f"hits {stats['hits']} misses {stats['misses']} rejected {stats['rejected']}")
    elif scenario == "plain":
        compile_all(None, args[0])
        print("ok")
    elif scenario == "writers":
        writers(args[0])
    elif scenario == "eviction":
        eviction(args[0])
    elif scenario == "threads":
        threads(args[0])
    elif scenario == "settings":
        bad_settings(args[0])
    else:
        raise SystemExit(f"unknown scenario {scenario}")


if __name__ == "__main__":
    main()
