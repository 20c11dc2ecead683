"""PyTorch anchors for the norms alone (anchors_beyond.py times attention first): F.rms_norm and
F.layer_norm eager, 16384 x 4096 and 4096 x 16384, every dtype, CUDA events, medians; bytes are
the input read and the output written.   python3 scripts/anchors_norm.py"""
import torch, torch.nn.functional as F
from torch_timing import ev
print(torch.__version__, torch.cuda.get_device_name())
for (r, c) in [(16384, 4096), (4096, 16384)]:
    for dt in (torch.float32, torch.float16, torch.bfloat16):
        x = torch.randn(r, c, device="cuda", dtype=dt); w = torch.randn(c, device="cuda", dtype=dt); b = torch.randn(c, device="cuda", dtype=dt)
        by = 2 * x.numel() * x.element_size()
        for name, fn in [("rms_norm_eager", lambda: F.rms_norm(x, (c,), w, 1e-6)), ("layer_norm_eager", lambda: F.layer_norm(x, (c,), w, b, 1e-5)), ("copy", lambda: x.clone())]:
            t = ev(fn)
            print(f"{name} {r}x{c} {str(dt)[6:]} {t*1e6:.1f} us {by/t/1e9:.0f} GB/s", flush=True)
