#!/usr/bin/env python3
# validation/probes/framework.py — what a framework costs around the kernels,
# measured with PyTorch on one GPU. Not part of the build: fabricsim is C and
# never runs this; it is how the figures under validation/results/framework-*
# were made, kept so that anyone with a GPU and PyTorch can make them again.
#
#   python3 validation/probes/framework.py OUT.json [--quick] [--single]
#
# Sections (each saved to OUT.json as soon as it is done; a section that
# fails records its error and the others still run):
#   host_ops   host time per eager op on a one-element tensor (the GPU idle),
#              and the same ops replayed from a CUDA graph
#   graph_launch  host time of one CUDA graph launch by its node count
#   layer      a Llama-style block (RMSNorm, fused QKV, rotary, SDPA, output
#              projection, fused SwiGLU fc1, fc2, residuals) forward+backward,
#              eager, as one CUDA graph, and (tiny, small) one graph per
#              block forward and backward, at sizes from host-bound to
#              GPU-bound: wall per iteration, kernels per iteration (profiler),
#              GPU busy time per iteration
#   memory     memory-bound kernels (copy, add, RMSNorm, LayerNorm, SiLU, mul,
#              softmax, FP8 cast, transpose, amax, fused AdamW) by size: bytes
#              moved / kernel time
#   gemm       transformer GEMMs of the validated training runs in their three
#              layouts (forward, dgrad, wgrad), BF16, and FP8 forward
#   attention  SDPA (cuDNN and flash back ends) at the FlashAttention-3 paper's
#              setting (hidden 2048, 16k tokens) by head dim, length and mask,
#              forward and forward+backward; and by batch and heads at one length
# Timing: CUDA events around rounds of back-to-back calls (gpu_ms; --single:
# around each call, as the files made before 2026-11-28 08:00 UTC), median of
# repetitions after warm-up; host time with time.perf_counter. Exit status 0 when the file was
# written (sections may hold errors), 2 on usage or no GPU.
import json
import os
import platform
import statistics
import sys
import time
import traceback

if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
    sys.stderr.write("usage: framework.py OUT.json [--quick] [--single]\n")
    sys.exit(2)
OUT = sys.argv[1]
QUICK = "--quick" in sys.argv[2:]
SINGLE = "--single" in sys.argv[2:]

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

if not torch.cuda.is_available():
    sys.stderr.write("framework.py: no CUDA device found\n")
    sys.exit(2)

DEV = torch.device("cuda")
BF16 = torch.bfloat16
T_START = time.perf_counter()

result = {
    "schema": "fabricsim-framework-probe/1",
    "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    "environment": {
        "device": torch.cuda.get_device_name(0),
        "sm_count": torch.cuda.get_device_properties(0).multi_processor_count,
        "memory_bytes": torch.cuda.get_device_properties(0).total_memory,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
        "python": platform.python_version(),
        "cpu": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
        "kernel": platform.release(),
        "quick": QUICK,
        "timing": "single call per event pair" if SINGLE else "rounds of back-to-back calls per event pair",
    },
    "sections": {},
}


def save():
    tmp = OUT + ".tmp"
    with open(tmp, "w") as f:
        json.dump(result, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, OUT)


def section(name):
    def wrap(fn):
        t0 = time.perf_counter()
        try:
            data = fn()
            data["elapsed_s"] = round(time.perf_counter() - t0, 2)
        except Exception as e:  # record and go on
            data = {"error": "%s: %s" % (type(e).__name__, e),
                    "trace": traceback.format_exc()[-2000:],
                    "elapsed_s": round(time.perf_counter() - t0, 2)}
        result["sections"][name] = data
        save()
        print("section %s done in %.1f s%s" % (name, data["elapsed_s"],
              " (error: %s)" % data["error"] if "error" in data else ""), flush=True)
        torch.cuda.empty_cache()
        return fn
    return wrap


def gpu_ms(fn, reps, warm=3):
    """Median, min and max milliseconds per call of fn() by CUDA events.

    Default: each repetition times a round of k calls issued back to back
    (k so that a round lasts about 2 ms, at most 64), so that the host's
    dispatch of the next call overlaps the GPU's work on this one; a call
    shorter than its host dispatch is then timed at the host's pace (it is
    launch-bound). With --single (how the files of be98bf5/e064244 were
    made): one event pair around each call, so each time includes the host
    dispatch of the call (tens of microseconds) while the GPU waits."""
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    k = 1
    if not SINGLE:
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        k = max(1, min(64, int(2.0 / max(a.elapsed_time(b), 1e-3)) + 1))
    times = []
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(k):
            fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) / k)
    return statistics.median(times), min(times), max(times)


