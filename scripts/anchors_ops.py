"""PyTorch anchors of cubeport's host-path figures, timed the way `cubeport bench` times them.

Ops: N calls back to back, then one synchronize (median of 3 batches of N); the same ops and
shapes as the bench's `ops` phase. Transfers: 256 MiB host->device from pageable and pinned
memory, device->host into pageable and pinned memory (median of 5). Writes anchors_ops.json to
$OUT when set.
"""
import json, os, sys, time
import torch
import torch.nn.functional as F

dev = "cuda"
N = int(os.environ.get("CALLS", "5000"))
res = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "ops": {}, "transfers": {}}
g = torch.Generator(device="cpu").manual_seed(7)


def rnd(*shape):
    return (torch.rand(*shape, generator=g) * 2 - 1).to(dev)


def per_op(fn):
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    samples = []
    for _ in range(3):
        t = time.perf_counter()
        for _ in range(N):
            fn()
        torch.cuda.synchronize()
        samples.append((time.perf_counter() - t) / N * 1e6)
    return sorted(samples)[1]


x1k, b1k, y1k = rnd(1024), rnd(1024), torch.empty(1024, device=dev)
x64k, b64k, y64k = rnd(64, 1024), rnd(1024), torch.empty(64, 1024, device=dev)
s, m = rnd(32, 128) * 4, rnd(64, 64)
cases = [
    ("add_into", "1024", lambda: torch.add(x1k, b1k, out=y1k)),
    ("add", "1024", lambda: x1k + b1k),
    ("add", "64x1024", lambda: x64k + b64k),
    ("add_into", "64x1024", lambda: torch.add(x64k, b64k, out=y64k)),
    ("bias_gelu", "1024", lambda: F.gelu(x1k + b1k, approximate="tanh")),
    ("bias_gelu", "64x1024", lambda: F.gelu(x64k + b64k, approximate="tanh")),
    ("softmax", "32x128", lambda: torch.softmax(s, dim=-1)),
    ("sum_rows", "64x1024", lambda: x64k.sum(dim=-1)),
    ("matmul", "64x64x64", lambda: m @ m),
]
for op, shape, fn in cases:
    us = per_op(fn)
    res["ops"][f"{op} {shape}"] = us
    print(f"torch op {op:10s} {shape:10s} {us:8.2f} us/op", flush=True)

nbytes = 256 << 20
n = nbytes // 4
host = torch.rand(n, generator=g)
pinned = host.pin_memory()
d = torch.empty(n, device=dev)


def rate(fn, reps=5):
    fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        torch.cuda.synchronize()
        t = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        ts.append(time.perf_counter() - t)
    return nbytes / sorted(ts)[reps // 2] / 1e9


res["transfers"]["h2d_pageable"] = rate(lambda: d.copy_(host))
res["transfers"]["h2d_pinned"] = rate(lambda: d.copy_(pinned, non_blocking=True))
res["transfers"]["h2d_pageable_new_tensor"] = rate(lambda: host.to(dev))
res["transfers"]["d2h_pageable"] = rate(lambda: d.cpu())
res["transfers"]["d2h_pinned"] = rate(lambda: pinned.copy_(d, non_blocking=True))
for k, v in res["transfers"].items():
    print(f"torch transfer {k:26s} {v:7.2f} GB/s (256 MiB)", flush=True)
if os.environ.get("OUT"):
    json.dump(res, open(os.path.join(os.environ["OUT"], "anchors_ops.json"), "w"), indent=1)
