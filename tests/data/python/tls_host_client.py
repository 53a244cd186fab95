"""A host that uses Python's own `ssl` while nvrtc-cache, preloaded, talks TLS to a rediss:// tier in the
same process (tests/integration/shim_redis_tls_test.cc). It exchanges AUTH and PING with the Redis TLS
port through `ssl` before, during (a thread, in a loop) and after compiling a few programs through ctypes,
and prints each compile's results and what its own TLS saw. Usage: tls_host_client.py PORT CA_FILE
PASSWORD, or tls_host_client.py --maps (compile one program, then say whether libssl is mapped)."""
import ctypes
import socket
import sys
import threading

nvrtc = ctypes.CDLL("libnvrtc.so.13")


def compile_one(n):
    src = b"__global__ void k%d(float* x) { x[threadIdx.x] += %d; }\n" % (n, n)
    prog = ctypes.c_void_p()
    assert nvrtc.nvrtcCreateProgram(ctypes.byref(prog), src, b"host.cu", 0, None, None) == 0
    opts = (ctypes.c_char_p * 1)(b"-arch=sm_80")
    rc = nvrtc.nvrtcCompileProgram(prog, 1, opts)
    size = ctypes.c_size_t()
    nvrtc.nvrtcGetPTXSize(prog, ctypes.byref(size))
    buf = ctypes.create_string_buffer(size.value)
    nvrtc.nvrtcGetPTX(prog, buf)
    nvrtc.nvrtcDestroyProgram(ctypes.byref(prog))
    print(f"compile {n} rc={rc} ptx={buf.raw.hex()}")


if sys.argv[1] == "--maps":
    compile_one(0)
    mapped = any("libssl" in line for line in open("/proc/self/maps"))
    print(f"libssl mapped: {'yes' if mapped else 'no'}")
    sys.exit(0)

import ssl  # noqa: E402 (after --maps: that mode must not load it)

port, ca_file, password = int(sys.argv[1]), sys.argv[2], sys.argv[3]
context = ssl.create_default_context(cafile=ca_file)


def host_exchange():
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
        with context.wrap_socket(raw, server_hostname="localhost") as tls:
            tls.sendall(b"AUTH %s\r\nPING\r\n" % password.encode())
            got = b""
            while got.count(b"\r\n") < 2:
                chunk = tls.recv(100)
                if not chunk:
                    break
                got += chunk
            return got


failures = []


def loop(stop):
    while not stop.is_set():
        got = host_exchange()
        if got != b"+OK\r\n+PONG\r\n":
            failures.append(got)


print(f"host tls before: {host_exchange()!r}")
stop = threading.Event()
thread = threading.Thread(target=loop, args=(stop,))
thread.start()
for n in range(1, 6):
    compile_one(n)
stop.set()
thread.join()
print(f"host tls during: {len(failures)} failures {failures[:1]!r}")
print(f"host tls after: {host_exchange()!r}")
sys.stdout.flush()
