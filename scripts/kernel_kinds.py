"""One layer's profiled kernels, by phase and kind: what scripts/measure-gpu
(--only=kernels) and scripts/eager-breakdown both sum from torch.profiler
traces in Chrome format.

Kinds: gemm (cuBLAS multiplies: nvjet, gemm, cutlass, xmma kernels);
attention (the fused attention kernels, flash and fmha, and the helpers
cuDNN's attention backward runs with them: dot(dO, O), the dQ cast);
elementwise (everything else: norms, activations, dropout, casts, adds,
reductions for bias gradients, memsets)."""
import re

KINDS = ("gemm", "attention", "elementwise")


def kind(name):
    n = name.lower()
    if re.search(r"flash|fmha|compute_dot_do_o|convert_dq", n):
        return "attention"
    if re.search(r"nvjet|gemm|xmma|cutlass", n):
        return "gemm"
    return "elementwise"


def phases(events, rep=1):
    """Repetition rep's kernels: the forward's inside its FORWARD annotation
    on the device, the backward's after it and before the next forward."""
    ann = sorted((e for e in events if e.get("cat") == "gpu_user_annotation" and e["name"] == "FORWARD"),
                 key=lambda e: e["ts"])
    ker = sorted((e for e in events if e.get("cat") in ("kernel", "gpu_memset", "gpu_memcpy")),
                 key=lambda e: e["ts"])
    a = ann[rep]
    end = ann[rep + 1]["ts"] if rep + 1 < len(ann) else float("inf")
    return {"forward": [k for k in ker if a["ts"] <= k["ts"] < a["ts"] + a["dur"]],
            "backward": [k for k in ker if a["ts"] + a["dur"] <= k["ts"] < end]}


def by_kind(kernels):
    """(kind, kernels, microseconds) for each kind."""
    out = []
    for kd in KINDS:
        sel = [k for k in kernels if kind(k["name"]) == kd]
        out.append((kd, len(sel), round(sum(k["dur"] for k in sel), 1)))
    return out