def captured(warm, body, before=None):
    """A CUDA graph of body(), after three calls of warm() on a side stream
    (PyTorch's capture recipe: the warm-up allocates outside the graph) and
    then before(), if given, outside the capture."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            warm()
    torch.cuda.current_stream().wait_stream(s)
    if before is not None:
        before()
    gr = torch.cuda.CUDAGraph()
    with torch.cuda.graph(gr):
        body()
    return gr


def kernels_of(fn):
    """(kernels, memcpy/memset, GPU busy microseconds) of one call of fn, by the profiler."""
    from torch.profiler import ProfilerActivity, profile
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    n = 0
    copies = 0
    busy = 0.0
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            if e.name.startswith(("Memcpy", "Memset")):
                copies += 1
            else:
                n += 1
            busy += e.time_range.elapsed_us()
    return n, copies, busy


# ---------------------------------------------------------------- host_ops
@section("host_ops")
def host_ops():
    n = 2000 if QUICK else 20000
    x = torch.zeros(1, device=DEV, dtype=BF16)
    w = torch.randn(64, 64, device=DEV, dtype=BF16)
    v = torch.randn(1, 64, device=DEV, dtype=BF16)
    g = torch.ones(64, device=DEV, dtype=BF16)
    ops = {
        "add_inplace": lambda: x.add_(1),
        "add_new_tensor": lambda: x + 1,
        "linear_1x64x64": lambda: F.linear(v, w),
        "rms_norm_1x64": lambda: F.rms_norm(v, (64,), g),
        "silu_1x64": lambda: F.silu(v),
    }
    out = {"ops_per_loop": n, "ops": {}}
    for name, op in ops.items():
        for _ in range(200):
            op()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(n):
            op()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        t2 = time.perf_counter()
        # The same n launches from a CUDA graph: the GPU's own cost per op.
        graph_us = None
        try:
            m = min(n, 2000)
            gr = captured(op, lambda: [op() for _ in range(m)])
            med, _, _ = gpu_ms(gr.replay, 5, warm=2)
            graph_us = med * 1e3 / m
        except Exception as e:
            graph_us = "error: %s" % e
        out["ops"][name] = {
            "host_issue_us_per_op": (t1 - t0) * 1e6 / n,
            "wall_us_per_op": (t2 - t0) * 1e6 / n,
            "graph_replay_us_per_op": graph_us,
        }
    return out


# ---------------------------------------------------------------- graph_launch
@section("graph_launch")
def graph_launch():
    # Host time of one CUDA graph launch (g.replay()) by the graph's node
    # count, the replays issued back to back without waiting.
    x = torch.zeros(1, device=DEV, dtype=BF16)
    out = {"graphs": []}
    for nodes in (1, 8, 64, 512):
        gr = captured(lambda: x.add_(1), lambda: [x.add_(1) for _ in range(nodes)])
        reps = 2000 if nodes <= 64 else 200
        for _ in range(10):
            gr.replay()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(reps):
            gr.replay()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        t2 = time.perf_counter()
        out["graphs"].append({"nodes": nodes, "replays": reps,
                              "host_issue_us_per_replay": (t1 - t0) * 1e6 / reps,
                              "wall_us_per_replay": (t2 - t0) * 1e6 / reps})
        del gr
    return out


# ---------------------------------------------------------------- layer
class Block(torch.nn.Module):
    def __init__(self, h, heads, ffn):
        super().__init__()
        self.h, self.heads, self.hd = h, heads, h // heads
        self.n1 = torch.nn.RMSNorm(h)
        self.qkv = torch.nn.Linear(h, 3 * h, bias=False)
        self.proj = torch.nn.Linear(h, h, bias=False)
        self.n2 = torch.nn.RMSNorm(h)
        self.fc1 = torch.nn.Linear(h, 2 * ffn, bias=False)
        self.fc2 = torch.nn.Linear(ffn, h, bias=False)

    def rope(self, x, cos, sin):
        half = self.hd // 2
        x1, x2 = x[..., :half], x[..., half:]
        return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)

    def forward(self, x, cos, sin):
        b, t, h = x.shape
        y = self.qkv(self.n1(x)).view(b, t, 3, self.heads, self.hd).permute(2, 0, 3, 1, 4)
        q, k, v = y[0], y[1], y[2]
        q = self.rope(q, cos, sin)
        k = self.rope(k, cos, sin)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        a = a.transpose(1, 2).reshape(b, t, h)
        x = x + self.proj(a)
        gate, up = self.fc1(self.n2(x)).chunk(2, dim=-1)
        return x + self.fc2(F.silu(gate) * up)


class Stack(torch.nn.Module):
    def __init__(self, layers, h, heads, ffn, t):
        super().__init__()
        self.blocks = torch.nn.ModuleList(Block(h, heads, ffn) for _ in range(layers))
        hd = h // heads
        inv = 1.0 / (10000 ** (torch.arange(0, hd // 2, dtype=torch.float32) / (hd // 2)))
        ang = torch.outer(torch.arange(t, dtype=torch.float32), inv)
        self.register_buffer("cos", ang.cos().to(BF16), persistent=False)
        self.register_buffer("sin", ang.sin().to(BF16), persistent=False)

    def forward(self, x):
        for blk in self.blocks:
            x = blk(x, self.cos, self.sin)
        return x


@section("layer")
def layer():
    configs = [
        # name, layers, batch, seq, hidden, heads, ffn
        ("tiny", 8, 1, 128, 256, 4, 704),
        ("small", 8, 1, 512, 1024, 8, 2816),
        ("medium", 4, 1, 2048, 4096, 32, 11008),
    ]
    if not QUICK:
        configs.append(("large", 2, 1, 4096, 8192, 64, 28672))
    iters = 10 if QUICK else 40
    out = {"configs": {}}
    for name, L, b, t, h, heads, ffn in configs:
        torch.manual_seed(0)
        model = Stack(L, h, heads, ffn, t).to(DEV, BF16)
        params = list(model.parameters())
        x = torch.randn(b, t, h, device=DEV, dtype=BF16, requires_grad=False)

        def step():
            for p in params:
                p.grad = None
            loss = model(x).float().square().mean()
            loss.backward()

        rec = {"layers": L, "batch": b, "seq": t, "hidden": h, "heads": heads, "ffn": ffn}
        for _ in range(3):
            step()
        torch.cuda.synchronize()
        issue = []
        t0 = time.perf_counter()
        for _ in range(iters):
            a = time.perf_counter()
            step()
            issue.append(time.perf_counter() - a)
        torch.cuda.synchronize()
        rec["eager_wall_ms_per_iter"] = (time.perf_counter() - t0) * 1e3 / iters
        rec["eager_host_issue_ms_per_iter_median"] = statistics.median(issue) * 1e3
        n, copies, busy = kernels_of(step)
        rec["kernels_per_iter"] = n
        rec["memcpy_memset_per_iter"] = copies
        rec["gpu_busy_ms_per_iter"] = busy / 1e3
        # The same step captured as one CUDA graph (PyTorch's whole-network recipe).
        try:
            def no_grads():
                for p in params:
                    p.grad = None

            def fwd_bwd():
                model(x).float().square().mean().backward()

            gr = captured(step, fwd_bwd, before=no_grads)
            for _ in range(3):
                gr.replay()
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(iters):
                gr.replay()
            torch.cuda.synchronize()
            rec["graph_wall_ms_per_iter"] = (time.perf_counter() - t0) * 1e3 / iters
            del gr
        except Exception as e:
            rec["graph_error"] = "%s: %s" % (type(e).__name__, e)
        if name in ("tiny", "small"):
            # One graph per block, forward and backward (Megatron's per-layer
            # capture, as Transformer Engine's make_graphed_callables does).
            try:
                xs = torch.randn(b, t, h, device=DEV, dtype=BF16, requires_grad=True)
                graphed = [torch.cuda.make_graphed_callables(blk, (xs, model.cos, model.sin))
                           for blk in model.blocks]

                xg = x.detach().clone().requires_grad_(True)

                def gstep():
                    for p in params:
                        p.grad = None
                    y = xg
                    for gb in graphed:
                        y = gb(y, model.cos, model.sin)
                    y.float().square().mean().backward()
                for _ in range(3):
                    gstep()
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                for _ in range(iters):
                    gstep()
                torch.cuda.synchronize()
                rec["layer_graphs_wall_ms_per_iter"] = (time.perf_counter() - t0) * 1e3 / iters
                rec["layer_graphs_kernels_per_iter"] = kernels_of(gstep)[0]
                del graphed, xs, xg
            except Exception as e:
                rec["layer_graphs_error"] = "%s: %s" % (type(e).__name__, str(e)[:300])
        out["configs"][name] = rec
        del model, params, x
        torch.cuda.empty_cache()
        save()
    return out


# ---------------------------------------------------------------- memory
@section("memory")
def memory():
    h = 8192
    sizes = [1 << e for e in range(18, 29, 2 if QUICK else 1)]  # elements, 2^18..2^28
    reps = 10 if QUICK else 20
    out = {"row_width": h, "unit": "bytes read + written per kernel / median kernel time",
           "kernels": {}}

    def add(name, n, nbytes, fn):
        med, lo, hi = gpu_ms(fn, reps)
        out["kernels"].setdefault(name, []).append(
            {"elements": n, "bytes": nbytes, "median_us": med * 1e3,
             "min_us": lo * 1e3, "max_us": hi * 1e3, "GBps": nbytes / (med * 1e-3) / 1e9})

    for n in sizes:
        rows = n // h
        x = torch.randn(rows, h, device=DEV, dtype=BF16)
        y = torch.randn(rows, h, device=DEV, dtype=BF16)
        z = torch.empty_like(x)
        w = torch.ones(h, device=DEV, dtype=BF16)
        bb = torch.zeros(h, device=DEV, dtype=BF16)
        e2 = 2 * n
        add("copy", n, 2 * e2, lambda: z.copy_(x))
        add("add", n, 3 * e2, lambda: torch.add(x, y, out=z))
        add("rms_norm", n, 2 * e2, lambda: F.rms_norm(x, (h,), w))
        add("layer_norm", n, 2 * e2, lambda: F.layer_norm(x, (h,), w, bb))
        add("silu", n, 2 * e2, lambda: F.silu(x))
        add("mul", n, 3 * e2, lambda: torch.mul(x, y, out=z))
        add("softmax", n, 2 * e2, lambda: torch.softmax(x, dim=-1))
        add("cast_fp8", n, e2 + n, lambda: x.to(torch.float8_e4m3fn))
        add("transpose", n, 2 * e2, lambda: x.t().contiguous())
        add("amax", n, e2, lambda: torch.amax(x))
        del x, y, z
        p = torch.zeros(n, device=DEV, dtype=torch.float32, requires_grad=True)
        p.grad = torch.randn_like(p)
        opt = torch.optim.AdamW([p], lr=1e-4, fused=True)
        add("adamw_fused_fp32", n, 28 * n, opt.step)
        del p, opt
        torch.cuda.empty_cache()
    return out


# ---------------------------------------------------------------- gemm
@section("gemm")
def gemm():
    # (label, M tokens, N, K): forward y[M,N] = x[M,K] · W[N,K]^T.
    shapes = [
        ("square-4096", 4096, 4096, 4096),
        ("square-8192", 8192, 8192, 8192),
        ("llama3-8b-tp1-qkv", 8192, 6144, 4096),
        ("llama3-8b-tp1-fc1-fused", 8192, 28672, 4096),
        ("llama3-8b-tp1-fc2", 8192, 4096, 14336),
        ("llama3-70b-tp8-qkv", 8192, 1280, 8192),
        ("llama3-70b-tp8-proj", 8192, 8192, 1024),
        ("llama3-70b-tp8-fc1-fused", 8192, 7168, 8192),
        ("llama3-70b-tp8-fc1-half", 8192, 3584, 8192),
        ("llama3-70b-tp8-fc2", 8192, 8192, 3584),
        ("llama3-405b-tp8-fc1-fused", 8192, 13312, 16384),
        ("llama3-405b-tp8-fc1-half", 8192, 6656, 16384),
        ("gpt3-175b-tp8-qkv", 2048, 4608, 12288),
        ("gpt3-175b-tp8-fc1", 2048, 6144, 12288),
        ("gpt3-175b-tp8-fc2", 2048, 12288, 6144),
        ("nemotron4-340b-tp8-fc1", 4096, 9216, 18432),
    ]
    if QUICK:
        shapes = shapes[:4]
    reps = 8 if QUICK else 15
    out = {"layouts": {"fwd": "x[M,K] @ W[N,K]^T (F.linear)",
                       "dgrad": "dy[M,N] @ W[N,K]",
                       "wgrad": "dy[M,N]^T @ x[M,K]",
                       "fp8_fwd": "torch._scaled_mm, e4m3 x e4m3 -> bf16, tensor scales"},
           "shapes": []}
    for label, m, n, k in shapes:
        x = torch.randn(m, k, device=DEV, dtype=BF16)
        wt = torch.randn(n, k, device=DEV, dtype=BF16) / (k ** 0.5)
        dy = torch.randn(m, n, device=DEV, dtype=BF16)
        flops = 2.0 * m * n * k
        rec = {"label": label, "M": m, "N": n, "K": k}
        for lay, fn in (("fwd", lambda: F.linear(x, wt)),
                        ("dgrad", lambda: torch.matmul(dy, wt)),
                        ("wgrad", lambda: torch.matmul(dy.t(), x))):
            med, lo, hi = gpu_ms(fn, reps)
            rec[lay] = {"median_us": med * 1e3, "min_us": lo * 1e3, "max_us": hi * 1e3,
                        "TFLOPs": flops / (med * 1e-3) / 1e12}
        try:
            x8 = x.to(torch.float8_e4m3fn)
            w8 = wt.to(torch.float8_e4m3fn)
            one = torch.ones((), device=DEV, dtype=torch.float32)
            fn = lambda: torch._scaled_mm(x8, w8.t(), scale_a=one, scale_b=one, out_dtype=BF16)  # noqa: E731
            med, lo, hi = gpu_ms(fn, reps)
            rec["fp8_fwd"] = {"median_us": med * 1e3, "min_us": lo * 1e3, "max_us": hi * 1e3,
                              "TFLOPs": flops / (med * 1e-3) / 1e12}
        except Exception as e:
            rec["fp8_fwd"] = {"error": "%s: %s" % (type(e).__name__, e)}
        out["shapes"].append(rec)
        del x, wt, dy
        save()
    return out


# ---------------------------------------------------------------- attention
@section("attention")
def attention():
    from torch.nn.attention import SDPBackend, sdpa_kernel
    backends = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION}
    hidden, tokens = 2048, 16384
    seqs = [512, 2048, 8192] if QUICK else [512, 1024, 2048, 4096, 8192, 16384]
    reps = 5 if QUICK else 10
    out = {"setting": "FlashAttention-3 paper: hidden 2048, batch = 16384 / seq, heads = 2048 / head_dim, bf16",
           "flops": "forward 4*b*h*s*s*d (halved when causal); backward 2.5 x forward",
           "runs": []}

    def run(be_name, b, heads, s, d, causal):
        q = torch.randn(b, heads, s, d, device=DEV, dtype=BF16, requires_grad=True)
        k = torch.randn_like(q, requires_grad=True)
        v = torch.randn_like(q, requires_grad=True)
        fl = 4.0 * b * heads * s * s * d * (0.5 if causal else 1.0)
        rec = {"backend": be_name, "batch": b, "heads": heads, "seq": s, "head_dim": d,
               "causal": causal}
        try:
            with sdpa_kernel(backends[be_name]):
                med, _, _ = gpu_ms(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal), reps)
                rec["fwd_us"] = med * 1e3
                rec["fwd_TFLOPs"] = fl / (med * 1e-3) / 1e12
                o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                go = torch.randn_like(o)

                def bwd():
                    torch.autograd.grad(o, (q, k, v), go, retain_graph=True)
                med, _, _ = gpu_ms(bwd, reps)
                rec["bwd_us"] = med * 1e3
                rec["bwd_TFLOPs"] = 2.5 * fl / (med * 1e-3) / 1e12
        except Exception as e:
            rec["error"] = "%s: %s" % (type(e).__name__, str(e)[:300])
        out["runs"].append(rec)

    for be_name in backends:
        for d in (64, 128, 256):
            for s in seqs:
                for causal in (False, True):
                    run(be_name, tokens // s, hidden // d, s, d, causal)
        save()
    if not QUICK:
        for b, heads in ((1, 16), (2, 16), (8, 16), (2, 32), (2, 64), (2, 8)):
            run("cudnn", b, heads, 4096, 128, True)
    return out


result["total_s"] = round(time.perf_counter() - T_START, 1)
save()
print("wrote %s in %.1f s" % (OUT, result["total_s"]))
