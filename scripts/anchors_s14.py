"""PyTorch anchors for one device call, in one process (one torch import): the device copy,
torch.softmax at 16384x4096 f32 (as anchors_torch.py), decode-shaped `a @ b` (TF32 off),
SDPA (flash, mem-efficient and cuDNN
backends) at B4 H32 S4096 D128/D64 f16/bf16 causal and not, and eager F.rms_norm / F.layer_norm
/ residual add + rms_norm at the shapes cubeport's norm cases time (as anchors_beyond.py, eager
only: torch.compile's compile time does not fit a short call). CUDA events, medians.
    python3 scripts/anchors_s14.py"""
import torch, torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend
from torch_timing import ev

D = "cuda"


print(torch.__version__, torch.cuda.get_device_name(), flush=True)
x = torch.empty(2 << 28, device=D); y = torch.empty_like(x)
t = ev(lambda: y.copy_(x)); print(f"copy_2GiB {x.numel() * 8 / t / 1e9:.0f} GB/s", flush=True)
del x, y
s = torch.randn(16384, 4096, device=D)
t = ev(lambda: torch.softmax(s, dim=-1), reps=30)
print(f"softmax_16384x4096_f32 {t * 1e6:.1f} us {2 * s.numel() * 4 / t / 1e9:.0f} GB/s", flush=True)
del s
torch.backends.cuda.matmul.allow_tf32 = False
for dt in (torch.float32, torch.float16, torch.bfloat16):
    for (m, n, k) in [(1, 4096, 4096), (8, 4096, 4096), (16, 4096, 4096), (64, 4096, 4096), (1, 50257, 4096), (4, 14336, 4096)]:
        a = torch.randn(m, k, device=D, dtype=dt); bm = torch.randn(k, n, device=D, dtype=dt)
        t = ev(lambda: a @ bm, reps=50)
        nbytes = (m * k + k * n + m * n) * a.element_size()
        print(f"mm {m}x{n}x{k} {str(dt)[6:]} {t * 1e6:.1f} us {nbytes / t / 1e9:.0f} GB/s {2 * m * n * k / t / 1e12:.2f} TFLOP/s", flush=True)
        del a, bm
for (b, h, n, dh) in [(4, 32, 4096, 128), (4, 32, 4096, 64)]:
    for dt in (torch.float16, torch.bfloat16):
        q, k, v = (torch.randn(b, h, n, dh, device=D, dtype=dt) for _ in range(3))
        for causal in (False, True):
            flops = 4 * b * h * n * n * dh * (0.5 if causal else 1.0)
            for name, be in [("flash", SDPBackend.FLASH_ATTENTION), ("efficient", SDPBackend.EFFICIENT_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION)]:
                try:
                    with sdpa_kernel(be):
                        t = ev(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal), reps=10)
                    print(f"sdpa_{name} B{b} H{h} S{n} D{dh} {str(dt)[6:]} causal={causal} {t * 1e3:.3f} ms {flops / t / 1e12:.1f} TFLOP/s", flush=True)
                except Exception as e:
                    print(f"sdpa_{name} B{b} H{h} S{n} D{dh} {str(dt)[6:]} causal={causal} unavailable: {str(e)[:80]}", flush=True)
        del q, k, v
for (r, c) in [(16384, 4096), (262144, 256), (4096, 16384), (1024, 65536)]:
    for dt in (torch.float32, torch.float16, torch.bfloat16):
        x = torch.randn(r, c, device=D, dtype=dt); w = torch.randn(c, device=D, dtype=dt)
        bb = torch.randn(c, device=D, dtype=dt); res = torch.randn(r, c, device=D, dtype=dt)
        by = 2 * x.numel() * x.element_size()
        cases = [("rms_norm_eager", lambda: F.rms_norm(x, (c,), w, 1e-5), by),
                 ("layer_norm_eager", lambda: F.layer_norm(x, (c,), w, bb, 1e-5), by)]
        if (r, c) == (16384, 4096):
            def add_rms(x=x, res=res, w=w):
                hh = x + res
                return hh, F.rms_norm(hh, (c,), w, 1e-5)
            cases.append(("add_rms_norm_eager", add_rms, 2 * by))
        for name, fn, nbytes in cases:
            t = ev(fn)
            print(f"{name} {r}x{c} {str(dt)[6:]} {t * 1e6:.1f} us {nbytes / t / 1e9:.0f} GB/s", flush=True)
        del x, w, bb, res
