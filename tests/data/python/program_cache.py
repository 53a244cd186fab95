"""nvrtc_cache.ProgramCache against cuda.core's ProgramCacheResource contract and Program.compile,
one scenario per run (tests/integration/program_cache_test.cc runs them, each in fresh processes):

  program_cache.py contract DIR                 the ABC's contract, point by point
  program_cache.py compile DIR OUT [SETTINGS]   Program.compile("cubin", cache=) of the test kernels;
                                                 writes each cubin to OUT.<n>, prints "hits N misses M"
  program_cache.py plain OUT                    the same compiles without a cache (the reference)
  program_cache.py writers DIR                  16 processes writing and reading one key and many keys
  program_cache.py eviction DIR                 max_size_bytes: LRU eviction, as cuda.core's backends
  program_cache.py threads DIR                  8 threads on one cache, then close() while in use

Exits 0 and prints "ok" (or the counts) on success; an AssertionError otherwise.
"""
import hashlib
import multiprocessing
import os
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
    else:
        raise SystemExit(f"unknown scenario {scenario}")


if __name__ == "__main__":
    main()
